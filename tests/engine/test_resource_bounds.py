"""What a request may cost, whatever the server does (issue 30, items 11, 12, 14, 15 and the TLS
message and the huge output of 23): a dripping server, a host that never accepts, huge answers and
gzip bombs, a 10 MB output, over real sockets on both transports."""

from __future__ import annotations

import time

import polars as pl
import pytest
from conftest import jobs

import pairwise_polars as pp
from pairwise_polars.testing import HostileMode, HostileServer, TestServer

TRANSPORTS = ["fast", "sdk"]


def _judge(url: str, transport: str, **options: object) -> pp.OpenAIJudge:
    options = {"backoff_base": 0.01, "max_retries": 0, "max_concurrency": 2, **options}
    return pp.OpenAIJudge("judge", base_url=url, api_key="k", transport=transport, **options)


def _score(judge: pp.OpenAIJudge) -> pl.DataFrame:
    return pp.score(jobs(groups=1), "pairwise-bias", judge=judge, cache=False, progress=False)


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("mode", ["drip-headers", "drip-body"])
def test_a_dripping_server_is_cut_off_at_the_timeout(transport: str, mode: str) -> None:
    # a byte every 0.1 s: no single read waits long, only the whole answer does
    with HostileServer(mode, interval=0.1) as server:
        started = time.perf_counter()
        scored = _score(_judge(server.base_url, transport, timeout=0.6))
        elapsed = time.perf_counter() - started
    assert elapsed < 4.0
    assert scored["score"].is_null().all()
    assert scored["error"].str.starts_with("timeout (no complete answer within 0.6 s)").all()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_host_that_never_accepts_stops_the_run_at_the_connect_timeout(transport: str) -> None:
    with HostileServer("never-accept") as server:
        started = time.perf_counter()
        with pytest.raises(pp.JudgeError) as info:
            _score(_judge(server.base_url, transport, connect_timeout=0.3, max_retries=6))
        elapsed = time.perf_counter() - started
    assert elapsed < 3.0
    assert f"Cannot reach the server at {server.base_url}: no connection within " in str(info.value)


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("mode", ["huge", "gzip-bomb"])
def test_an_oversize_answer_is_an_error_row_not_retried(transport: str, mode: str) -> None:
    with HostileServer(mode, size=3 * 2**20) as server:
        judge = _judge(server.base_url, transport, max_response_bytes=2**20, max_retries=3)
        scored = _score(judge)
    assert scored["score"].is_null().all() and (scored["attempts"] == 1).all()
    assert (
        scored["error"]
        .str.contains("larger than max_response_bytes (1,048,576 bytes)", literal=True)
        .all()
    )


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_https_to_a_plain_http_port_says_so(judge_server: TestServer, transport: str) -> None:
    url = judge_server.base_url.replace("http://", "https://")
    with pytest.raises(pp.JudgeError, match=r"TLS handshake failed .*use http://"):
        _score(_judge(url, transport))


def test_max_concurrency_is_bounded() -> None:
    with pytest.raises(pp.OptionError, match="max_concurrency must be from 1 to 4096, got 10"):
        pp.OpenAIJudge("judge", max_concurrency=1_000_000_000)
    with pytest.raises(pp.OptionError, match="max_response_bytes must be at least 1024"):
        pp.OpenAIJudge("judge", max_response_bytes=10)


def test_one_huge_output_is_one_unjudged_pair_not_an_abort(judge_server: TestServer) -> None:
    rows = jobs(groups=3)  # issue 30, item 23: one 10 MB output among ordinary ones
    huge = pl.int_range(pl.len()) == 0
    big = pl.when(huge).then(pl.lit("x" * 10_000_000)).otherwise("output")
    rows = rows.with_columns(big.alias("output"))
    scored = pp.score(rows, "pairwise-bias", judge=_judge(judge_server.base_url, "fast"),
                      cache=False, progress=False)  # fmt: skip
    too_long = scored["error"].str.contains("texts too long to judge").fill_null(False)
    assert too_long.sum() == 2  # the huge row's pair, in both orders
    assert scored.filter(too_long)["score"].is_null().all()
    assert scored.filter(~too_long)["error"].is_null().all()  # the others judged
    assert judge_server.stats.requests == scored.height - 2  # the huge pair never sent


@pytest.mark.parametrize("mode", ["drip-body", "never-accept", "gzip-bomb"])
def test_the_anthropic_judge_has_the_same_bounds(mode: HostileMode) -> None:
    options = {"timeout": 0.6, "connect_timeout": 0.3, "max_response_bytes": 2**20}
    with HostileServer(mode, interval=0.1, size=3 * 2**20) as server:
        judge = pp.AnthropicJudge("judge", base_url=server.base_url, api_key="k",
                                  backoff_base=0.01, max_retries=0, **options)  # fmt: skip
        started = time.perf_counter()
        if mode == "never-accept":
            with pytest.raises(pp.JudgeError, match="no connection within "):
                pp.score(jobs(groups=1), "pairwise-bias", judge=judge, cache=False, progress=False)
            scored = None
        else:
            scored = pp.score(jobs(groups=1), "pairwise-bias", judge=judge, cache=False,
                              progress=False)  # fmt: skip
    assert time.perf_counter() - started < 4.0
    if scored is not None:
        says = (
            "timeout (no complete answer within 0.6 s)"
            if mode == "drip-body"
            else "larger than max_response_bytes (1,048,576 bytes)"
        )
        errors = scored["error"].str.contains(says, literal=True)
        assert scored["score"].is_null().all() and errors.all()
