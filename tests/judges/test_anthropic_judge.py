"""AnthropicJudge over real HTTP against the test server's Messages dialect: the same
conformance scenarios as the OpenAI judge (retries, faults, fatal errors, concurrency, cache,
the key never written), its wire format, and the judge built from Python, a manifest and the
command line."""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from conftest import jobs

import pairwise_polars as pp
from pairwise_polars.cli import EXIT_PASS, main
from pairwise_polars.manifest import load_manifest, run_target
from pairwise_polars.testing import Faults, TestServer
from pairwise_polars.testing.fixtures import make_judge_server_fixtures

keyed_server_session, keyed_server = make_judge_server_fixtures(
    "keyed_server", api_key="sk-ant-SECRET-123456", models=["claude-judge"]
)
KEY = "sk-ant-SECRET-123456"
MODEL = "claude-judge"

SCENARIOS: dict[str, tuple[Faults, dict[str, Any], str]] = {  # faults, judge options, outcome
    "429 with retry-after": (Faults(rate_429=0.5), {}, "429"),
    "529 overloaded": (Faults(rate_529=0.5), {"max_retries": 2}, "529"),
    "500": (Faults(rate_500=0.5), {"max_retries": 1}, "500"),
    "429 asking too long": (Faults(always="429", retry_after_header="1000000000"), {}, "429"),
    "timeout": (Faults(rate_timeout=0.4, timeout_delay=4.0), {"timeout": 1.0,
                                                              "max_retries": 1}, "timeout"),
    "malformed": (Faults(rate_malformed=0.5), {}, "malformed"),
    "off rubric": (Faults(rate_off_rubric=0.5), {"reask": False}, "off_rubric"),
    "connection drop": (Faults(rate_connection_drop=0.5), {}, "connection_drop"),
    "echoed key": (Faults(rate_500=0.5, echo_auth=True), {"max_retries": 0}, "500"),
}  # fmt: skip


def judge_of(provider: str, server: TestServer, **options: Any) -> Any:
    options = {"backoff_base": 0.01, "max_concurrency": 1, **options}
    kind = pp.AnthropicJudge if provider == "anthropic" else pp.OpenAIJudge
    return kind(MODEL, base_url=server.base_url, api_key=KEY, **options)


def run(judge: Any, groups: int = 3, **options: Any) -> pl.DataFrame:
    options = {"cache": False, "progress": False, **options}
    return pp.score(jobs(groups=groups), "pairwise-bias", judge=judge, **options)


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_faults_play_out_as_for_the_openai_judge(keyed_server: TestServer, scenario: str) -> None:
    faults, options, outcome = SCENARIOS[scenario]
    frames, played = {}, {}
    for provider in ("openai", "anthropic"):
        keyed_server.reset()
        keyed_server.faults = faults
        frames[provider] = run(judge_of(provider, keyed_server, **options))
        played[provider] = keyed_server.stats.outcomes
    assert played["anthropic"][outcome] > 0  # the fault was really played
    assert played["anthropic"] == played["openai"]
    # The same requests failed, after the same attempts; errors name the failure, never a score.
    shape = ["pair_id", "attempts", pl.col("error").is_null().alias("ok"), "raw_score"]
    openai, anthropic = (frames[p].sort("pair_id") for p in ("openai", "anthropic"))
    assert openai.select(shape[:3]).equals(anthropic.select(shape[:3]))
    assert anthropic.filter(pl.col("error").is_not_null())["score"].null_count() == (
        anthropic["error"].is_not_null().sum()
    )
    assert b"SECRET" not in anthropic.write_csv().encode()


@pytest.mark.parametrize(
    ("fault", "says"),
    [("401", "ANTHROPIC_API_KEY"), ("404", "does not know model"), ("quota", "credit balance")],
)
def test_fatal_answers_stop_the_run(keyed_server: TestServer, fault: str, says: str) -> None:
    keyed_server.faults = Faults(always=fault, echo_auth=True)  # type: ignore[arg-type]
    with pytest.raises(pp.JudgeError) as caught:
        run(judge_of("anthropic", keyed_server))
    assert says in str(caught.value) and "SECRET" not in str(caught.value)
    assert keyed_server.stats.requests == 1  # no retry can fix these


def test_the_wire_is_the_messages_api(keyed_server: TestServer) -> None:
    scored = run(judge_of("anthropic", keyed_server), groups=2)
    assert scored["error"].is_null().all() and scored["input_tokens"].min() > 0  # type: ignore[operator]
    seen = keyed_server.received[0]
    assert seen.path == "/v1/messages"
    assert seen.headers["x-api-key"] == "***" and "authorization" not in seen.headers
    assert seen.headers["anthropic-version"] == "2023-06-01"
    body = seen.body
    assert body["max_tokens"] == 300 and body["temperature"] == 0.0
    assert "impartial" in body["system"] and {m["role"] for m in body["messages"]} == {"user"}
    assert body["tool_choice"] == {"type": "tool", "name": "judgement"}
    assert body["tools"][0]["input_schema"]["properties"]["score"]["enum"] == [0, 1, 2, 3, 4]


def test_plain_prompting_and_the_key_from_the_environment(
    keyed_server: TestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", keyed_server.base_url)
    judge = pp.AnthropicJudge(MODEL, structured_output=False)
    scored = run(judge, groups=2)
    assert scored["error"].is_null().all()
    assert "tools" not in keyed_server.received[0].body
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(pp.JudgeError, match="ANTHROPIC_API_KEY"):  # Anthropic's API needs one
        run(pp.AnthropicJudge(MODEL))


def test_concurrency_is_bounded(keyed_server: TestServer) -> None:
    keyed_server.latency = 0.05
    scored = run(judge_of("anthropic", keyed_server, max_concurrency=4), groups=10)
    assert scored["error"].is_null().all()
    assert keyed_server.stats.max_in_flight == 4


def test_the_cache_answers_again_and_never_holds_the_key(
    keyed_server: TestServer, tmp_path: Path
) -> None:
    keyed_server.faults = Faults(rate_500=0.3, echo_auth=True)
    cache = tmp_path / "cache.sqlite"
    first = run(judge_of("anthropic", keyed_server, max_retries=0), cache=cache)
    sent = keyed_server.stats.requests
    keyed_server.faults = Faults()
    again = run(judge_of("anthropic", keyed_server, max_retries=0), cache=cache)
    # Answers came from the cache; the failed requests (never cached) were sent again.
    assert again.sort("pair_id")["cached"].equals(
        first.sort("pair_id")["error"].is_null().alias("cached")
    )
    assert 0 < keyed_server.stats.requests - sent == first["error"].is_not_null().sum()
    # Another provider's judge of the same name at the same server is another endpoint.
    assert not run(judge_of("openai", keyed_server), cache=cache)["cached"].any()
    assert b"SECRET" not in cache.read_bytes()


def test_a_manifest_and_the_command_line_build_it(
    keyed_server: TestServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    jobs(groups=30).write_parquet(tmp_path / "jobs.parquet")
    (tmp_path / "m.yaml").write_text(textwrap.dedent(f"""
        targets:
          demo:
            pairwise:
              data: jobs.parquet
              metrics: [pairwise-bias]
              judge: {{provider: anthropic, model: {MODEL}, base_url: "{keyed_server.base_url}"}}
              cache: false
        """))  # fmt: skip
    target = load_manifest(tmp_path / "m.yaml").targets["demo"]
    assert isinstance(target.judge.build(), pp.AnthropicJudge)
    scored = run_target(target, progress=False).scored
    assert scored is not None and scored["error"].is_null().all()
    out = tmp_path / "scored.parquet"
    args = ["score", str(tmp_path / "jobs.parquet"), "-o", str(out), "--judge", MODEL,
            "--judge-provider", "anthropic", "--base-url", keyed_server.base_url,
            "--quiet"]  # fmt: skip
    assert main(args) == EXIT_PASS
    assert pl.read_parquet(out)["error"].is_null().all()
    assert {r.path for r in keyed_server.received} == {"/v1/messages"}


def test_openai_settings_are_refused(tmp_path: Path) -> None:
    with pytest.raises(pp.OptionError, match="seed"):
        pp.judges.build_judge(MODEL, provider="anthropic", seed=1)
    with pytest.raises(pp.OptionError, match="transport"):
        pp.AnthropicJudge(MODEL, transport="sdk")
    path = tmp_path / "m.yaml"
    path.write_text("targets:\n  t:\n    pairwise:\n      data: x.parquet\n      judge: "
                    "{provider: anthropic, model: m, seed: 3}\n")  # fmt: skip
    with pytest.raises(pp.ManifestError, match="seed is an OpenAI setting"):
        load_manifest(path)
    assert json.dumps(pp.AnthropicJudge(MODEL, api_key=KEY).identity).count("SECRET") == 0


def test_a_spent_budget_pauses_every_worker_until_its_reset(keyed_server: TestServer) -> None:
    # 429s without a usable retry-after, but with anthropic-ratelimit-requests-remaining: 0 and
    # its reset 1 s ahead: no request is sent again before the reset (backoff alone: ~0.01 s)
    keyed_server.faults = Faults(always="429", retry_after=1.0, retry_after_header="nan")
    judge = judge_of("anthropic", keyed_server, max_concurrency=4, max_retries=1)
    started = time.monotonic()
    scored = run(judge, groups=2)
    assert time.monotonic() - started >= 0.9
    assert scored["error"].str.contains("HTTP 429").all()
    assert keyed_server.stats.requests == 2 * scored.height  # each tried twice, no more
    # the pause is capped like a retry-after: a reset a minute ahead is not waited for
    keyed_server.reset()
    keyed_server.faults = Faults(always="429", retry_after=60.0, retry_after_header="nan")
    started = time.monotonic()
    run(judge_of("anthropic", keyed_server, max_retries=1, max_retry_wait=0.2), groups=1)
    assert time.monotonic() - started < 30


def test_rate_limit_headers_read_as_anthropic_writes_them() -> None:
    from pairwise_polars.engine._pacing import spent_for

    now = 1_800_000_000.0
    reset = "2027-01-15T08:00:02.500+00:00"  # 2.5 s after `now`
    spent = {"anthropic-ratelimit-tokens-remaining": "0", "anthropic-ratelimit-tokens-reset": reset,
             "anthropic-ratelimit-requests-remaining": "12",
             "anthropic-ratelimit-requests-reset": reset}  # fmt: skip
    assert spent_for(spent, now=now) == pytest.approx(2.5)
    assert spent_for({**spent, "anthropic-ratelimit-tokens-remaining": "5"}, now=now) is None
    assert spent_for({**spent, "anthropic-ratelimit-tokens-reset": "soon"}, now=now) is None
    assert spent_for({}, now=now) is None
