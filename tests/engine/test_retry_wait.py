"""Retry-After is honoured up to ``max_retry_wait``: a longer wait is never slept; the request
becomes an error row saying how long the server asked for, and a run where every request gets
one stops as a judge error."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import polars as pl
import pytest
from conftest import jobs

import pairwise_polars as pp
from pairwise_polars.cli import EXIT_INVALID, main
from pairwise_polars.engine._retries import retry_after
from pairwise_polars.testing import Faults, TestServer

TRANSPORTS = ["fast", "sdk"]
QUICK_S = 15.0


def judge_for(server: TestServer, **options) -> pp.OpenAIJudge:
    options.setdefault("backoff_base", 0.01)
    return pp.OpenAIJudge("judge", base_url=server.base_url, api_key="k", **options)


def score(server: TestServer, groups: int = 2, **options) -> pl.DataFrame:
    return pp.score(jobs(groups=groups), "pairwise-bias", judge=judge_for(server, **options),
                    cache=False, progress=False)  # fmt: skip


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize(
    ("headers", "asked"),
    [
        ({"retry_after_header": "1000000000"}, "1e+09 s"),
        ({"retry_after_header": "inf"}, "forever"),
        ({"retry_after_ms_header": "1e12"}, "1e+09 s"),
        ({"retry_after_header": "61"}, "61 s"),
    ],
)
def test_a_wait_beyond_the_cap_is_an_error_row_not_a_sleep(
    judge_server: TestServer, transport: str, headers: dict[str, str], asked: str
) -> None:
    judge_server.faults = Faults(always="429", **headers)
    started = time.perf_counter()
    scored = score(judge_server, transport=transport)
    assert time.perf_counter() - started < QUICK_S
    assert scored["score"].is_null().all()
    assert (scored["attempts"] == 1).all()  # not retried
    expected = (
        "HTTP 429: Rate limit reached for requests. Please try again in 0.05s. (the server "
        f"asked to wait {asked} before retrying, more than max_retry_wait=60 s; not retried)"
    )
    assert scored["error"].unique().to_list() == [expected]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_cap_is_a_setting(judge_server: TestServer, transport: str) -> None:
    judge_server.faults = Faults(always="429", retry_after_header="2")
    scored = score(judge_server, groups=1, transport=transport, max_retry_wait=1.5)
    assert scored["error"].str.contains("more than max_retry_wait=1.5 s").all()
    judge_server.faults = Faults(rate_429=0.5, retry_after=0.05)
    ok = score(judge_server, transport=transport, max_retry_wait=0.1)
    assert ok["error"].is_null().all() and judge_server.stats.outcomes["429"] > 0


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("value", ["nan", "-5", "soon"])
def test_unusable_values_fall_back_to_backoff(
    judge_server: TestServer, transport: str, value: str
) -> None:
    judge_server.faults = Faults(always="429", retry_after_header=value)
    scored = score(judge_server, groups=1, transport=transport, max_retries=1)
    assert scored["error"].str.ends_with("(gave up after 2 attempts)").all()
    assert not scored["error"].str.contains("max_retry_wait").any()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_run_where_every_request_must_wait_too_long_stops(
    judge_server: TestServer, transport: str
) -> None:
    judge_server.faults = Faults(always="429", retry_after_header="1000000000")
    with pytest.raises(pp.JudgeError) as info:
        score(judge_server, groups=20, transport=transport)
    assert str(info.value).startswith(
        f"The first 20 attempts at {judge_server.base_url} all failed and none was answered "
        "(the last: HTTP 429: Rate limit reached for requests. Please try again in 0.05s. "
        "(the server asked to wait 1e+09 s before retrying"
    )


def test_retry_after_reads_seconds_milliseconds_and_dates() -> None:
    assert retry_after({"retry-after": "2"}) == 2.0
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after({"retry-after-ms": "nan", "retry-after": "3"}) == 3.0
    assert retry_after({"retry-after": "inf"}) == float("inf")
    assert retry_after({"retry-after": "-1"}) is None
    later = datetime.now(timezone.utc) + timedelta(seconds=120)
    seconds = retry_after({"retry-after": format_datetime(later, usegmt=True)})
    assert seconds is not None and 100 < seconds <= 121
    assert retry_after({}) is None


def test_max_retry_wait_must_be_a_number_of_seconds() -> None:
    with pytest.raises(pp.OptionError, match="max_retry_wait must be a number of seconds >= 0"):
        pp.OpenAIJudge("m", max_retry_wait=float("nan"))
    with pytest.raises(pp.OptionError, match="transport must be one of 'fast', 'sdk'"):
        pp.OpenAIJudge("m", transport="curl")  # type: ignore[arg-type]


def test_the_manifest_and_the_cli_take_the_settings(tmp_path, monkeypatch, capsys) -> None:
    from pairwise_polars.manifest import load_manifest
    from pairwise_polars.manifest._schema import validate

    path = tmp_path / "m.yaml"
    block = "{model: judge, max_retry_wait: 5, transport: sdk}"
    path.write_text(f"targets:\n  t:\n    pairwise:\n      data: x.parquet\n      judge: {block}\n")
    rows = {"group_id": [1], "role": ["reference"], "dimension": ["g"], "input": ["a"]}
    pl.DataFrame({**rows, "output": ["b"]}).write_parquet(tmp_path / "x.parquet")
    spec = load_manifest(path).targets["t"].judge
    assert spec.options["max_retry_wait"] == 5 and spec.options["transport"] == "sdk"
    path.write_text(path.read_text().replace("sdk", "curl"))
    _, problems = validate(path)
    assert [p.key for p in problems] == ["targets.t.pairwise.judge.transport"]
    assert problems[0].message.startswith("expected one of fast, sdk (fast: aiohttp directly")
    monkeypatch.chdir(tmp_path)
    assert main(["respond", "x.parquet", "--model", "m", "-o", "r.parquet",
                 "--max-retry-wait", "-1"]) == EXIT_INVALID  # fmt: skip
    assert "--max-retry-wait: must be a number of at least 0, got -1" in capsys.readouterr().err
