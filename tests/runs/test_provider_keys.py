"""The key is never written anywhere, for every model judge (OpenAI and Anthropic, chat and
batch): a resumable run from the command line against a server that echoes the key in its
error answers and in its verdicts leaves no trace of it in the log, the parts, the summary,
the journal, the judgement cache or the batch state."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import jobs

from pairwise_polars.cli import main
from pairwise_polars.testing import Faults, TestServer

KEY = "sk-ant-SECRET-2468"
JUDGES = {
    "openai chat": ["--judge-provider", "openai"],
    "anthropic chat": ["--judge-provider", "anthropic"],
    "openai batch": ["--judge-provider", "openai", "--batch", "--poll-interval", "0.2"],
    "anthropic batch": ["--judge-provider", "anthropic", "--batch", "--poll-interval", "0.2"],
}


@pytest.mark.parametrize("judge", list(JUDGES))
def test_a_run_dir_keeps_no_key(
    judge: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.chdir(tmp_path)
    jobs(groups=12).write_parquet(tmp_path / "jobs.parquet")
    with TestServer(api_key=KEY, faults=Faults(rate_500=0.2, echo_auth=True), seed=7) as server:
        server.reply = lambda body: {"score": 1, "reason": f"the key was {KEY}"}  # echoed
        args = ["score", "jobs.parquet", "--run-dir", "run", "--chunk-size", "40", "--judge",
                "judge-model", "--base-url", server.base_url, "--cache", "cache.sqlite",
                *JUDGES[judge]]  # fmt: skip
        code = main(args)
        assert server.stats.requests + sum(server.stats.batch_calls.values()) > 0
    out, err = capsys.readouterr()
    assert code in (0, 1, 4), err  # judged (errors and gates aside), not a crash
    assert KEY not in out + err and "SECRET" not in out + err
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "jobs.parquet"]
    assert {"run.json", "cache.sqlite"} <= {p.name for p in written}
    for path in written:
        assert b"SECRET" not in path.read_bytes(), path.relative_to(tmp_path)
