"""A user's script written from the README, checked by the type checker in CI (never run by
pytest: it would call a model). Every line here must type-check without a cast or an ignore."""

from __future__ import annotations

import polars as pl
from typing_extensions import assert_type

import pairwise_polars as pp
from pairwise_polars.testing import TestServer

rows = pl.read_parquet("data/jobs_group.parquet")
lazy_rows = pl.scan_parquet("data/jobs_group.parquet")

# Lazy in, lazy out; eager in, eager out; paths give a LazyFrame.
assert_type(pp.form_pairs(rows), pl.DataFrame)
assert_type(pp.form_pairs(lazy_rows), pl.LazyFrame)
assert_type(pp.form_pairs("data/jobs_group.parquet"), pl.LazyFrame)
assert_type(pp.check_groups(rows), pl.DataFrame)
assert_type(pp.check_groups(lazy_rows, "contrastive"), pl.LazyFrame)
pairs = pp.form_pairs(rows, columns=pp.Columns(group_by="group_id"), on_invalid="skip")
keys = pp.form_pairs(rows, group_by="group_id", output="output", keys_only=True)

# Judges satisfy the Judge protocol.
judge: pp.Judge = pp.OpenAIJudge("gpt-4o-mini", max_concurrency=8)
batch: pp.Judge = pp.OpenAIBatchJudge("gpt-4o-mini")
offline: pp.Judge = pp.HeuristicJudge()
scored = pp.score(rows, ["pairwise-bias", "pairwise-refusal-disparity"], judge=pp.OpenAIJudge("m"))
assert_type(scored, pl.DataFrame)
scored = pp.score_pairs(pairs, "pairwise-bias", judge=judge, both_orders=True, cache=False)
plan = pp.plan(rows, "pairwise-bias", judge=judge, reference="reference")
assert_type(plan, pp.Plan)

with TestServer(latency=0.05) as server:
    local = pp.OpenAIJudge("test-judge", base_url=server.base_url, api_key="test")
    scored = pp.score(rows, "pairwise-bias", judge=local, cache=False)


async def in_a_notebook() -> pl.DataFrame:
    return await pp.ascore(rows, "pairwise-bias", judge=offline, strategy="group")


run = pp.score_parquet("runs/*.parquet", "results/run-01", "pairwise-bias", chunk_size=50_000)
assert_type(run, pp.ParquetRun)
assert_type(run.scored(), pl.LazyFrame)

summary = pp.aggregate(scored, by=["dimension"])
both_scopes = pp.summarize(scored, ["dimension"])
result = pp.gate(summary, min_equivalence_rate=0.8, max_mean_divergence={"pairwise-bias": 0.2})
assert_type(result, pp.GateResult)
print(result.verdict())

answered = pp.collect_responses(rows, "my-model", base_url="http://localhost:8000/v1", samples=2)
assert_type(answered, pl.DataFrame)
