"""AnthropicBatchJudge against the test server's Message Batches, and what the provider-neutral
batch session promises for both providers: bounded polling of a batch whose status cannot be
read (then resumed, not paid twice), and redaction of every text the batch API sends back."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from conftest import ROOT, jobs
from polars.testing import assert_frame_equal

import pairwise_polars as pp
from pairwise_polars.cli import EXIT_PASS, main
from pairwise_polars.manifest import load_manifest
from pairwise_polars.runs import score_parquet
from pairwise_polars.testing import Faults, TestServer
from pairwise_polars.testing._batches import BatchSettings

KEY = "sk-ant-SECRET-123456"
RESULT = ["pair_id", "metric", "score", "raw_score", "reason", "error", "judge_model"]


def batch_judge(provider: str, server: TestServer, tmp_path: Path, **options: Any) -> Any:
    options = {"poll_interval": 0.02, "max_poll_interval": 0.05, "progress": False, **options}
    kind = pp.AnthropicBatchJudge if provider == "anthropic" else pp.OpenAIBatchJudge
    return kind("judge-model", base_url=server.base_url, api_key=KEY,
                state=tmp_path / "batches.sqlite", **options)  # fmt: skip


def score(judge: Any, tmp_path: Path, groups: int = 10, **options: Any) -> pl.DataFrame:
    options = {"cache": tmp_path / "cache.sqlite", "progress": False, **options}
    return pp.score(jobs(groups), "pairwise-bias", judge=judge, **options)


def test_answers_equal_the_chat_judges_and_share_its_cache(judge_server, tmp_path) -> None:
    judge_server.batch = BatchSettings(delay=0.1)
    batched = score(batch_judge("anthropic", judge_server, tmp_path), tmp_path)
    assert batched["error"].is_null().all()
    chat = pp.AnthropicJudge("judge-model", base_url=judge_server.base_url, api_key=KEY)
    chatted = score(chat, tmp_path, cache=False)
    assert_frame_equal(batched.select(RESULT), chatted.select(RESULT))
    stats = judge_server.stats
    assert stats.batch_calls["messages.batches.create"] == 1
    assert set(stats.request_hashes.values()) == {2}  # identical bodies: one batch, one chat
    assert score(chat, tmp_path)["cached"].all()  # the batch's answers serve the chat judge


def test_line_errors_are_resubmitted_then_error_rows(judge_server, tmp_path) -> None:
    judge_server.faults = Faults(rate_529=0.3, rate_malformed=0.2)
    scored = score(batch_judge("anthropic", judge_server, tmp_path, max_resubmits=0), tmp_path)
    failed = scored.filter(pl.col("error").is_not_null())
    assert failed["score"].is_null().all()  # never a guessed score
    overloaded = failed["error"].str.starts_with("overloaded_error: Overloaded (gave up after 1")
    assert overloaded.sum() == judge_server.stats.batch_outcomes["529"] > 0
    unparseable = failed["error"].str.starts_with("unparseable reply").sum()
    assert unparseable == judge_server.stats.batch_outcomes["malformed"] > 0

    judge_server.reset()
    judge_server.faults = Faults(rate_529=0.3)  # with resubmits, the overloads are sent again
    scored = score(batch_judge("anthropic", judge_server, tmp_path, max_resubmits=4), tmp_path,
                   cache=False)  # fmt: skip
    assert judge_server.stats.batch_calls["messages.batches.create"] > 1
    assert scored["error"].null_count() == scored.height


def test_an_expired_batch_is_resubmitted_and_a_cancelled_one_reported(judge_server, tmp_path):
    judge_server.batch = BatchSettings(outcome="expired", expire_fraction=0.5)
    scored = score(batch_judge("anthropic", judge_server, tmp_path, max_resubmits=1), tmp_path)
    expired = scored["error"].str.starts_with("expired: the batch ended before").fill_null(False)
    assert judge_server.stats.batch_calls["messages.batches.create"] == 2
    assert 0 < expired.sum() < scored.height and scored.filter(expired)["score"].is_null().all()
    assert scored["error"].drop_nulls().str.contains("gave up after 2 batches").all()

    judge_server.reset()
    judge_server.batch = BatchSettings(delay=5.0)
    base = judge_server.base_url

    def cancel() -> None:  # a user cancelling the batch from elsewhere
        while not judge_server.messages.batches.objects:
            time.sleep(0.01)
        batch_id = next(iter(judge_server.messages.batches.objects))
        request = urllib.request.Request(
            f"{base}/messages/batches/{batch_id}/cancel",
            b"",
            headers={"x-api-key": KEY, "anthropic-version": "x"},
        )
        urllib.request.urlopen(request).close()  # fmt: skip

    threading.Thread(target=cancel, daemon=True).start()
    scored = score(batch_judge("anthropic", judge_server, tmp_path), tmp_path, cache=False)
    assert scored["error"].str.contains("was cancelled before").all()


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_status_that_cannot_be_read_stops_then_resumes(judge_server, tmp_path, provider):
    judge_server.batch = BatchSettings(retrieve_status=500)
    judge = batch_judge(provider, judge_server, tmp_path, max_retries=0, max_poll_errors=3)
    with pytest.raises(pp.JudgeError) as caught:
        score(judge, tmp_path)
    batch_id = next(iter([*judge_server.batches.objects, *judge_server.messages.batches.objects]))
    message = str(caught.value)
    assert f"batch {batch_id} could not be read 3 times in a row" in message
    assert "run again to resume it" in message and "500" in message
    judge_server.batch = BatchSettings()  # the provider recovers: the rerun polls that batch
    scored = score(judge, tmp_path)
    assert scored["error"].is_null().all()
    creates = judge_server.stats.batch_calls
    assert creates["batches.create"] + creates["messages.batches.create"] == 1  # paid once


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_the_key_is_redacted_from_everything_the_batch_api_sends(
    judge_server, tmp_path, provider
) -> None:
    judge_server.reply = lambda body: {"score": 1, "reason": f"the key was {KEY}"}  # echoed
    scored = score(batch_judge(provider, judge_server, tmp_path, max_resubmits=0), tmp_path)
    assert scored["error"].is_null().all()
    assert (scored["reason"] == "the key was ***").all()
    assert "SECRET" not in scored.write_csv()
    assert b"SECRET" not in (tmp_path / "batches.sqlite").read_bytes()

    keyed = TestServer(api_key="sk-ant-OTHER-999999", faults=Faults(echo_auth=True)).start()
    try:  # the API refuses the key and echoes it back in its error
        with pytest.raises(pp.JudgeError) as caught:
            score(batch_judge(provider, keyed, tmp_path), tmp_path, cache=False)
    finally:
        keyed.stop()
    assert "refused the API key (401)" in str(caught.value) and "SECRET" not in str(caught.value)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("outcome", ["completed", "failed"])
def test_line_errors_and_a_failed_batch_that_echo_the_key_are_redacted(
    tmp_path, provider, outcome
) -> None:
    # per-line 500s (no resubmit) or the whole batch's error, each ending with the key
    faults = Faults(rate_500=0.5, echo_auth=True)
    server = TestServer(api_key=KEY, faults=faults, seed=3).start()
    server.batch = BatchSettings(outcome=outcome)
    try:
        scored = score(batch_judge(provider, server, tmp_path, max_resubmits=0), tmp_path)
        outcomes = server.stats.batch_outcomes if outcome == "completed" else {"500": 1}
    finally:
        server.stop()
    assert outcomes["500"] > 0  # the echoing errors were really sent
    errors = scored["error"].drop_nulls()
    assert errors.len() > 0 and errors.str.contains("request had Authorization: ").all()
    assert "SECRET" not in scored.write_csv()
    for store in ("cache.sqlite", "batches.sqlite"):
        assert b"SECRET" not in (tmp_path / store).read_bytes()


def test_manifest_and_cli_build_the_anthropic_batch_judge(judge_server, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    jobs(30).write_parquet(tmp_path / "jobs.parquet")
    (tmp_path / "m.yaml").write_text(textwrap.dedent(f"""
        targets:
          demo:
            pairwise:
              data: jobs.parquet
              judge: {{provider: anthropic, model: m, batch: true,
                       base_url: "{judge_server.base_url}"}}
        """))  # fmt: skip
    judge = load_manifest(tmp_path / "m.yaml").targets["demo"].judge.build()
    assert isinstance(judge, pp.AnthropicBatchJudge) and judge._key() == KEY
    out = tmp_path / "scored.parquet"
    args = ["score", str(tmp_path / "jobs.parquet"), "-o", str(out), "--judge", "m", "--batch",
            "--judge-provider", "anthropic", "--base-url", judge_server.base_url, "--quiet",
            "--cache", str(tmp_path / "cache.sqlite")]  # fmt: skip
    assert main(args) == EXIT_PASS
    assert pl.read_parquet(out)["error"].is_null().all()
    assert judge_server.stats.batch_calls["messages.batches.create"] == 1


SCRIPT = """
import sys
import pairwise_polars as pp
from pairwise_polars.runs import score_parquet

source, destination, cache, state, base_url = sys.argv[1:6]
judge = pp.AnthropicBatchJudge("judge-model", base_url=base_url, api_key="k", state=state,
                               poll_interval=0.05, max_poll_interval=0.05, progress=False,
                               max_requests_per_batch=40)
score_parquet(source, destination, ["pairwise-bias"], judge=judge, cache=cache, chunk_size=50,
              progress=False)
"""


def test_a_parquet_run_killed_after_submitting_polls_the_same_batches(judge_server, tmp_path):
    source = tmp_path / "jobs.parquet"
    jobs(60).write_parquet(source)
    judge_server.batch = BatchSettings(delay=3.0)
    args = [str(source), str(tmp_path / "out"), str(tmp_path / "cache.sqlite"),
            str(tmp_path / "batches.sqlite"), judge_server.base_url]  # fmt: skip
    paths = [str(ROOT), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    process = subprocess.Popen([sys.executable, "-c", SCRIPT, *args], env=env)
    try:  # every chunk is submitted before any is collected: the first poll means all are in
        deadline = time.monotonic() + 30
        while judge_server.stats.batch_calls["messages.batches.retrieve"] == 0:
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    submitted = set(judge_server.messages.batches.objects)
    assert judge_server.stats.batch_calls["messages.batches.results"] == 0
    judge = pp.AnthropicBatchJudge("judge-model", base_url=judge_server.base_url, api_key="k",
                                   state=tmp_path / "batches.sqlite", poll_interval=0.05,
                                   max_poll_interval=0.1, progress=False)  # fmt: skip
    run = score_parquet(source, tmp_path / "out", "pairwise-bias", judge=judge,
                        cache=tmp_path / "cache.sqlite", chunk_size=50, progress=False)  # fmt: skip
    assert set(judge_server.messages.batches.objects) == submitted  # none created twice
    assert set(judge_server.stats.request_hashes.values()) == {1}  # none processed twice
    assert run.scored().collect()["error"].null_count() == run.n_pairs
