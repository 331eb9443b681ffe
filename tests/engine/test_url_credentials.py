"""A base URL with a user name and password (``http://user:pw@host/v1``): beside a key's
Authorization header, or on the SDK transport, they cannot be sent, and every request failed as a
"connection error" or "the reply is not JSON" that sent the user to check the server. Now it is
an OptionError before anything is sent, with the password masked; without a key the fast
transport sends them (Basic auth) as before."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import jobs

import pairwise_polars as pp
from pairwise_polars.cli import EXIT_INVALID, main
from pairwise_polars.testing import TestServer

PASSWORD = "url-PASSWORD-s3cr3t-99"


def _url(server: TestServer) -> str:
    return server.base_url.replace("http://", f"http://alice:{PASSWORD}@")


@pytest.mark.parametrize(("transport", "key"), [("fast", "sk-made-up-key-1234567890"),
                                                ("sdk", "sk-made-up-key-1234567890"),
                                                ("sdk", None)])  # fmt: skip
def test_url_credentials_that_cannot_be_sent_are_refused_before_any_request(
    judge_server: TestServer, transport: str, key: str | None
) -> None:
    judge = pp.OpenAIJudge("judge", base_url=_url(judge_server), api_key=key, transport=transport)
    with pytest.raises(pp.OptionError, match=r"http://alice:\*\*\*@127\.0\.0\.1:") as caught:
        pp.score(jobs(groups=1), "pairwise-bias", judge=judge, cache=False, progress=False)
    assert PASSWORD not in str(caught.value) and "carries a user name and password" in str(
        caught.value
    )
    assert judge_server.received == []


def test_url_credentials_without_a_key_still_reach_the_server(judge_server: TestServer) -> None:
    judge = pp.OpenAIJudge("judge", base_url=_url(judge_server), transport="fast")
    scored = pp.score(jobs(groups=1), "pairwise-bias", judge=judge, cache=False, progress=False)
    assert scored["error"].is_null().all() and len(judge_server.received) > 0


def test_the_cli_exits_2_and_never_shows_the_password(
    judge_server: TestServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-made-up-key-1234567890")
    jobs(groups=1).write_parquet("rows.parquet")
    argv = ["score", "rows.parquet", "-o", "scored.parquet", "--judge", "judge", "--no-cache"]
    assert main([*argv, "--base-url", _url(judge_server)]) == EXIT_INVALID
    captured = capsys.readouterr()
    assert "carries a user name and password" in captured.err
    assert PASSWORD not in captured.err + captured.out
    assert judge_server.received == []
