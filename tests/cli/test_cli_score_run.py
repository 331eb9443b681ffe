"""`pairwise-polars score --run-dir`: a large run chunk by chunk, resumable, from the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

import pairwise_polars as pp
from pairwise_polars.cli import EXIT_INVALID, EXIT_PASS, main

JOBS = str(Path(__file__).resolve().parents[2] / "data" / "jobs_group.parquet")
METRICS = ["-m", "pairwise-bias", "-m", "pairwise-refusal-disparity"]


def test_run_dir_scores_in_chunks_and_resumes(tmp_path: Path, capsys) -> None:
    run_dir = tmp_path / "run"
    args = ["score", JOBS, *METRICS, "--run-dir", str(run_dir), "--chunk-size", "200", "--json"]
    assert main(args) == EXIT_PASS
    first = json.loads(capsys.readouterr().out)
    parts = sorted((run_dir / "scored").glob("part-*.parquet"))
    assert len(parts) >= 4  # 960 pairs in chunks of about 200
    scored = pl.read_parquet(parts)
    in_memory = pp.score(pl.read_parquet(JOBS), ["pairwise-bias", "pairwise-refusal-disparity"],
                         progress=False)  # fmt: skip
    assert scored.height == in_memory.height == 2 * first["n_pairs"]
    key = ["pair_id", "metric"]
    assert scored.sort(key)["score"].equals(in_memory.sort(key)["score"])
    assert (run_dir / "summary.parquet").is_file() and (run_dir / "run.json").is_file()

    assert main(args) == EXIT_PASS  # the same command again: everything is resumed
    second = json.loads(capsys.readouterr().out)
    assert second["chunks_resumed"] == len(parts)


def test_run_dir_refuses_another_run_without_overwrite(tmp_path: Path, capsys) -> None:
    run_dir = str(tmp_path / "run")
    assert main(["score", JOBS, "--run-dir", run_dir, "--quiet"]) == EXIT_PASS
    code = main(["score", JOBS, "-m", "pairwise-refusal-disparity", "--run-dir", run_dir])
    assert code == EXIT_INVALID
    assert capsys.readouterr().err.startswith("Error: ")
    assert main(["score", JOBS, "-m", "pairwise-refusal-disparity", "--run-dir", run_dir,
                 "--overwrite", "--quiet"]) == EXIT_PASS  # fmt: skip


def test_out_or_run_dir_is_required(capsys) -> None:
    assert main(["score", JOBS]) == EXIT_INVALID
    assert "one of the arguments -o/--out --run-dir is required" in capsys.readouterr().err
