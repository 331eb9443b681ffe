"""A disk that fills while the results are written (issue 30, item 6): the output is written to
a temporary file beside it and renamed, so a failed write leaves no truncated file; results
already paid for are saved to the temporary folder and the error says where; a failed write is
never exit 0. The full disk is real: a child process under RLIMIT_FSIZE (its writes past the
limit fail with EFBIG), or a folder in the way of the temporary file."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from conftest import DATA, jobs

from pairwise_polars.cli import EXIT_INVALID, EXIT_PASS, main

LIMIT = 8 * 1024  # the scored frame of 6 groups (about 20 KB with its texts) is larger


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))


def _cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(cwd / "tmp"), "PYTHONPATH": os.pathsep.join(sys.path)}
    (cwd / "tmp").mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "pairwise_polars", *argv], cwd=cwd, env=env, text=True,
        capture_output=True, preexec_fn=_capped, timeout=120, check=False,
    )  # fmt: skip


def test_score_on_a_full_disk_fails_leaves_nothing_truncated(tmp_path: Path) -> None:
    source = tmp_path / "in" / "rows.parquet"
    source.parent.mkdir()
    jobs(6).write_parquet(source)
    done = _cli("score", str(source), "-o", "scored.parquet", "--no-cache", cwd=tmp_path)
    assert done.returncode == EXIT_INVALID, done.stderr
    assert "Cannot write the scored frame (-o) 'scored.parquet': the file is larger than this " \
        "process may write (a file size limit)." in done.stderr  # fmt: skip
    assert "Traceback" not in done.stderr
    assert [p.name for p in tmp_path.iterdir() if p.is_file()] == []  # no partial file


def test_a_write_that_fails_after_judging_saves_the_results_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "spare"))
    (tmp_path / "spare").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    # A folder where the temporary file must go: the write fails after judging (the probe
    # before judging has another name), as a disk filling up meanwhile would.
    (tmp_path / f".scored.parquet.tmp-{os.getpid()}").mkdir()
    jobs(6).write_parquet(tmp_path / "spare" / ".." / "rows.parquet")
    argv = ["score", "rows.parquet", "-o", "scored.parquet", "--no-cache"]
    assert main(argv) == EXIT_INVALID
    err = capsys.readouterr().err
    (spare,) = (tmp_path / "spare").iterdir()
    assert f"The results were saved to {str(spare)!r} instead." in err
    assert pl.read_parquet(spare).height > 0 and not (tmp_path / "scored.parquet").exists()
    assert main([*argv[:-1], "--no-cache", "-q"]) == EXIT_INVALID  # never exit 0


def test_a_manifest_run_on_a_full_disk_is_not_a_pass(tmp_path: Path) -> None:
    letters = pl.read_parquet(DATA / "letters_contrastive.parquet")
    letters.filter(pl.col("group_id").is_in(letters["group_id"].unique().head(10).implode())
                   ).write_parquet(tmp_path / "letters.parquet")  # fmt: skip
    (tmp_path / "m.yaml").write_text(
        "targets:\n  t:\n    pairwise:\n      data: letters.parquet\n"
        "      strategy: contrastive\n      cache: false\n", encoding="utf-8")  # fmt: skip
    done = _cli("run", "m.yaml", "-q", cwd=tmp_path)
    assert done.returncode not in (EXIT_PASS, 3), done.stderr
    assert "Cannot write the scored frame" in done.stderr and "Traceback" not in done.stderr
    written = list((tmp_path / "pairwise-results" / "t").iterdir())
    assert all(not p.name.startswith(".") for p in written)  # no temporary file left behind


def test_score_parquet_keeping_text_on_a_full_disk_raises(tmp_path: Path) -> None:
    jobs(6).write_parquet(tmp_path / "rows.parquet")
    code = (
        "import pairwise_polars as pp\n"
        "pp.score_parquet('rows.parquet', 'run', keep_text=True, chunk_size=10, cache=False,"
        " progress=False)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, text=True, capture_output=True,
        preexec_fn=_capped, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode != 0
    assert "OutputError: Cannot write the run's file" in done.stderr
    assert "(a file size limit)" in done.stderr
