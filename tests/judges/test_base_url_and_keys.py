"""OPENAI_BASE_URL and keyless local servers, checked at the test server: where requests go and
which auth header arrives (real openai client, real HTTP)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from conftest import jobs

import pairwise_polars as pp
from pairwise_polars.cli import EXIT_INVALID, EXIT_PASS, main
from pairwise_polars.counterfactual import OpenAITarget, collect_responses
from pairwise_polars.judges import OpenAIBatchJudge
from pairwise_polars.testing import TestServer

ROWS = jobs(groups=2)


def auth_headers(server: TestServer) -> set[str | None]:
    return {seen.headers.get("authorization") for seen in server.received}


def test_openai_base_url_is_honoured(judge_server, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.base_url + "/")
    judge = pp.OpenAIJudge("judge-model", api_key="sk-test-1")
    scored = pp.score(ROWS, "pairwise-bias", judge=judge, cache=False, progress=False)
    assert scored["error"].is_null().all()
    assert judge_server.stats.requests == scored.height > 0
    assert {seen.path for seen in judge_server.received} == {"/v1/chat/completions"}
    assert auth_headers(judge_server) == {"Bearer ***"}


def test_a_local_server_needs_no_key_and_gets_no_auth_header(judge_server) -> None:
    judge = pp.OpenAIJudge("judge-model", base_url=judge_server.base_url)
    scored = pp.score(ROWS, "pairwise-bias", judge=judge, cache=False, progress=False)
    assert scored["error"].is_null().all() and judge_server.stats.requests > 0
    assert auth_headers(judge_server) == {None}  # no made-up bearer token either


def test_openai_base_url_without_a_key_works_too(judge_server, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.base_url)
    scored = pp.score(ROWS, "pairwise-bias", judge=pp.OpenAIJudge("judge-model"), cache=False,
                      progress=False)  # fmt: skip
    assert scored["error"].is_null().all()
    assert auth_headers(judge_server) == {None}


def test_a_server_that_wants_a_key_says_so_when_none_is_sent() -> None:
    with TestServer(api_key="needed") as server:
        judge = pp.OpenAIJudge("judge-model", base_url=server.base_url, max_concurrency=1)
        with pytest.raises(pp.JudgeError, match=f"The server at {server.base_url} refused"):
            pp.score(ROWS, "pairwise-bias", judge=judge, cache=False, progress=False)


@pytest.mark.parametrize("env_url", [None, "https://api.openai.com/v1/"])
def test_openais_api_still_needs_a_key(monkeypatch, env_url) -> None:
    if env_url:
        monkeypatch.setenv("OPENAI_BASE_URL", env_url)
    for judge in (pp.OpenAIJudge("gpt-4o-mini"), OpenAIBatchJudge("gpt-4o-mini")):
        with pytest.raises(pp.JudgeError) as info:
            pp.score(ROWS, "pairwise-bias", judge=judge, cache=False, progress=False)
        name = type(judge).__name__
        assert str(info.value) == (
            f"No API key for {name}: set the OPENAI_API_KEY environment variable or pass "
            f"{name}(model, api_key=...). For a local server (vLLM, Ollama, llama.cpp) pass "
            "base_url=... or set OPENAI_BASE_URL; no key is needed then."
        )


def test_a_missing_key_stops_the_run_before_any_progress_is_shown(monkeypatch, capsys) -> None:
    # A progress line at 0% and then "no key" reads as a run that started and broke.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    rows = pl.DataFrame({"group_id": ["g", "g"], "role": ["reference", "variant"],
                         "dimension": "gender", "input": ["He asks.", "She asks."]})  # fmt: skip
    with pytest.raises(pp.JudgeError, match="No API key for OpenAIJudge"):
        pp.score(ROWS, "pairwise-bias", judge=pp.OpenAIJudge("gpt-4o-mini"), cache=False)
    with pytest.raises(pp.JudgeError, match="No API key for OpenAITarget"):
        collect_responses(rows, OpenAITarget("gpt-4o-mini"), cache=False)
    batch = pp.AnthropicBatchJudge("claude-haiku-4-5")
    with pytest.raises(pp.JudgeError, match="No API key for AnthropicBatchJudge"):
        pp.score(ROWS, "pairwise-bias", judge=batch, cache=False)
    err = capsys.readouterr().err
    assert "judging" not in err and "responding" not in err


def test_a_parquet_run_without_a_key_writes_nothing(monkeypatch, tmp_path, capsys) -> None:
    # Else the failed attempt's journal refuses the next run with another judge.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    ROWS.write_parquet(tmp_path / "rows.parquet")
    out = tmp_path / "out"
    for judge in (pp.OpenAIJudge("gpt-4o-mini"), OpenAIBatchJudge("gpt-4o-mini")):
        with pytest.raises(pp.JudgeError, match="No API key"):
            pp.score_parquet(tmp_path / "rows.parquet", out, judge=judge, cache=False)
    assert not out.exists()
    assert "pairs 0/" not in capsys.readouterr().err


def test_a_keyless_target_and_batch_judge(judge_server, tmp_path) -> None:
    rows = pl.DataFrame({"group_id": ["g", "g"], "role": ["reference", "variant"],
                         "dimension": "gender", "input": ["He asks.", "She asks."]})  # fmt: skip
    answered = collect_responses(rows, OpenAITarget("m", base_url=judge_server.base_url),
                                 cache=False, progress=False)  # fmt: skip
    assert answered["output"].is_not_null().all()
    batch = OpenAIBatchJudge("judge-model", base_url=judge_server.base_url, poll_interval=0.02,
                             max_poll_interval=0.05, progress=False,
                             state=tmp_path / "s.sqlite")  # fmt: skip
    scored = pp.score(ROWS, "pairwise-bias", judge=batch, cache=False, progress=False)
    assert scored["error"].is_null().all()
    assert judge_server.stats.batch_calls["batches.create"] >= 1
    assert auth_headers(judge_server) == {None}


def test_the_cli_needs_no_key_for_a_local_server(
    judge_server, tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    ROWS.write_parquet("rows.parquet")
    base = ["score", "rows.parquet", "-o", "s.parquet", "--judge", "judge-model", "--no-cache",
            "-q"]  # fmt: skip
    assert main([*base, "--base-url", judge_server.base_url]) == EXIT_PASS
    monkeypatch.setenv("OPENAI_BASE_URL", judge_server.base_url)
    assert main(base) == EXIT_PASS
    assert auth_headers(judge_server) == {None} and judge_server.stats.requests > 0
    monkeypatch.delenv("OPENAI_BASE_URL")
    capsys.readouterr()
    assert main(base) == EXIT_INVALID
    assert capsys.readouterr().err == (
        "Error: No API key for the model 'judge-model'. Set the OPENAI_API_KEY environment "
        "variable (or name another variable with --api-key-env NAME). For a local server "
        "(vLLM, Ollama, llama.cpp) pass --base-url URL (or set OPENAI_BASE_URL); no key is "
        "needed then.\n"
    )


def test_a_run_the_cache_answers_whole_needs_no_key(judge_server, monkeypatch, tmp_path) -> None:
    # A pull request from a fork runs without secrets; its kept cache may answer every pair.
    import pairwise_polars.engine._base_url as base_url

    monkeypatch.setattr(base_url, "_KEYED_HOSTS", ("127.0.0.1",))  # the server plays OpenAI's API
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    source = tmp_path / "rows.parquet"
    ROWS.write_parquet(source)
    cache = tmp_path / "cache.sqlite"
    keyed = pp.OpenAIJudge("judge-model", base_url=judge_server.base_url, api_key="sk-test-1")
    paid = pp.score_parquet(source, tmp_path / "paid", judge=keyed, cache=cache, progress=False)
    sent = judge_server.stats.requests
    assert sent > 0

    keyless = pp.OpenAIJudge("judge-model", base_url=judge_server.base_url)
    again = pp.score_parquet(source, tmp_path / "again", judge=keyless, cache=cache, progress=False)
    assert again.summary.equals(paid.summary) and judge_server.stats.requests == sent
    with pytest.raises(pp.JudgeError, match="No API key"):  # nothing cached: it says so at once
        pp.score_parquet(source, tmp_path / "new", judge=keyless, cache=tmp_path / "empty.sqlite")
    assert not (tmp_path / "new").exists()

    # The cache answers none of these rows: the first attempt stops at its first request, and
    # its journal, which holds no chunk, does not refuse the next attempt with another judge.
    other = tmp_path / "other.parquet"
    jobs().filter(pl.col("group_id").is_in(ROWS["group_id"].unique()).not_()).head(
        12
    ).write_parquet(other)
    with pytest.raises(pp.JudgeError, match="No API key"):
        pp.score_parquet(other, tmp_path / "o", judge=keyless, cache=cache, progress=False)
    assert (tmp_path / "o" / "run.json").exists()
    offline = pp.score_parquet(other, tmp_path / "o", cache=cache, progress=False)
    assert offline.chunks_resumed == 0 and offline.summary["n_pairs"].sum() > 0
