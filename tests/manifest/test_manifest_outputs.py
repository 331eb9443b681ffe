"""A manifest run writes its own files: from Python they are the command line's, file for file."""

from __future__ import annotations

import re
import shutil
import textwrap
from pathlib import Path

import polars as pl
import pytest

from pairwise_polars.cli import EXIT_GATE_FAILED, main
from pairwise_polars.manifest import load_manifest, run_manifest, run_target

DATA = Path(__file__).resolve().parents[2] / "data"
# When it ran, and for how long: the only things two runs of the same manifest may differ in.
_CLOCK = re.compile(r'\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?: ?[+-]\d{4})?|time="[0-9.]+"')


def _manifest(folder: Path) -> Path:
    shutil.copy(DATA / "letters_contrastive.parquet", folder / "letters.parquet")
    path = folder / "m.yaml"
    path.write_text(textwrap.dedent("""
        targets:
          letters:
            pairwise:
              data: letters.parquet
              strategy: contrastive
              metrics: [pairwise-refusal-disparity, pairwise-bias]
              gates:
                overall: {max_mean_divergence: {pairwise-bias: 0.01}}
          again:
            pairwise:
              data: letters.parquet
              strategy: contrastive
              metrics: [pairwise-refusal-disparity]
        """), encoding="utf-8")  # fmt: skip
    return path


def _files(root: Path) -> dict[str, Path]:
    return {str(p.relative_to(root)): p for p in sorted(root.rglob("*")) if p.is_file()}


def _assert_same_files(left: Path, right: Path) -> None:
    ours, theirs = _files(left), _files(right)
    assert list(ours) == list(theirs)
    for name, path in ours.items():
        if path.suffix == ".parquet":
            frames = [
                pl.read_parquet(p).drop("latency_s", strict=False) for p in (path, theirs[name])
            ]
            assert frames[0].equals(frames[1]), name
        else:
            text = _CLOCK.sub("<clock>", path.read_text(encoding="utf-8"))
            assert text == _CLOCK.sub("<clock>", theirs[name].read_text(encoding="utf-8")), name


def test_python_and_the_cli_write_the_same_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    path = _manifest(tmp_path)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "cli" / "step.md"))
    args = ["run", str(path), "-o", "cli", "--junit-xml", "cli/junit.xml", "--no-cache", "-q"]
    assert main(args) == EXIT_GATE_FAILED
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    run = run_manifest(path, output="py", junit_xml="py/junit.xml", step_summary="py/step.md",
                       cache=False, progress=False)  # fmt: skip
    assert not run.passed and [r.target.name for r in run.runs] == ["letters", "again"]
    assert set(_files(tmp_path / "py")) == {
        *(f"{t}/{f}" for t in ("letters", "again")
          for f in ("scored.parquet", "summary.parquet", "summary.csv", "report.html")),
        "junit.xml",
        "step.md",
    }  # fmt: skip
    _assert_same_files(tmp_path / "py", tmp_path / "cli")
    assert run.runs[0].outputs["report"] == str(Path("py", "letters", "report.html"))

    # One target from Python: its folder holds what the command line wrote for it.
    target = load_manifest(path).targets["again"]
    single = run_target(target, output="one", table="csv", cache=False, progress=False)
    assert set(single.outputs) == {"scored", "summary", "table", "report"}
    _assert_same_files(tmp_path / "one" / "again", tmp_path / "cli" / "again")
