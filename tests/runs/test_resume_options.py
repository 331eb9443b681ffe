"""A run records resolved pairing options, so the same run resumes however it was asked for:
from Python with defaults left out, from the CLI with every option spelled out, or from a
journal written before options were resolved."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from conftest import jobs, letters

import pairwise_polars as pp
from pairwise_polars.cli import EXIT_INVALID, EXIT_PASS, main

METRICS = ["pairwise-bias", "pairwise-refusal-disparity"]


def test_a_python_run_resumes_from_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    source = tmp_path / "jobs.parquet"
    jobs(20).write_parquet(source)
    run_dir = tmp_path / "run"
    first = pp.score_parquet(source, run_dir, METRICS, chunk_size=50, progress=False)
    recorded = json.loads((run_dir / "run.json").read_text())["fingerprint"]["pairing"]
    assert recorded == {
        "attribute": "attribute", "control": "control", "dimension": "dimension",
        "group_by": "group_id", "id": "id", "input": "input", "on_invalid": "raise",
        "output": "output", "reference": "reference", "role": "role",
    }  # fmt: skip
    argv = ["score", str(source), "-m", METRICS[0], "-m", METRICS[1], "--run-dir", str(run_dir),
            "--chunk-size", "50", "--json"]  # fmt: skip
    assert main(argv) == EXIT_PASS
    resumed = json.loads(capsys.readouterr().out)
    assert resumed["chunks_resumed"] == first.n_chunks  # nothing judged again

    # A real difference is still refused, in the CLI's words.
    assert main([*argv[:-1], "--on-invalid", "skip"]) == EXIT_INVALID
    assert capsys.readouterr().err == (
        f"Error: The destination {str(run_dir)!r} holds another run: the pairing options differ "
        '(on_invalid: was "raise", now "skip"). Score into a new --run-dir, or pass '
        "--overwrite to discard the results there (judgements already paid for stay in the "
        "cache).\n"
    )


def test_equal_options_written_differently_compare_equal(tmp_path: Path) -> None:
    source = tmp_path / "letters.parquet"
    letters().write_parquet(source)
    run_dir = tmp_path / "run"
    pp.score_parquet(source, run_dir, strategy="contrastive", progress=False)
    again = pp.score_parquet(
        source, run_dir, strategy="contrastive", poles=("pole_a", "pole_b"),
        columns=pp.Columns(group_by="group_id"), on_invalid="raise", reference="ignored",
        progress=False,
    )  # fmt: skip
    assert again.chunks_resumed == again.n_chunks


def test_a_journal_from_before_resolved_options_resumes(tmp_path: Path) -> None:
    source = tmp_path / "jobs.parquet"
    jobs(10).write_parquet(source)
    run_dir = tmp_path / "run"
    first = pp.score_parquet(source, run_dir, progress=False)
    journal = run_dir / "run.json"
    document = json.loads(journal.read_text())
    document["fingerprint"]["pairing"] = {}  # what older versions wrote for the defaults
    journal.write_text(json.dumps(document))
    again = pp.score_parquet(source, run_dir, progress=False)
    assert again.chunks_resumed == first.n_chunks


def test_runner_ray_without_the_extra_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    source = tmp_path / "run.parquet"
    pl.DataFrame(
        {"group_id": [1, 1], "role": ["reference", "variant"], "input": "q", "output": ["a", "b"]}
    ).write_parquet(source)
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    monkeypatch.delitem(sys.modules, "pairwise_polars.runs._ray_run", raising=False)
    monkeypatch.delattr(pp.runs, "_ray_run", raising=False)  # imported by an earlier test
    with pytest.raises(pp.OptionError, match=r"pip install 'pairwise-polars\[ray\]'"):
        pp.score_parquet(source, tmp_path / "out", runner="ray", progress=False)
    assert not (tmp_path / "out").exists()  # refused before anything was planned or written
    with pytest.raises(pp.OptionError, match='runner must be "local" or "ray", got \'spark\''):
        pp.score_parquet(source, tmp_path / "out", runner="spark", progress=False)  # type: ignore[arg-type]
