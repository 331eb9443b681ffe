"""The noise floor end to end: control rows paired, judged by the real openai client over HTTP
against the test server, summarised into the excess divergence and gated; through score(),
plan(), the polars namespace and score_parquet()."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import pairwise_polars as pp
from pairwise_polars.testing import TestServer

GROUPS = 40
VARIANTS = 3
TILT = "[tilted]"


def responses(*, tilted: bool, strategy: str = "group") -> pl.DataFrame:
    """Per group: a reference (or pole_a), variants (or one pole_b), one control; every output
    distinct. With ``tilted`` the variants carry a marker the judge scores as divergent."""
    first, other = ("reference", "variant") if strategy == "group" else ("pole_a", "pole_b")
    n_other = VARIANTS if strategy == "group" else 1
    rows = []
    for g in range(GROUPS):
        roles = [first] + [other] * n_other + ["control"]
        for i, role in enumerate(roles):
            text = f"Answer {i} to request {g}."
            if tilted and role == other:
                text = f"{TILT} {text}"
            prompt = f"Request {g} about Alex." if role != other else f"Request {g} about Sam."
            rows.append(
                {
                    "group_id": g,
                    "role": role,
                    "dimension": "gender",
                    "input": prompt,
                    "output": text,
                }
            )
    return pl.DataFrame(rows)


def tilt_judge(body: dict[str, Any]) -> dict[str, Any] | None:
    """A judge whose verdict on untilted pairs is the server's hash of the messages (sampling
    noise: the same distribution for every pair) and on tilted pairs the rubric's top."""
    if TILT in json.dumps(body["messages"]):
        return {"score": 4, "reason": "one answer is tilted"}
    return None


@pytest.fixture
def judge(judge_server: TestServer) -> pp.OpenAIJudge:
    judge_server.reply = tilt_judge
    return pp.OpenAIJudge("judge", base_url=judge_server.base_url, api_key="test")


def summary_row(scored: pl.DataFrame) -> dict[str, Any]:
    return pp.aggregate(scored, ()).row(0, named=True)


@pytest.mark.parametrize("strategy", ["group", "contrastive"])
def test_no_effect_keeps_zero_in_the_excess_interval(judge, strategy) -> None:
    data = responses(tilted=False, strategy=strategy)
    scored = pp.score(data, judge=judge, strategy=strategy, cache=False, progress=False)
    n_other = VARIANTS if strategy == "group" else 1
    kinds = scored["pair_kind"].value_counts().sort("pair_kind").rows()
    assert kinds == [("control", GROUPS), ("counterfactual", GROUPS * n_other)]
    assert scored["error"].null_count() == scored.height
    row = summary_row(scored)
    # Re-asking alone diverges: the raw mean is far from 0 ...
    assert row["mean_divergence"] > 0.2
    assert row["control_mean_divergence"] > 0.2
    # ... but nothing beyond it: the interval holds 0 and the excess gate passes (at 0.25: the
    # interval's upper end over 40 groups is about 0.19, so 0.15 would be undecided).
    assert row["excess_divergence_low"] < 0 < row["excess_divergence_high"]
    assert pp.gate(pp.aggregate(scored), max_excess_divergence=0.25).status == "pass"
    # while a raw-mean gate at the same threshold would have called this run biased
    assert pp.gate(pp.aggregate(scored), max_mean_divergence=0.25).status == "fail"


@pytest.mark.parametrize("strategy", ["group", "contrastive"])
def test_an_effect_puts_the_excess_interval_above_zero_and_fails_the_gate(judge, strategy):
    data = responses(tilted=True, strategy=strategy)
    scored = data.pairwise.score(judge=judge, strategy=strategy, cache=False, progress=False)
    row = summary_row(scored)
    assert row["mean_divergence"] == 1.0  # every tilted pair scores the top of the rubric
    assert row["excess_divergence"] == pytest.approx(1.0 - row["control_mean_divergence"])
    assert row["excess_divergence_low"] > 0
    result = pp.gate(pp.aggregate(scored), max_excess_divergence=0.15, conservative=True)
    assert result.status == "fail"
    assert result.failures["gate"].to_list() == ["max_excess_divergence"]


def test_plan_counts_control_pairs_and_their_judgements(judge) -> None:
    data = responses(tilted=False)
    planned = pp.plan(data, ["pairwise-bias", "pairwise-refusal-disparity"], judge=judge)
    assert planned.n_pairs == GROUPS * (VARIANTS + 1)
    assert planned.n_control_pairs == GROUPS
    assert planned.n_control_judgements == GROUPS * 2  # one per group per metric
    assert f"control pairs (the noise floor): {GROUPS}, {GROUPS * 2} judgements" in str(planned)
    no_controls = pp.plan(data.filter(pl.col("role") != "control"), judge=judge)
    assert (no_controls.n_control_pairs, no_controls.n_control_judgements) == (0, 0)
    assert "control pairs" not in str(no_controls)


def test_score_parquet_carries_pair_kind_and_refuses_another_control_role(
    judge, judge_server: TestServer, tmp_path: Path
) -> None:
    source = tmp_path / "responses.parquet"
    responses(tilted=True).write_parquet(source)
    run_dir = tmp_path / "run"
    run = pp.score_parquet(
        source, run_dir, judge=judge, chunk_size=50, cache=tmp_path / "c.db", progress=False
    )
    parts = run.scored().collect()
    assert parts["pair_kind"].value_counts().sort("pair_kind").rows() == [
        ("control", GROUPS),
        ("counterfactual", GROUPS * VARIANTS),
    ]
    summary = pl.read_parquet(run_dir / "summary.parquet")
    assert summary["n_control"].to_list() == [GROUPS]
    assert summary["excess_divergence_low"].item() > 0
    in_memory = pp.aggregate(pp.score(source, judge=judge, cache=tmp_path / "c.db", progress=False))
    assert summary["excess_divergence"].item() == pytest.approx(
        in_memory["excess_divergence"].item()
    )
    recorded = json.loads((run_dir / "run.json").read_text())["fingerprint"]["pairing"]
    assert recorded["control"] == "control"
    with pytest.raises(pp.RunStateError, match=r'control: was "control", now "re-ask"'):
        pp.score_parquet(source, run_dir, judge=judge, chunk_size=50, control="re-ask")
