"""Keys, round two (issue 30, items 3-5): a key in the base URL's query is sent but never shown;
a key echoed cut short is redacted; a short key is redacted only as a token after an auth word,
so the text around it stays readable."""

from __future__ import annotations

import os
import socket
import textwrap
from pathlib import Path

import pytest
from conftest import DATA, jobs

import pairwise_polars as pp
from pairwise_polars.cli import EXIT_INVALID, main
from pairwise_polars.testing import Faults, TestServer

QUERY_KEY = "gw-QUERY-s3cr3t-4711"
TRANSPORTS = ["fast", "sdk"]


def _dead_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_query_key_is_sent_but_never_shown(judge_server: TestServer, transport: str) -> None:
    url = f"{judge_server.base_url}?api-key={QUERY_KEY}"
    judge = pp.OpenAIJudge("judge", base_url=url, transport=transport, backoff_base=0.01)
    assert QUERY_KEY not in repr(judge) and "api-key=***" in repr(judge)
    scored = pp.score(jobs(groups=1), "pairwise-bias", judge=judge, cache=False, progress=False)
    assert scored["error"].is_null().all()
    seen = judge_server.received[-1]
    assert (seen.path, seen.query["api-key"]) == ("/v1/chat/completions", QUERY_KEY)


def test_a_query_key_never_reaches_junit_summary_or_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    (tmp_path / "letters.parquet").write_bytes((DATA / "letters_contrastive.parquet").read_bytes())
    url = f"http://127.0.0.1:{_dead_port()}/v1?api-key={QUERY_KEY}"
    Path("m.yaml").write_text(textwrap.dedent(f"""\
        targets:
          t:
            pairwise:
              data: letters.parquet
              strategy: contrastive
              judge: {{model: judge, base_url: "{url}"}}
              cache: false
        """), encoding="utf-8")  # fmt: skip
    assert main(["run", "m.yaml", "-q", "--junit-xml", "junit.xml"]) == EXIT_INVALID
    err = capsys.readouterr().err
    assert "Cannot reach the server at http://127.0.0.1:" in err and "api-key=***" in err
    junit, summary = Path("junit.xml").read_text(), Path("summary.md").read_text()
    assert "api-key=***" in junit and "api-key=***" in summary
    for text in (err, junit, summary):
        assert QUERY_KEY not in text and "s3cr3t" not in text


def test_a_key_echoed_cut_short_is_redacted(judge_server: TestServer, tmp_path: Path) -> None:
    key = "canaryTOKENzq81DEfg77wq"
    judge_server.reply = lambda body: {
        "score": 1, "reason": f"Incorrect API key provided: {key[:14]}... see docs"
    }  # fmt: skip
    judge = pp.OpenAIJudge("judge", base_url=judge_server.base_url, api_key=key)
    scored = pp.score(jobs(groups=1), "pairwise-bias", judge=judge, cache=tmp_path / "c.sqlite",
                      progress=False)  # fmt: skip
    assert scored["reason"].str.starts_with("Incorrect API key provided: ***... see docs").all()
    scored.write_parquet(tmp_path / "scored.parquet")
    pp.write_report(tmp_path / "report.html", scored)
    for path in tmp_path.iterdir():
        assert b"canaryTOKEN" not in path.read_bytes() and b"zq81DE" not in path.read_bytes()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_short_key_leaves_the_text_around_it_alone(
    judge_server: TestServer, transport: str
) -> None:
    judge_server.reply = lambda body: {"score": 1, "reason": "The latest test shows a gap."}
    judge = pp.OpenAIJudge("judge", base_url=judge_server.base_url, api_key="test",
                           transport=transport)  # fmt: skip
    scored = pp.score(jobs(groups=1), "pairwise-bias", judge=judge, cache=False, progress=False)
    assert (scored["reason"] == "The latest test shows a gap.").all()
    # In an auth context, the whole token is still redacted.
    judge_server.reply = None
    judge_server.faults = Faults(always="500", echo_auth=True)
    judge = pp.OpenAIJudge("judge", base_url=judge_server.base_url, api_key="a",
                           transport=transport, max_retries=0)  # fmt: skip
    scored = pp.score(jobs(groups=1), "pairwise-bias", judge=judge, cache=False, progress=False)
    assert scored["error"].str.contains("Authorization: Bearer ***", literal=True).all()
    intact = "The server had an error while processing your request. Sorry about that!"
    assert scored["error"].str.contains(intact, literal=True).all()


def test_no_test_sees_a_providers_real_key_or_endpoint() -> None:
    # every key variable a manifest may name, and the endpoints judges read, are cleared for
    # each test: a developer's ANTHROPIC_API_KEY or ANTHROPIC_BASE_URL never reaches a judge
    from conftest import PROVIDER_VARIABLES

    from pairwise_polars.manifest._trust import PROVIDER_KEYS

    assert set(PROVIDER_VARIABLES) >= PROVIDER_KEYS
    assert {"OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"} <= set(PROVIDER_VARIABLES)
    assert not set(PROVIDER_VARIABLES) & set(os.environ)
