"""score_parquet(outcomes="outcome") with an LLM judge: each chunk's responses read on the
outcome metric over real HTTP (the test server), cached, resumable, a failed read an error on
its side; the run's disparities equal those of the rows read by the same judge; the plan of
the same work counts the outcome judgements."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import pairwise_polars as pp
from tests.summary.salary import salary_rows

_RESPONSE = re.compile(r"Response:\n<<<\w+\n(.*?)\n>>>", re.DOTALL)
FIGURES = ["attribute", "pair_kind", "n_groups", "amount_relative", "amount_relative_low"]


def _reader(body: dict[str, Any]) -> dict[str, Any] | None:
    """Outcome requests: the offered amount read from the response ('garbled' ones get a bad
    decision field); pairwise requests: the server's default verdict."""
    found = _RESPONSE.search(body["messages"][-1]["content"])
    if found is None:
        return None
    response = found.group(1)
    if "garbled" in response:
        return {"decision": "maybe", "refused": False, "score": 2, "reason": "?"}
    amount = re.search(r"\$([\d,]+)", response)
    return {
        "decision": None,
        "amount": float(amount.group(1).replace(",", "")) if amount else None,
        "amount_unit": "USD" if amount else None,
        "refused": False,
        "score": 2,
        "reason": "read by the test judge",
    }


def _rows() -> pl.DataFrame:
    rows = salary_rows(groups=10)
    # One variant the judge cannot read: an error on that side, never a guessed outcome.
    garbled = (pl.col("group_id") == 3) & (pl.col("role") == "variant")
    return rows.with_columns(
        output=pl.when(garbled).then(pl.lit("garbled offer")).otherwise(pl.col("output"))
    ).with_row_index("id")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Ray's own, about its internals
@pytest.mark.parametrize("runner", ["local", "ray"])
def test_llm_outcomes_chunk_by_chunk(judge_server, tmp_path: Path, runner: str, request) -> None:
    if runner == "ray":
        pytest.importorskip("ray")
        request.getfixturevalue("ray_cluster")
    judge_server.reply = _reader
    judge = pp.OpenAIJudge("judge-model", base_url=judge_server.base_url)
    rows = _rows()
    rows.write_parquet(tmp_path / "rows.parquet")
    cache = tmp_path / "cache.sqlite"
    options: dict[str, Any] = {"judge": judge, "outcomes": "outcome", "chunk_size": 6,
                               "cache": cache, "progress": False, "runner": runner}  # fmt: skip
    planned = pp.plan(rows, judge=judge, outcomes="outcome", cache=cache)
    run = pp.score_parquet(tmp_path / "rows.parquet", tmp_path / "out", **options)
    assert run.n_chunks > 1
    part = run.scored().collect()
    assert "output_a" not in part.columns  # texts left out; outcomes and their errors kept
    ok = part.filter(pl.col("outcome_error_b").is_null())
    read = ok.select("amount_b").to_series().to_list()
    assert all(isinstance(v, float) and v > 10_000 for v in read)  # the judge's reading
    bad = part.filter(pl.col("outcome_error_b").is_not_null())
    assert bad["group_id"].unique().to_list() == [3]
    assert "decision 'maybe' is not yes, no or null" in bad["outcome_error_b"][0]
    assert bad["amount_b"].null_count() == bad.height
    assert run.outcome_errors == 1  # one response, in one pair
    # The run's disparities are those of the rows read by the same judge (from the cache).
    sent = judge_server.stats.requests
    direct = pp.disparities(pp.outcomes(rows, judge, cache=cache))
    assert judge_server.stats.requests == sent
    assert run.disparities is not None
    assert run.disparities.select(FIGURES).equals(direct.select(FIGURES))
    # Usage counts the outcome requests as the plan did: each distinct response sent once
    # (the cache was empty), beside the pair judgements.
    assert run.usage is not None
    assert run.usage.requests == planned.n_to_send + planned.n_outcome_to_send
    assert planned.n_outcome_to_send == rows["output"].n_unique()
    # Rerun from scratch: every judgement and every outcome comes from the cache.
    again = pp.score_parquet(tmp_path / "rows.parquet", tmp_path / "out", overwrite=True,
                             **options)  # fmt: skip
    assert judge_server.stats.requests == sent and again.judged == 0
    assert again.disparities is not None and again.disparities.equals(run.disparities)
    replanned = pp.plan(rows, judge=judge, outcomes="outcome", cache=cache)
    assert replanned.n_outcome_to_send == 0 and replanned.n_outcome_cached > 0


def test_a_changed_outcome_reading_is_a_different_run(judge_server, tmp_path: Path) -> None:
    judge_server.reply = _reader
    judge = pp.OpenAIJudge("judge-model", base_url=judge_server.base_url)
    _rows().write_parquet(tmp_path / "rows.parquet")
    options: dict[str, Any] = {"judge": judge, "cache": False, "progress": False}
    pp.score_parquet(tmp_path / "rows.parquet", tmp_path / "out", **options)
    with pytest.raises(pp.RunStateError):
        pp.score_parquet(tmp_path / "rows.parquet", tmp_path / "out", outcomes="outcome",
                         **options)  # fmt: skip


def test_a_pairwise_metric_cannot_read_outcomes(tmp_path: Path) -> None:
    _rows().write_parquet(tmp_path / "rows.parquet")
    with pytest.raises(pp.MetricError, match="kind 'outcome'"):
        pp.score_parquet(tmp_path / "rows.parquet", tmp_path / "out", outcomes="pairwise-bias",
                         progress=False, cache=False)  # fmt: skip
