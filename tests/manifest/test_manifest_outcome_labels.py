"""The manifest's ``outcome_labels:`` key: people's reading of the outcomes corrects a target's
disparities and its ``max_disadvantage`` gate (through run_target and the command line); a bad
row stops the run before any judge call; a missing file or a sheet of the other kind is a
problem on its line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

import pairwise_polars as pp
from pairwise_polars import ManifestError
from pairwise_polars._errors import DataSourceError
from pairwise_polars.cli import EXIT_INCONCLUSIVE, EXIT_INVALID, EXIT_PASS, main
from pairwise_polars.manifest import load_manifest, run_target
from tests.summary.salary import salary_rows

BLOCK = """\
targets:
  salary:
    pairwise:
      data: salary.parquet
{labels}      gates:
        per_slice:
          max_disadvantage: {{amount: 0.05}}
"""


def _manifest(folder: Path, labels: str | None) -> Path:
    line = f"      outcome_labels: {labels}\n" if labels else ""
    path = folder / "m.yaml"
    path.write_text(BLOCK.format(labels=line), encoding="utf-8")
    return path


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """The salary run (women offered 16% less in half of the groups) and a sheet where people
    read 20 of the counterfactual pairs as paid alike (within 2%)."""
    rows = salary_rows(cut=0.16)
    rows.write_parquet(tmp_path / "salary.parquet")
    pairs = pp.form_pairs(rows).filter(pl.col("pair_kind") == "counterfactual").head(20)
    alike = 100_000 * (1 + np.random.default_rng(3).uniform(-0.02, 0.02, pairs.height))
    pairs.select(
        "pair_id", metric=pl.lit("amount"), label_a=pl.lit(100_000.0), label_b=pl.Series(alike)
    ).write_csv(tmp_path / "outcomes.csv")
    return tmp_path


def test_outcome_labels_correct_a_targets_disparities_and_gate(folder: Path) -> None:
    plain = load_manifest(_manifest(folder, None)).targets["salary"]
    judged = run_target(plain, progress=False, cache=False)
    assert judged.gates is not None and not judged.gates.passed
    target = load_manifest(_manifest(folder, "outcomes.csv")).targets["salary"]
    assert target.outcome_labels == str(folder / "outcomes.csv")
    run = run_target(target, progress=False, cache=False)
    assert run.disparities is not None and run.gates is not None
    female = run.disparities.filter(pl.col("attribute") == "female").row(0, named=True)
    assert female["n_labelled"] == 20
    assert female["amount_relative"] < -0.05 < female["amount_relative_ppi_low"]
    check = run.gates.checks.filter(gate="max_disadvantage").row(0, named=True)
    assert check["status"] == "pass" and "corrected by human labels" in check["note"]


def test_a_bad_outcome_label_stops_the_run_before_any_judge_call(folder: Path) -> None:
    sheet = pl.read_csv(folder / "outcomes.csv", infer_schema=False)
    sheet.with_columns(
        label_a=pl.when(pl.int_range(pl.len()) == 3).then(None).otherwise(pl.col("label_a"))
    ).write_csv(folder / "outcomes.csv")
    target = load_manifest(_manifest(folder, "outcomes.csv")).targets["salary"]
    with pytest.raises(
        DataSourceError, match=r"1 outcome labels have a side that is empty .*row 4"
    ):
        run_target(target, progress=False, dry_run=True)  # before the plan, too


def test_label_files_are_checked_on_their_line(folder: Path) -> None:
    pl.DataFrame({"pair_id": ["x"], "metric": ["pairwise-bias"], "label": [1]}).write_csv(
        folder / "scores.csv"
    )
    with pytest.raises(ManifestError) as raised:
        load_manifest(_manifest(folder, "scores.csv"))
    assert "m.yaml:5: targets.salary.pairwise.outcome_labels: the labels file" in str(raised.value)
    assert "holds people's scores of pairs: name it under labels: instead" in str(raised.value)
    path = _manifest(folder, "outcomes.csv")
    path.write_text(path.read_text().replace("outcome_labels:", "labels:"), encoding="utf-8")
    with pytest.raises(ManifestError, match=r"m.yaml:5: .*pairwise.labels: .*name it under "
                       "outcome_labels: instead"):  # fmt: skip
        load_manifest(path)


def test_the_command_line_runs_a_target_with_outcome_labels(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(folder)
    path = _manifest(folder, "outcomes.csv")
    assert main(["run", str(path), "-o", "out", "--no-cache", "--quiet"]) == EXIT_PASS
    assert "corrected by human labels" in capsys.readouterr().out
    plain = ["run", str(_manifest(folder, None)), "-o", "out2", "--no-cache", "--quiet"]
    assert main(plain) == EXIT_INCONCLUSIVE  # the judge's -7.8% straddles 5%
    _manifest(folder, "missing.csv")
    assert main(["validate", str(path)]) == EXIT_INVALID
    err = capsys.readouterr().err
    assert "m.yaml:5: targets.salary.pairwise.outcome_labels: labels file" in err
    assert "missing.csv' does not exist" in err
