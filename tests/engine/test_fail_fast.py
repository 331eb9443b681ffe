"""A judge that is not there stops the run in seconds, naming the URL and what to check; on the
command line that is exit 2 (a configuration problem), never 0 and never the gate's 1."""

from __future__ import annotations

import asyncio
import errno
import shutil
import socket
import textwrap
import time
from pathlib import Path

import aiohttp
import polars as pl
import pytest
from conftest import jobs

import pairwise_polars as pp
from pairwise_polars.cli import EXIT_INVALID, main
from pairwise_polars.engine._failures import transport_failure, transport_kind
from pairwise_polars.manifest import load_manifest, run_target
from pairwise_polars.testing import Faults, TestServer

DATA = Path(__file__).resolve().parents[2] / "data"
TRANSPORTS = ["fast", "sdk"]
QUICK_S = 15.0  # generous on a loaded machine; a crawling judge takes minutes


@pytest.fixture
def dead_url() -> str:
    """The base URL of a port with nothing listening (bound once, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_refused_connection_stops_at_once_naming_the_url(dead_url: str, transport: str) -> None:
    judge = pp.OpenAIJudge("judge", base_url=dead_url, api_key="k", transport=transport)
    started = time.perf_counter()
    with pytest.raises(pp.JudgeError) as info:
        pp.score(jobs(groups=20), "pairwise-bias", judge=judge, cache=False, progress=False)
    assert time.perf_counter() - started < QUICK_S
    message = str(info.value)
    assert message.startswith(f"Cannot reach the server at {dead_url}: connection refused. ")
    assert "base_url (or OPENAI_BASE_URL)" in message


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_target_fails_fast_too(dead_url: str, transport: str) -> None:
    target = pp.OpenAITarget("m", base_url=dead_url, api_key="k", transport=transport)
    rows = pl.DataFrame({"group_id": ["g1", "g1"], "role": ["reference", "variant"],
                         "dimension": "gender", "input": ["He asks.", "She asks."]})  # fmt: skip
    with pytest.raises(pp.JudgeError, match=f"Cannot reach the server at {dead_url}"):
        pp.collect_responses(rows, target, cache=False, progress=False)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_server_that_drops_every_connection_stops_the_run(
    judge_server: TestServer, transport: str, tmp_path: Path
) -> None:
    judge_server.faults = Faults(always="connection_drop")
    judge = pp.OpenAIJudge("judge", base_url=judge_server.base_url, api_key="k",
                           max_concurrency=8, transport=transport)  # fmt: skip
    started = time.perf_counter()
    with pytest.raises(pp.JudgeError) as info:
        pp.score(jobs(groups=20), "pairwise-bias", judge=judge, cache=tmp_path / "c.sqlite",
                 progress=False)  # fmt: skip
    assert time.perf_counter() - started < QUICK_S
    assert str(info.value).startswith(
        f"The first 20 attempts at {judge_server.base_url} all failed and none was answered "
        "(the last: connection dropped before an answer). Check that the server at "
    )
    # it stopped after about 20 attempts, not after 7 attempts for every row
    assert 20 <= judge_server.stats.outcomes["connection_drop"] < 20 + 2 * 8


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_flaky_connections_are_retried_not_fatal(judge_server: TestServer, transport: str) -> None:
    judge_server.faults = Faults(rate_connection_drop=0.4)
    judge = pp.OpenAIJudge("judge", base_url=judge_server.base_url, api_key="k",
                           max_concurrency=1, backoff_base=0.01, transport=transport)  # fmt: skip
    scored = pp.score(jobs(groups=8), "pairwise-bias", judge=judge, cache=False, progress=False)
    assert judge_server.stats.outcomes["connection_drop"] > 0
    assert scored["error"].is_null().all()


def _manifest(tmp_path: Path, url: str) -> Path:
    shutil.copy(DATA / "letters_contrastive.parquet", tmp_path / "letters.parquet")
    path = tmp_path / "m.yaml"
    path.write_text(textwrap.dedent(f"""\
        targets:
          demo:
            pairwise:
              data: letters.parquet
              strategy: contrastive
              metrics: [pairwise-bias]
              judge: {{model: judge, base_url: "{url}"}}
              cache: false
        """), encoding="utf-8")  # fmt: skip
    return path


def test_a_manifest_run_against_nothing_stops_with_judge_error(
    tmp_path: Path, dead_url: str
) -> None:
    target = load_manifest(_manifest(tmp_path, dead_url)).targets["demo"]
    with pytest.raises(pp.JudgeError, match=f"Cannot reach the server at {dead_url}"):
        run_target(target, progress=False)


def test_cli_run_exits_2_in_seconds(tmp_path: Path, dead_url: str, capsys) -> None:
    path = _manifest(tmp_path, dead_url)
    started = time.perf_counter()
    assert main(["run", str(path), "-q"]) == EXIT_INVALID
    assert time.perf_counter() - started < QUICK_S
    err = capsys.readouterr().err
    assert f"Cannot reach the server at {dead_url}" in err
    # The manifest's words: its judge block's key, not a Python keyword or a flag.
    assert "base_url: in the judge block (or OPENAI_BASE_URL)" in err


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_cli_score_exits_2_in_seconds(
    tmp_path: Path, dead_url: str, capsys, monkeypatch: pytest.MonkeyPatch, transport: str
) -> None:
    shutil.copy(DATA / "letters_contrastive.parquet", tmp_path / "letters.parquet")
    monkeypatch.chdir(tmp_path)
    started = time.perf_counter()
    code = main(["score", "letters.parquet", "--strategy", "contrastive", "-o", "s.parquet",
                 "-q", "--judge", "judge", "--base-url", dead_url, "--no-cache",
                 "--transport", transport])  # fmt: skip
    assert code == EXIT_INVALID
    assert time.perf_counter() - started < QUICK_S
    err = capsys.readouterr().err
    assert err.startswith(f"Error: Cannot reach the server at {dead_url}: connection refused.")
    assert "that --base-url (or OPENAI_BASE_URL) names it" in err  # the flag, in CLI words
    assert not (tmp_path / "s.parquet").exists()


def _caused_by(cause: BaseException) -> Exception:
    wrapper = Exception("Request timed out.")  # what the SDK's aiohttp transport says for all
    wrapper.__cause__ = cause
    return wrapper


@pytest.mark.parametrize(
    ("cause", "kind"),
    [
        (ConnectionRefusedError(errno.ECONNREFUSED, "Connect call failed"), "refused"),
        (socket.gaierror(socket.EAI_NONAME, "Name or service not known"), "dns"),
        (OSError(errno.EHOSTUNREACH, "No route to host"), "unreachable"),
        (aiohttp.ServerDisconnectedError(), "dropped"),
        (asyncio.TimeoutError(), "timeout"),
        (ValueError("something else"), "error"),
    ],
)
def test_the_cause_chain_says_what_failed(cause: BaseException, kind: str) -> None:
    assert transport_kind(_caused_by(cause)) == kind
    assert transport_failure(_caused_by(cause), 5.0).transport == kind


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_both_transports_use_the_proxy_the_environment_names(
    judge_server: TestServer, transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The test server plays the proxy: it answers the absolute-form requests a client sends to
    # an HTTP proxy; the judge's own host does not resolve, so only the proxy can answer.
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{judge_server.port}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    judge = pp.OpenAIJudge("judge", base_url="http://judge.invalid:8000/v1", api_key="k",
                           transport=transport)  # fmt: skip
    scored = pp.score(jobs(groups=1), "pairwise-bias", judge=judge, cache=False, progress=False)
    assert scored["error"].is_null().all()
    assert judge_server.stats.requests == scored.height


def test_no_proxy_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    from pairwise_polars.engine._wire import env_proxy

    for name in ("HTTP_PROXY", "http_proxy", "https_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,internal.example")
    assert env_proxy("https://api.example/v1/chat/completions") == "http://proxy.example:3128"
    assert env_proxy("https://internal.example/v1/chat/completions") is None
    assert env_proxy("http://api.example/v1/chat/completions") is None  # no HTTP_PROXY set
