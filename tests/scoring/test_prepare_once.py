"""Prepare once: a plan and the run that follows it render and look up each request once."""

from __future__ import annotations

import inspect
from pathlib import Path

import polars as pl
import pytest

import pairwise_polars as pp
from pairwise_polars.judges import JudgeTraits, build_judge, traits_of
from pairwise_polars.manifest import load_manifest, run_target
from pairwise_polars.scoring import Scoring, prepare, score_prepared
from pairwise_polars.testing import TestServer

DATA = Path(__file__).resolve().parents[2] / "data"


class CountingCache(pp.JudgementCache):
    """A real SQLite cache that counts how often it is read."""

    lookups = 0

    def lookup(self, keys: list[str]) -> pl.DataFrame:
        type(self).lookups += 1
        return super().lookup(keys)


def test_a_plan_and_its_run_share_one_render_and_one_lookup(tmp_path: Path) -> None:
    rows = pl.read_parquet(DATA / "letters_contrastive.parquet").head(20)
    with TestServer() as server:
        judge = pp.OpenAIJudge("test-judge", base_url=server.base_url, api_key="test")
        pairs = pp.form_pairs(rows, "contrastive")
        prepared = prepare(pairs, "pairwise-bias", judge=judge)
        cache = CountingCache(tmp_path / "c.sqlite")
        seen = []
        planned, scored = score_prepared(prepared, cache=cache, progress=False, on_plan=seen.append)
        assert seen == [planned] and CountingCache.lookups == 1
        assert scored is not None and scored.height == planned.n_pairs
        assert server.stats.requests == planned.n_to_send == planned.n_unique
        # A second call: the plan sees every answer cached, and nothing is sent.
        again = Scoring(prepared, cache)
        assert again.plan().n_cached == planned.n_unique and CountingCache.lookups == 2
        rescored = pp.score_pairs(pairs, "pairwise-bias", judge=judge, cache=cache,
                                  progress=False)  # fmt: skip
        assert server.stats.requests == planned.n_to_send
        assert rescored["cached"].all()
        cache.close()


def test_run_target_plans_then_scores_the_same_prepared_call(tmp_path: Path) -> None:
    manifest = load_manifest(DATA / "example.yaml")
    target = manifest.targets["letters"]
    plans = []
    run = run_target(target, cache=tmp_path / "c.sqlite", progress=False, on_plan=plans.append)
    assert plans == [run.plan] and run.scored is not None
    assert run.scored.height == run.plan.n_pairs * len(target.metrics)


def test_sync_twins_have_their_async_signature_and_doc() -> None:
    for sync, asynchronous in [(pp.score, pp.ascore), (pp.score_pairs, pp.ascore_pairs),
                               (pp.score_parquet, pp.ascore_parquet),
                               (pp.collect_responses, pp.acollect_responses)]:  # fmt: skip
        assert inspect.signature(sync) == inspect.signature(asynchronous)
        assert sync.__doc__ == asynchronous.__doc__ and sync.__doc__
        assert not inspect.iscoroutinefunction(sync)
        assert asynchronous.__name__ == "a" + sync.__name__


def test_columns_object_and_keywords_are_the_same_call() -> None:
    rows = pl.DataFrame({"prompt": [1, 1], "r": ["reference", "variant"], "dimension": "age",
                         "input": "q", "response": ["a", "b"]})  # fmt: skip
    by_object = pp.form_pairs(rows, columns=pp.Columns(group_by="prompt", role="r",
                                                       output="response"))  # fmt: skip
    by_keywords = pp.form_pairs(rows, group_by="prompt", role="r", output="response")
    mixed = pp.form_pairs(rows, columns=pp.Columns(group_by="prompt", role="r"), output="response")
    assert by_object.equals(by_keywords) and mixed.equals(by_keywords)
    scored = pp.score(rows, columns=pp.Columns(group_by="prompt", role="r", output="response"),
                      progress=False)  # fmt: skip
    assert scored.height == 1
    with pytest.raises(TypeError, match="unexpected keyword argument 'grup_by'; did you mean"):
        pp.form_pairs(rows, grup_by="prompt")  # type: ignore[call-arg]


def test_judge_traits_are_declared_once_and_read_one_way() -> None:
    assert traits_of(pp.OpenAIJudge("m", max_concurrency=8)) == JudgeTraits(
        kind="chat", identity=pp.OpenAIJudge("m").identity, max_concurrency=8
    )
    assert traits_of(pp.OpenAIBatchJudge("m")).kind == "batch"
    local = traits_of(pp.HeuristicJudge())
    assert (local.kind, local.uses_messages, local.cacheable) == ("local", False, False)

    class Legacy:  # a judge written before traits: its attributes are still read
        name = "legacy"
        uses_messages = False
        cacheable = False

        async def judge(self, requests: pl.DataFrame):  # pragma: no cover - never called
            yield requests

    legacy = traits_of(Legacy())
    assert (legacy.uses_messages, legacy.cacheable, dict(legacy.identity)) == (
        False, False, {"name": "legacy"},
    )  # fmt: skip


def test_one_judge_factory() -> None:
    assert isinstance(build_judge(None), pp.HeuristicJudge)
    assert isinstance(build_judge("offline"), pp.HeuristicJudge)
    judge = build_judge("m", base_url="http://127.0.0.1:9", max_concurrency=4, timeout=None)
    assert isinstance(judge, pp.OpenAIJudge) and judge.max_concurrency == 4
    assert judge.timeout == 60.0  # None leaves the default
    assert isinstance(build_judge("m", batch=True, temperature=0.5), pp.OpenAIBatchJudge)
    with pytest.raises(pp.OptionError, match="no max_concurrency"):
        build_judge("m", batch=True, max_concurrency=4)
