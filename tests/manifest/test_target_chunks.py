"""A ``runner: ray`` target is planned chunk by chunk (issue 22): the plan's figures are those
of the whole pair frame planned in memory, and the pairs kept are the pairs without texts."""

from __future__ import annotations

import tempfile
from pathlib import Path

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import pairwise_polars as pp
from pairwise_polars.manifest._target_chunks import plan_on_chunks
from pairwise_polars.runs import chunked_pairs
from pairwise_polars.runs._parts import TEXT_COLUMNS
from pairwise_polars.scoring import ScoringSpec, resolve_spec

DATA = Path(__file__).resolve().parents[2] / "data"
PRICES = {"gpt-4o-mini": (0.15, 0.6)}


def _llm_spec(both_orders: bool = False) -> ScoringSpec:
    """An LLM judge (never called): its plan counts rendered tokens and outcome requests."""
    judge = pp.OpenAIJudge("gpt-4o-mini", api_key="sk-test")
    metrics = ["pairwise-bias", "pairwise-refusal-disparity"]
    return resolve_spec(None, metrics, judge=judge, both_orders=both_orders, order="random")


def _in_memory(rows: pl.DataFrame, spec: ScoringSpec, outcomes: bool) -> pp.Plan:
    return pp.plan(
        rows, spec=spec, cache=False, prices=PRICES, outcomes="outcome" if outcomes else None
    )


def _chunked(path: Path, spec: ScoringSpec, chunk_size: int, outcomes: bool):
    chunks = chunked_pairs(path, chunk_size=chunk_size)
    return plan_on_chunks(chunks, spec, cache=False, prices=PRICES, outcomes=outcomes)


def test_a_plan_over_chunks_is_the_plan_in_memory(tmp_path: Path) -> None:
    rows = pl.read_parquet(DATA / "jobs_group.parquet")
    path = tmp_path / "jobs.parquet"
    rows.write_parquet(path)
    spec = _llm_spec(both_orders=True)
    assert len(list(chunked_pairs(path, chunk_size=300))) > 3
    pairs, planned = _chunked(path, spec, 300, outcomes=True)
    assert planned == _in_memory(rows, spec, outcomes=True)
    assert planned.n_control_pairs > 0 and planned.n_outcome_judgements > 0
    assert planned.input_tokens > 0 and planned.cost_usd is not None
    whole = pp.form_pairs(rows).drop(TEXT_COLUMNS)
    assert not set(TEXT_COLUMNS) & set(pairs.columns)
    assert pairs.sort("pair_id").equals(whole.sort("pair_id"))


def test_the_heuristic_plan_over_chunks_is_the_plan_in_memory(tmp_path: Path) -> None:
    rows = pl.read_parquet(DATA / "letters_contrastive.parquet")
    path = tmp_path / "letters.parquet"
    rows.write_parquet(path)
    spec = resolve_spec(None, "pairwise-bias", judge=None, both_orders=False, order="random")
    chunks = chunked_pairs(path, "contrastive", chunk_size=7)
    _, planned = plan_on_chunks(chunks, spec, cache=False, prices=None, outcomes=True)
    assert planned == pp.plan(rows, spec=spec, cache=False, strategy="contrastive")


OUTPUTS = st.sampled_from(["Yes, hire them.", "No.", "I cannot help with that.", "", None])


@settings(max_examples=25, deadline=None)
@given(
    groups=st.lists(st.lists(OUTPUTS, min_size=2, max_size=4), min_size=1, max_size=8),
    chunk_size=st.integers(1, 6),
    both_orders=st.booleans(),
)
def test_any_chunking_plans_as_in_memory(
    groups: list[list[str | None]], chunk_size: int, both_orders: bool
) -> None:
    """The same response in two chunks is one request, as in memory; unjudgeable pairs (an
    empty or missing output) and control pairs are counted alike."""
    records = []
    for g, outputs in enumerate(groups):
        roles = ["reference", *(["variant", "control"] * 2)][: len(outputs)]
        for role, output in zip(roles, outputs, strict=True):
            records.append(
                {"group_id": g, "role": role, "dimension": "gender", "output": output,
                 "input": "Should we hire Sam?" if g % 2 else "Should we hire Alex?"}
            )  # fmt: skip
    rows = pl.DataFrame(records, schema_overrides={"output": pl.String})
    spec = _llm_spec(both_orders)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rows.parquet"
        rows.write_parquet(path)
        _, planned = _chunked(path, spec, chunk_size, outcomes=True)
    assert planned == _in_memory(rows, spec, outcomes=True)
