"""The fast path and the SDK path are the same on the wire and in their results: for each kind
of request and each fault the test server plays, both send byte-identical requests (headers in
order, and bodies) and produce identical result frames, error rows and judge errors."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from conftest import jobs
from polars.testing import assert_frame_equal

import pairwise_polars as pp
from pairwise_polars.testing import Faults, TestServer
from pairwise_polars.testing.fixtures import make_judge_server_fixtures

wire_server_session, wire_server = make_judge_server_fixtures("wire_server", capture=True)
plain_server_session, plain_server = make_judge_server_fixtures(
    "plain_server", capture=True, supports_json_schema=False
)
KEY = "sk-test-SECRET-123"

SCENARIOS: dict[str, tuple[Faults, dict[str, Any], str]] = {  # faults, judge options, outcome
    "ok": (Faults(), {}, "ok"),
    "429 with Retry-After": (Faults(rate_429=0.5), {}, "429"),
    "429 asking too long": (Faults(always="429", retry_after_header="1000000000"), {}, "429"),
    "429 with NaN": (Faults(rate_429=0.5, retry_after_header="nan"), {}, "429"),
    "500": (Faults(rate_500=0.5), {"max_retries": 1}, "500"),
    "timeout": (
        Faults(rate_timeout=0.5, timeout_delay=4.0),
        {"timeout": 1.0, "max_retries": 1},
        "timeout",
    ),
    "malformed": (Faults(rate_malformed=0.5), {}, "malformed"),
    "off rubric": (Faults(rate_off_rubric=0.5), {"reask": False}, "off_rubric"),
    "connection drop": (Faults(rate_connection_drop=0.5), {}, "connection_drop"),
    "echoed key": (Faults(rate_500=0.5, echo_auth=True), {"max_retries": 0}, "500"),
}
FATAL = {
    "401": Faults(always="401"),
    "404": Faults(always="404"),
    "quota": Faults(always="quota"),
    "401 echoing the key": Faults(always="401", echo_auth=True),
}


def _judge(server: TestServer, transport: str, **options: Any) -> pp.OpenAIJudge:
    options = {"backoff_base": 0.01, "max_concurrency": 1, **options}
    return pp.OpenAIJudge("judge", base_url=server.base_url, api_key=KEY, transport=transport,
                          **options)  # fmt: skip


def _wire(server: TestServer) -> list[tuple[list[tuple[str, str]], bytes]]:
    return [(list(seen.headers.items()), seen.body) for seen in server.captured]


def _run_both(server: TestServer, faults: Faults, run: Any) -> tuple[list[Any], list[Any]]:
    """``run(transport)`` on each transport from the same server state: (results, wires)."""
    results, wires, played = [], [], []
    for transport in ("fast", "sdk"):
        server.reset()
        server.faults = faults
        results.append(run(transport))
        wires.append(_wire(server))
        played.append(server.stats.outcomes)
    assert played[0] == played[1]  # the same faults were played to both
    return results, wires


def _same_frames(fast: pl.DataFrame, sdk: pl.DataFrame) -> None:
    assert_frame_equal(fast.drop("latency_s").sort("pair_id", "metric"),
                       sdk.drop("latency_s").sort("pair_id", "metric"))  # fmt: skip


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_both_transports_send_and_score_the_same(wire_server: TestServer, scenario: str) -> None:
    faults, options, outcome = SCENARIOS[scenario]

    def run(transport: str) -> pl.DataFrame:
        judge = _judge(wire_server, transport, **options)
        return pp.score(jobs(groups=3), "pairwise-bias", judge=judge, cache=False, progress=False)

    (fast, sdk), (fast_wire, sdk_wire) = _run_both(wire_server, faults, run)
    assert wire_server.stats.outcomes[outcome] > 0  # the fault was really played
    _same_frames(fast, sdk)
    assert fast_wire == sdk_wire and len(fast_wire) >= fast.height
    assert b"SECRET" not in pl.concat([fast, sdk]).write_csv().encode()


def test_the_plain_json_fallback_is_the_same(plain_server: TestServer) -> None:
    def run(transport: str) -> pl.DataFrame:
        judge = _judge(plain_server, transport)
        return pp.score(jobs(groups=2), "pairwise-bias", judge=judge, cache=False, progress=False)

    (fast, sdk), (fast_wire, sdk_wire) = _run_both(plain_server, Faults(), run)
    _same_frames(fast, sdk)
    assert fast["error"].is_null().all()
    assert fast_wire == sdk_wire
    assert b"response_format" in fast_wire[0][1] and b"response_format" not in fast_wire[-1][1]


@pytest.mark.parametrize("fault", list(FATAL))
def test_fatal_errors_are_the_same(wire_server: TestServer, fault: str) -> None:
    def run(transport: str) -> str:
        judge = _judge(wire_server, transport)
        with pytest.raises(pp.JudgeError) as info:
            pp.score(jobs(groups=2), "pairwise-bias", judge=judge, cache=False, progress=False)
        return str(info.value)

    (fast, sdk), (fast_wire, sdk_wire) = _run_both(wire_server, FATAL[fault], run)
    assert fast == sdk and "SECRET" not in fast
    assert fast_wire == sdk_wire


def test_the_target_is_the_same_on_both(wire_server: TestServer) -> None:
    rows = pl.DataFrame({"group_id": ["g1"] * 3 + ["g2"] * 3,
                         "role": ["reference", "variant", "variant"] * 2, "dimension": "gender",
                         "input": ["He asks.", "She asks.", "They ask.", "Mr. Lee applies.",
                                   "Ms. Lee applies.", "Mx. Lee applies."]})  # fmt: skip

    def run(transport: str) -> pl.DataFrame:
        target = pp.OpenAITarget("target", base_url=wire_server.base_url, api_key=KEY, seed=1,
                                 max_concurrency=1, backoff_base=0.01, max_retries=0,
                                 transport=transport)  # fmt: skip
        return pp.collect_responses(rows, target, cache=False, progress=False)

    (fast, sdk), (fast_wire, sdk_wire) = _run_both(wire_server, Faults(rate_500=0.4), run)
    assert_frame_equal(fast.drop("latency_s"), sdk.drop("latency_s"))
    assert fast["error"].is_not_null().any() and fast["output"].is_not_null().any()
    assert fast_wire == sdk_wire
