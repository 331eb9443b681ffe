"""`summarize` and `report` with --junit-xml but no gate wrote no JUnit file and exited 0: a CI
job then reads a missing report (or none at all) as a pass. Now it is a usage error (exit 2)
before any work, saying to set a gate."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import DATA

import pairwise_polars as pp
from pairwise_polars.cli import EXIT_INVALID, EXIT_PASS, main


@pytest.fixture
def scored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(tmp_path)
    rows = DATA / "jobs_group.parquet"
    pp.score(rows, "pairwise-bias", progress=False).write_parquet("scored.parquet")
    return "scored.parquet"


@pytest.mark.parametrize("command", [["summarize"], ["report", "-o", "r.html"]])
def test_junit_xml_without_a_gate_is_refused(
    scored: str, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    assert main([command[0], scored, *command[1:], "--junit-xml", "j.xml", "-q"]) == EXIT_INVALID
    assert "--junit-xml writes the gate checks, and no gate is set" in capsys.readouterr().err
    assert not Path("j.xml").exists()


def test_junit_xml_with_a_gate_is_written(scored: str) -> None:
    argv = ["summarize", scored, "--junit-xml", "j.xml", "--max-mean-divergence", "1", "-q"]
    assert main(argv) == EXIT_PASS
    assert Path("j.xml").read_text(encoding="utf-8").startswith("<?xml")
