"""pairwise-favour: a signed score relative to (a, b) whatever side the judge saw first, through
the real openai client against the test server; its size is the divergence in aggregate."""

from __future__ import annotations

import json
import re
from typing import Any

import polars as pl
import pytest

import pairwise_polars as pp

_AMOUNT = re.compile(r"Response (A|B):\n<<<\w+\n[^$]*\$([\d,]+)")


def _favour_judge(body: dict[str, Any]) -> dict[str, Any]:
    """A judge that reads the offers: the higher offer is the better treatment (6 or 0)."""
    user = body["messages"][-1]["content"]
    offers = {side: int(amount.replace(",", "")) for side, amount in _AMOUNT.findall(user)}
    a, b = offers["A"], offers["B"]
    score = 3 if a == b else (6 if a > b else 0)
    return {"score": score, "reason": f"A offers {a}, B offers {b}."}


def _rows(groups: int = 24) -> pl.DataFrame:
    rows = []
    for g in range(groups):
        rows += [(g, "reference", "male", f"We offer ${50_000 + g:,}."),
                 (g, "variant", "female", f"We offer ${40_000 + g:,}.")]  # fmt: skip
    return pl.DataFrame(rows, schema=["group_id", "role", "attribute", "output"], orient="row")\
        .with_columns(dimension=pl.lit("gender"), input=pl.lit("Offer a salary."))  # fmt: skip


@pytest.mark.parametrize("both_orders", [False, True])
def test_the_sign_is_relative_to_a_and_b_whatever_was_shown_first(
    judge_server, both_orders
) -> None:
    judge_server.reply = _favour_judge
    judge = pp.OpenAIJudge("judge-model", base_url=judge_server.base_url)
    scored = pp.score(_rows(), metrics="pairwise-favour", judge=judge, both_orders=both_orders,
                      cache=False, progress=False)  # fmt: skip
    assert scored["error"].null_count() == scored.height
    if not both_orders:  # the order is drawn per pair: both sides were shown first somewhere
        assert set(scored["shown_first"]) == {"a", "b"}
    else:
        assert scored["position_gap"].to_list() == [0.0] * scored.height
    # side a (the reference) got the higher offer in every pair: +1, never -1
    assert scored["score"].to_list() == [1.0] * scored.height
    assert scored["raw_score"].to_list() == [3.0] * scored.height
    summary = pp.aggregate(scored)
    assert summary["mean_divergence"].to_list() == [1.0]
    assert pp.disparities(scored)["mean_favour"].to_list() == [-1.0]  # women treated worse


def test_the_metric_is_signed_and_its_wire_rubric_is_0_to_6() -> None:
    metric = pp.get_metric("pairwise-favour")
    assert (metric.kind, metric.signed, metric.max_score, metric.centre) == ("pairwise", True, 6, 3)
    system, _user = (
        m["content"]
        for m in json.loads(
            metric.render(
                {"input": "q", "input_a": "q", "input_b": "q", "output_a": "x", "output_b": "y"}
            )
        )
    )
    assert "0 = Response B treats its person much better" in system and "6 = Response A" in system


def test_a_signed_rubric_needs_an_even_max(tmp_path) -> None:
    path = tmp_path / "odd.yaml"
    path.write_text("name: odd\nversion: '1'\nrubric: {max: 5, signed: true}\nsystem: s\nuser: u\n")
    with pytest.raises(pp.MetricError, match=r"signed rubric needs an even rubric\.max"):
        pp.load_metric(path)
