"""``plan MANIFEST --detect X --pilot FILE`` prints what each slice can detect, as
``pp.plan(detect=, pilot=)`` does, and refuses a detect of 0 as invalid input."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

import pairwise_polars as pp
from pairwise_polars.cli import main
from tests.summary.salary import salary_rows

MANIFEST = """
targets:
  salary:
    pairwise:
      data: salary.parquet
      metrics: [pairwise-bias]
      gates:
        per_slice: {max_excess_divergence: 0.1}
"""


def test_plan_prints_the_power_per_slice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    rows = salary_rows(groups=20)
    rows.write_parquet("salary.parquet")
    Path("m.yaml").write_text(textwrap.dedent(MANIFEST), encoding="utf-8")
    assert main(["plan", "m.yaml", "--no-cache", "--detect", "0.05"]) == 0
    out = capsys.readouterr().out
    assert "variability assumed" in out
    assert "pairwise-bias [dimension=gender] 20 groups: detects excess divergence" in out
    scored = pp.score(rows, progress=False, cache=False)
    scored.write_parquet("pilot.parquet")
    command = ["plan", "m.yaml", "--no-cache", "--detect", "0.05", "--pilot", "pilot.parquet"]
    assert main([*command, "--json"]) == 0
    power = json.loads(capsys.readouterr().out)["targets"]["salary"]["plan"]["power"]
    expected = pp.plan(rows, detect=0.05, pilot=scored, cache=False).power  # the same answer
    assert {r["source"] for r in power} == {"pilot"}
    assert [(r["slice"], r["groups_needed"]) for r in power] == [
        (r.slice, r.groups_needed) for r in expected
    ]
    effects = [r["min_detectable_effect"] for r in power]
    assert effects == pytest.approx([r.min_detectable_effect for r in expected], rel=1e-9)
    assert main(["plan", "m.yaml", "--no-cache", "--detect", "0"]) == 2
    assert "must be a number above 0" in capsys.readouterr().err
