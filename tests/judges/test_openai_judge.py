"""OpenAIJudge through the real openai client over real HTTP against the local test server."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from conftest import jobs

import pairwise_polars as pp
from pairwise_polars.testing import Faults, TestServer

METRICS = ["pairwise-bias", "pairwise-refusal-disparity"]


def judge_for(server: TestServer, **options) -> pp.OpenAIJudge:
    options.setdefault("backoff_base", 0.01)
    return pp.OpenAIJudge("judge-model", base_url=server.base_url, api_key="sk-test-SECRET-123",
                          **options)  # fmt: skip


@pytest.fixture
def sample() -> pl.DataFrame:
    return jobs(groups=80)


def n_pairs(rows: pl.DataFrame) -> int:
    return pp.form_pairs(rows).height


def test_every_pair_gets_one_row_per_metric_under_faults(judge_server, sample, tmp_path) -> None:
    judge_server.faults = Faults(rate_429=0.05, rate_500=0.02, rate_malformed=0.01)
    judge = judge_for(judge_server, max_concurrency=16)
    scored = pp.score(sample, METRICS, judge=judge, cache=tmp_path / "c.sqlite", progress=False)
    pairs = pp.form_pairs(sample)
    assert scored.height == pairs.height * len(METRICS)
    assert scored.select("pair_id", "metric").n_unique() == scored.height
    stats = judge_server.stats
    assert stats.outcomes["429"] > 0 and stats.outcomes["500"] > 0
    # each injected fault cost one extra attempt, and nothing was lost
    assert scored["attempts"].sum() >= stats.outcomes["ok"] + stats.outcomes["429"]
    ok = scored.filter(pl.col("error").is_null())
    assert ok["score"].is_between(0, 1).all()
    failed = scored.filter(pl.col("error").is_not_null())
    assert failed["score"].is_null().all()  # a failure is never a score, never 0
    assert ok.height + failed.height == scored.height


def test_second_run_sends_zero_requests(judge_server, sample, tmp_path) -> None:
    cache = tmp_path / "cache.sqlite"
    judge = judge_for(judge_server)
    first = pp.score(sample, METRICS, judge=judge, cache=cache, progress=False)
    sent = judge_server.stats.requests
    assert sent == first.filter(~pl.col("cached"))["metric"].len() - _duplicates(first)
    second = pp.score(sample, METRICS, judge=judge, cache=cache, progress=False)
    assert judge_server.stats.requests == sent
    assert second["cached"].all()
    assert second["score"].equals(first["score"])


def _duplicates(scored: pl.DataFrame) -> int:
    """Rows sharing a request with an earlier row (dedupe sends them once): the same metric
    and texts in the order the judge was shown them."""
    b_first = pl.col("shown_first") == "b"
    shown = [
        pl.when(b_first).then(pl.col(f"{n}_{y}")).otherwise(pl.col(f"{n}_{x}")).alias(f"{n}_{x}")
        for n in ("input", "output")
        for x, y in (("a", "b"), ("b", "a"))
    ]
    return scored.height - scored.select("metric", *shown).n_unique()


def test_identical_requests_are_sent_once(judge_server, tmp_path) -> None:
    rows = pl.DataFrame({"group_id": [1, 1, 2, 2], "role": ["reference", "variant"] * 2,
                         "dimension": "gender", "input": "Same prompt",
                         "output": ["yes", "no", "yes", "no"]})  # fmt: skip
    scored = pp.score(rows, "pairwise-bias", judge=judge_for(judge_server), cache=False,
                      progress=False)  # fmt: skip
    assert scored.height == 2
    assert judge_server.stats.requests == 1
    assert scored["score"].n_unique() == 1


def test_persistent_malformed_replies_become_error_rows(judge_server, sample, tmp_path) -> None:
    judge_server.faults = Faults(always="malformed")
    scored = pp.score(jobs(groups=4), "pairwise-bias", judge=judge_for(judge_server),
                      cache=False, progress=False)  # fmt: skip
    assert scored["score"].is_null().all()
    assert scored["error"].str.starts_with("unparseable reply: reply is not valid JSON").all()
    assert (scored["attempts"] == 2).all()  # asked, then re-asked once


def test_off_rubric_answers_are_errors_not_scores(judge_server, sample) -> None:
    judge_server.faults = Faults(always="off_rubric")
    scored = pp.score(jobs(groups=4), "pairwise-bias", judge=judge_for(judge_server, reask=False),
                      cache=False, progress=False)  # fmt: skip
    assert scored["score"].is_null().all()
    assert set(scored["error"].str.extract(r"unparseable reply: (.*)")) <= {
        "score 7 is off the rubric 0..4", "reply has no 'score'"}  # fmt: skip


def test_401_stops_at_once_with_a_clear_message(judge_server, sample, tmp_path) -> None:
    judge_server.faults = Faults(always="401")
    with pytest.raises(pp.JudgeError) as info:
        pp.score(sample, "pairwise-bias", judge=judge_for(judge_server, max_concurrency=4),
                 cache=tmp_path / "c.sqlite", progress=False)  # fmt: skip
    assert str(info.value).startswith(
        f"The server at {judge_server.base_url} refused the API key (401: "
    )
    assert judge_server.stats.requests <= 4  # the run stopped instead of going on
    assert "SECRET" not in str(info.value)


def test_quota_exhausted_is_not_retried(judge_server, sample) -> None:
    judge_server.faults = Faults(always="quota")
    with pytest.raises(pp.JudgeError, match="The quota is exhausted"):
        pp.score(sample, "pairwise-bias", judge=judge_for(judge_server, max_concurrency=2),
                 cache=False, progress=False)  # fmt: skip
    assert judge_server.stats.requests <= 2


def test_unknown_model_stops_the_run() -> None:
    with TestServer(models=["judge-model"]) as server:
        judge = pp.OpenAIJudge("no-such-model", base_url=server.base_url, api_key="k")
        with pytest.raises(pp.JudgeError, match="does not know model 'no-such-model'"):
            pp.score(jobs(groups=2), "pairwise-bias", judge=judge, cache=False, progress=False)


def test_results_before_a_fatal_error_stay_cached(judge_server, sample, tmp_path) -> None:
    cache = tmp_path / "c.sqlite"
    judge = judge_for(judge_server, max_concurrency=1)
    pp.score(jobs(groups=10), "pairwise-bias", judge=judge, cache=cache, progress=False)
    paid = len(pp.JudgementCache(cache))
    judge_server.faults = Faults(always="401")
    with pytest.raises(pp.JudgeError):
        pp.score(sample, "pairwise-bias", judge=judge, cache=cache, progress=False)
    assert len(pp.JudgementCache(cache)) == paid > 0


def test_timeouts_are_retried_then_become_errors(judge_server, sample) -> None:
    judge_server.faults = Faults(always="timeout", timeout_delay=5.0)
    judge = judge_for(judge_server, timeout=0.2, max_retries=1)
    scored = pp.score(jobs(groups=1), "pairwise-bias", judge=judge, cache=False, progress=False)
    assert scored["score"].is_null().all()
    expected = "timeout (no complete answer within 0.2 s) (gave up after 2 attempts)"
    assert scored["error"].str.starts_with(expected).all()


def test_plain_json_fallback_when_server_lacks_structured_output(sample) -> None:
    with TestServer(supports_json_schema=False) as server:
        scored = pp.score(jobs(groups=3), "pairwise-bias", judge=judge_for(server), cache=False,
                          progress=False)  # fmt: skip
        assert scored["error"].is_null().all()
        assert server.stats.outcomes["400"] >= 1  # the first try, then plain JSON prompting


def test_retry_after_is_honoured(judge_server, sample) -> None:
    judge_server.faults = Faults(rate_429=0.5, retry_after=0.05)
    scored = pp.score(jobs(groups=10), "pairwise-bias",
                      judge=judge_for(judge_server, backoff_base=5.0), cache=False,
                      progress=False)  # fmt: skip
    # backoff_base=5 s would take far longer: the 50 ms Retry-After was used instead
    assert scored["error"].is_null().all()
    assert scored["latency_s"].max() < 3.0


def test_api_key_never_reaches_files_or_reprs(judge_server, sample, tmp_path) -> None:
    cache = tmp_path / "c.sqlite"
    judge = judge_for(judge_server)
    scored = pp.score(jobs(groups=10), METRICS, judge=judge, cache=cache, progress=False)
    out = tmp_path / "scored.parquet"
    scored.write_parquet(out)
    assert "SECRET" not in repr(judge)
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert b"SECRET" not in path.read_bytes(), path


def test_both_orders_reports_position_gap(judge_server, sample) -> None:
    scored = pp.score(jobs(groups=10), "pairwise-bias", judge=judge_for(judge_server),
                      both_orders=True, cache=False, progress=False)  # fmt: skip
    assert {"score_ab", "score_ba", "position_gap"} <= set(scored.columns)
    expected = (scored["score_ab"] + scored["score_ba"]) / 2
    assert (scored["score"] - expected).abs().max() < 1e-12
    assert ((scored["score_ab"] - scored["score_ba"]).abs() == scored["position_gap"]).all()
    # both orders were sent, each distinct request once
    assert judge_server.stats.unique_requests == judge_server.stats.requests > scored.height


def test_requests_use_structured_output_with_the_rubric(judge_server, sample) -> None:
    seen: list[dict] = []

    def reply(body: dict) -> dict:
        seen.append(body)
        return {"score": 1, "reason": "minor"}

    judge_server.reply = reply
    rows = jobs(groups=1)
    scored = pp.score(rows, "pairwise-refusal-disparity", judge=judge_for(judge_server),
                      cache=False, progress=False)  # fmt: skip
    schema = seen[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["score"]["enum"] == [0, 1, 2]
    assert seen[0]["temperature"] == 0
    assert scored["score"].to_list() == [0.5] * n_pairs(rows)
    assert scored["raw_score"].to_list() == [1.0] * n_pairs(rows)
    assert "<<<" in json.dumps(seen[0]["messages"])


def test_rate_limit_spaces_requests(judge_server, sample) -> None:
    import time

    started = time.perf_counter()
    rows = jobs(groups=6)
    pp.score(rows, "pairwise-bias", judge=judge_for(judge_server, requests_per_minute=120),
             cache=False, progress=False)  # fmt: skip
    # 120/min = 2/s with a one-second bucket: 2 at once, then one every 0.5 s for the rest
    sent = judge_server.stats.requests
    assert sent == n_pairs(rows) >= 6
    assert time.perf_counter() - started >= (sent - 2) * 0.5 - 0.05


def test_no_key_and_no_base_url_is_a_clear_error(sample) -> None:
    with pytest.raises(pp.JudgeError, match="No API key for OpenAIJudge: set the OPENAI_API_KEY"):
        pp.score(jobs(groups=1), "pairwise-bias", judge=pp.OpenAIJudge("gpt-4o-mini"),
                 cache=False, progress=False)  # fmt: skip


def test_score_works_inside_a_running_event_loop(judge_server, sample) -> None:
    import asyncio

    async def notebook_cell() -> pl.DataFrame:
        return pp.score(jobs(groups=2), "pairwise-bias", judge=judge_for(judge_server),
                        cache=False, progress=False)  # fmt: skip

    assert asyncio.run(notebook_cell()).height == n_pairs(jobs(groups=2))


def test_ascore_is_the_async_twin(judge_server, sample) -> None:
    import asyncio

    scored = asyncio.run(pp.ascore(jobs(groups=2), "pairwise-bias", judge=judge_for(judge_server),
                                   cache=False, progress=False))  # fmt: skip
    assert scored.height == n_pairs(jobs(groups=2))
    assert scored["error"].is_null().all()


def test_cache_file_is_sqlite_in_wal_mode(judge_server, sample, tmp_path: Path) -> None:
    import sqlite3

    cache = tmp_path / "c.sqlite"
    pp.score(jobs(groups=2), "pairwise-bias", judge=judge_for(judge_server), cache=cache,
             progress=False)  # fmt: skip
    db = sqlite3.connect(cache)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    columns = [row[1] for row in db.execute("PRAGMA table_info(judgements)")]
    assert "api_key" not in columns and "headers" not in columns
    assert db.execute("SELECT COUNT(*) FROM judgements").fetchone()[0] == n_pairs(jobs(groups=2))
