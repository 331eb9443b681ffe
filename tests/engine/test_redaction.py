"""A server that echoes the bearer token in its error body (some proxies do) never gets the key
into an exception, the command line's output, the scored parquet, the report or the cache."""

from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path

import openai
import polars as pl
import pytest
from conftest import jobs
from hypothesis import given, settings
from hypothesis import strategies as st

import pairwise_polars as pp
from pairwise_polars.cli import EXIT_INCONCLUSIVE, EXIT_INVALID, main
from pairwise_polars.engine._failures import (
    _AUTH_WORD,
    SHORT_KEY,
    _without_runs,
    redact,
    redact_secrets,
)
from pairwise_polars.testing import Faults, TestServer

KEY = "sk-test-SECRET-123"
TRANSPORTS = ["fast", "sdk"]
DATA = Path(__file__).resolve().parents[2] / "data"


def judge_for(server: TestServer, **options) -> pp.OpenAIJudge:
    options.setdefault("backoff_base", 0.01)
    return pp.OpenAIJudge("judge", base_url=server.base_url, api_key=KEY, **options)


def test_the_fault_really_echoes_the_key(judge_server: TestServer) -> None:
    judge_server.faults = Faults(always="500", echo_auth=True)
    client = openai.OpenAI(base_url=judge_server.base_url, api_key=KEY, max_retries=0)
    with pytest.raises(openai.InternalServerError) as info:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    client.close()
    assert f"Authorization: Bearer {KEY}" in str(info.value)


def _chain(exc: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in found:
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_judge_error_text_repr_and_causes_hold_no_key(
    judge_server: TestServer, transport: str
) -> None:
    judge_server.faults = Faults(always="401", echo_auth=True)
    judge = judge_for(judge_server, transport=transport)
    with pytest.raises(pp.JudgeError) as info:
        pp.score(jobs(groups=2), "pairwise-bias", judge=judge, cache=False, progress=False)
    assert "Authorization: Bearer ***" in str(info.value)  # the echo arrived, redacted
    for exc in _chain(info.value):
        assert "SECRET" not in str(exc) and "SECRET" not in repr(exc)
        assert not isinstance(exc, openai.APIError)  # those hold the request and its headers
        assert "SECRET" not in repr(vars(exc))


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_error_rows_parquet_report_and_cache_hold_no_key(
    judge_server: TestServer, transport: str, tmp_path: Path
) -> None:
    judge_server.faults = Faults(rate_500=0.5, echo_auth=True)
    cache = tmp_path / "cache.sqlite"
    judge = judge_for(judge_server, transport=transport, max_retries=0)
    scored = pp.score(jobs(groups=10), "pairwise-bias", judge=judge, cache=cache, progress=False)
    errors = scored.filter(pl.col("error").is_not_null())
    assert errors.height > 0 and scored["error"].null_count() > 0  # both kinds, some cached
    assert errors["error"].str.contains("Authorization: Bearer \\*\\*\\*", literal=False).all()
    scored.write_parquet(tmp_path / "scored.parquet")
    pp.write_report(tmp_path / "report.html", scored)
    assert len(pp.JudgementCache(cache)) > 0
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {"scored.parquet", "report.html", "cache.sqlite"} <= {p.name for p in files}
    for path in files:
        assert b"SECRET" not in path.read_bytes(), path


def test_a_key_in_an_answer_is_redacted_too(judge_server: TestServer, tmp_path: Path) -> None:
    judge_server.reply = lambda body: {"score": 1, "reason": f"you sent {KEY}"}
    cache = tmp_path / "c.sqlite"
    scored = pp.score(jobs(groups=1), "pairwise-bias", judge=judge_for(judge_server),
                      cache=cache, progress=False)  # fmt: skip
    assert scored["reason"].str.contains("you sent ***", literal=True).all()
    for path in tmp_path.rglob("*"):
        assert not path.is_file() or b"SECRET" not in path.read_bytes(), path


def _manifest(tmp_path: Path, url: str) -> str:
    shutil.copy(DATA / "letters_contrastive.parquet", tmp_path / "letters.parquet")
    (tmp_path / "m.yaml").write_text(textwrap.dedent(f"""\
        targets:
          demo:
            pairwise:
              data: letters.parquet
              strategy: contrastive
              metrics: [pairwise-bias]
              judge: {{model: judge, base_url: "{url}", max_retries: 0, max_concurrency: 4}}
              cache: c.sqlite
        """), encoding="utf-8")  # fmt: skip
    return str(tmp_path / "m.yaml")


def test_cli_output_files_and_stderr_hold_no_key(
    judge_server: TestServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.chdir(tmp_path)
    judge_server.faults = Faults(rate_500=0.5, echo_auth=True)
    assert main(["run", _manifest(tmp_path, judge_server.base_url), "-o", "out"]) == (
        EXIT_INCONCLUSIVE
    )
    captured = capsys.readouterr()
    assert "SECRET" not in captured.out + captured.err
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".html" for p in written) and any(
        p.suffix == ".parquet" for p in written
    )
    for path in written:
        assert b"SECRET" not in path.read_bytes(), path

    judge_server.faults = Faults(always="401", echo_auth=True)
    code = main(["score", "letters.parquet", "--strategy", "contrastive", "-o", "s.parquet",
                 "-q", "--judge", "judge", "--base-url", judge_server.base_url])  # fmt: skip
    assert code == EXIT_INVALID
    err = capsys.readouterr().err
    assert err.startswith(f"Error: The server at {judge_server.base_url} refused the API key")
    assert "Bearer ***" in err and "SECRET" not in err


def test_redact_covers_the_key_bearer_tokens_and_sk_keys() -> None:
    text = 'echo: "Authorization: Bearer abc.DEF-123" key=sk-proj-AbC123xyz789 mine=hunter22'
    assert redact(text, ["hunter22"]) == ('echo: "Authorization: Bearer ***" key=sk-*** mine=***')


def _redacted_the_long_way(text: str, secret: str) -> str:
    """Every pattern run on every text: what redact_secrets did before its shortcuts."""
    if len(secret) >= SHORT_KEY:
        return _without_runs(text, secret)
    token = re.compile(
        rf"(?i)(\b{_AUTH_WORD}[\"']?\s*[:=]?\s*[\"']?){re.escape(secret)}(?![\w.~+/-])"
    )
    return token.sub(lambda m: f"{m.group(1)}***", text)


_KEY_CHARS = st.sampled_from("abcXYZ019-_é")


@settings(max_examples=300, deadline=None)
@given(
    secret=st.text(_KEY_CHARS, min_size=1, max_size=30),
    pieces=st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), max_size=4),
    filler=st.text(st.sampled_from("abcXYZ019-_é :='\"Bearer key"), max_size=40),
    upper=st.booleans(),
    whole=st.booleans(),
)
def test_the_shortcuts_never_leave_what_the_patterns_would_redact(
    secret: str, pieces: list[tuple[int, int]], filler: str, upper: bool, whole: bool
) -> None:
    """A key's runs (and a short key after an auth word) are redacted exactly as when every
    pattern runs on every text: the checks that skip a text without the key miss nothing."""
    text = filler
    for start, length in pieces:
        part = secret[start : start + length]
        text += f" api_key={part.upper() if upper else part} " + filler
    if whole:
        text += f" Bearer {secret.upper() if upper else secret}"
    assert redact_secrets(text, [secret]) == _redacted_the_long_way(text, secret)


@pytest.mark.parametrize(
    "secret", ["sk-proj-Abc123XYZ456def789", "0123456789", "é" * 3 + "ab-_9" * 5]
)
def test_every_run_of_a_long_key_alone_in_a_text_is_redacted(secret: str) -> None:
    """Each run of SHORT_KEY or more of the key's characters, at every offset, found on its
    own in a text (the quick check before the patterns must not pass over it)."""
    for start in range(len(secret)):
        for end in range(start + SHORT_KEY, len(secret) + 1):
            text = f"echo: {secret[start:end]}."
            assert redact_secrets(text, [secret]) == "echo: ***."
