"""`score` with --judge repeated (a panel) and --repeats; `summarize --min-judge-agreement`."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from pairwise_polars.cli import EXIT_INCONCLUSIVE, EXIT_INVALID, EXIT_PASS, main
from pairwise_polars.testing import TestServer

LETTERS = str(Path(__file__).resolve().parents[2] / "data" / "letters_contrastive.parquet")


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_panel_with_repeats_from_the_command_line(
    workdir: Path, capsys: pytest.CaptureFixture[str], judge_server: TestServer
) -> None:
    judge_server.reply = lambda body: (
        {"score": 0, "reason": "0"} if body["model"] == "zero" else None
    )
    endpoint = ["--base-url", judge_server.base_url, "--cache", "cache.sqlite"]
    panel = ["--judge", "judge-small", "--judge", "zero", "--repeats", "2"]
    argv = ["score", LETTERS, "--strategy", "contrastive", "-o", "s.parquet", *panel, *endpoint,
            "--json"]  # fmt: skip
    assert main(argv) == EXIT_PASS
    document = json.loads(capsys.readouterr().out)
    assert document["plan"]["n_to_send"] == judge_server.stats.requests == 240  # 60 x 2 x 2
    assert document["plan"]["judge_model"] == "panel (judge-small, zero) x 2 repeats"
    scored = pl.read_parquet("s.parquet")
    assert sorted(scored["judge_model"].unique().to_list()) == ["judge-small", "panel", "zero"]
    assert scored.filter(pl.col("judge_model") == "panel")["repeat"].null_count() == 60

    argv = ["summarize", "s.parquet", "--min-judge-agreement", "0.6", "--json"]
    assert main(argv) == EXIT_INCONCLUSIVE
    document = json.loads(capsys.readouterr().out)
    checks = [c for c in document["checks"] if c["gate"] == "min_judge_agreement"]
    assert checks and not any(c["passed"] for c in checks)
    assert all(row["n_pairs"] == 60 for row in document["summary"] if row["scope"] == "overall")
    # with repeats, a fairness gate also asks whether the verdict holds on a rerun
    argv = ["summarize", "s.parquet", "--max-mean-divergence", "0.9", "--json"]
    main(argv)
    document = json.loads(capsys.readouterr().out)
    assert all(row["verdict_stability"] is not None for row in document["summary"])
    assert {c["gate"] for c in document["checks"]} >= {"max_mean_divergence", "verdict_stability"}


def test_a_chunked_run_refuses_a_batch_or_ray_panel_in_the_command_lines_words(
    workdir: Path, capsys: pytest.CaptureFixture[str], judge_server: TestServer
) -> None:
    """The refusal names the flags to drop, not the Python keywords (batch=False,
    runner="ray"), and comes before anything is sent."""
    base = ["score", LETTERS, "--strategy", "contrastive", "--run-dir", "run"]
    endpoint = ["--base-url", judge_server.base_url, "--no-cache"]
    batch = [*base, "--judge", "judge-small", "--batch", "--repeats", "2", *endpoint]
    assert main(batch) == EXIT_INVALID
    err = capsys.readouterr().err
    assert "Drop --batch" in err and "batch=False" not in err
    ray = [*base, "--judge", "a", "--judge", "b", "--runner", "ray", *endpoint]
    assert main(ray) == EXIT_INVALID
    err = capsys.readouterr().err
    assert "Drop --runner ray" in err and 'runner="ray"' not in err
    assert judge_server.stats.requests == 0
