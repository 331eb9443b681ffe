"""``pairwise-polars compare BEFORE AFTER``: the table of what changed, the regression gate's
exit codes (those of ``run``), JUnit XML and the step summary."""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl
import pytest

from pairwise_polars.cli import EXIT_GATE_FAILED, EXIT_INVALID, EXIT_PASS, main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "comparison"))
from release_runs import scored_runs


def _write(tmp_path: Path, **options: object) -> tuple[str, str]:
    before, after = scored_runs(**options)  # type: ignore[arg-type]
    paths = (tmp_path / "before.parquet", tmp_path / "after.parquet")
    before.write_parquet(paths[0])
    after.write_parquet(paths[1])
    return str(paths[0]), str(paths[1])


def test_a_regression_exits_1_with_the_table_junit_and_step_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    before, after = _write(tmp_path, groups=35, shift={"gender": 0.25})
    summary = tmp_path / "step.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    junit = tmp_path / "junit.xml"
    code = main(
        ["compare", before, after, "--junit-xml", str(junit), "-o", str(tmp_path / "c.csv")]
    )
    out = capsys.readouterr().out
    assert code == EXIT_GATE_FAILED
    assert "420 pair judgements matched across the runs; 0 only in the baseline" in out
    first = next(line for line in out.splitlines() if line.startswith("| pairwise-bias"))
    assert "dimension=gender" in first and "| worse" in first  # worse rows first
    assert "FAIL: 2 of 3 gate checks passed." in out
    xml = junit.read_text()
    assert 'failures="1"' in xml and "[dimension=gender] max_regression &lt;= 0.05" in xml
    assert "max_regression" in summary.read_text()
    assert pl.read_csv(tmp_path / "c.csv")["changed"].to_list().count("worse") >= 3


def test_no_change_passes_and_few_groups_are_inconclusive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before, after = _write(tmp_path, groups=40, seed=8)
    assert main(["compare", before, after, "--max-regression", "0.2", "-q"]) == EXIT_PASS
    few = tmp_path / "few"
    few.mkdir()
    before, after = _write(few, groups=6, seed=8)
    code = main(["compare", before, after, "--max-regression", "0.2"])
    assert code != EXIT_PASS and "6 groups paired, under min_groups=30" in capsys.readouterr().out


def test_bad_options_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before, after = _write(tmp_path, groups=4)
    assert main(["compare", before, after, "--max-regression", "2"]) == EXIT_INVALID
    assert "must be a number from 0 to 1" in capsys.readouterr().err
    assert main(["compare", before, after, "-o", "c.txt"]) == EXIT_INVALID
    assert main(["compare", before, after, "--by", "model"]) == EXIT_INVALID
    assert "['model'] in the before run" in capsys.readouterr().err
