"""A manifest with ``baseline:`` compares the run with a previous one pair by pair: ``run``
prints what changed, writes comparison.parquet, gates on ``max_regression`` (JUnit and the step
summary include it) and the report has a "since the baseline" section."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import polars as pl
import pytest

from pairwise_polars.cli import EXIT_INVALID, EXIT_PASS, main
from pairwise_polars.manifest import validate_manifest

DATA = Path(__file__).resolve().parents[2] / "data"


def _manifest(folder: Path, data: str, extra: str = "") -> Path:
    text = f"""\
    version: 1
    targets:
      jobs:
        pairwise:
          data: {data}
          judge: heuristic
          gates:
            overall: {{max_error_rate: 0.5}}
    """
    path = folder / "manifest.yaml"
    path.write_text(textwrap.dedent(text) + textwrap.indent(extra, " " * 6))
    return path


def test_run_with_a_baseline_compares_and_gates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = pl.read_parquet(DATA / "jobs_group.parquet")
    keep = rows["group_id"].unique().sort().head(12)
    rows = rows.filter(pl.col("group_id").is_in(keep.implode()))
    rows.write_parquet(tmp_path / "old.parquet")
    refusing = pl.col("group_id").is_in(keep.head(4).implode()) & (pl.col("role") == "variant")
    rows.with_columns(
        output=pl.when(refusing).then(pl.lit("I cannot help with that.")).otherwise("output")
    ).write_parquet(tmp_path / "new.parquet")
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(_manifest(tmp_path, "old.parquet")), "-o", "old-run", "-q"]) == 0
    capsys.readouterr()
    manifest = _manifest(
        tmp_path, "new.parquet", "baseline: old-run/jobs\nmax_regression: 0.02\nfamilywise: holm\n"
    )
    summary = tmp_path / "step.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code = main(["run", str(manifest), "-o", "new-run", "--junit-xml", "j.xml", "--json"])
    payload = json.loads(capsys.readouterr().out)
    checks = payload["targets"]["jobs"]["checks"]
    regression = [c for c in checks if c["gate"] == "max_regression"]
    assert regression and code != EXIT_PASS
    assert {c["slice"] for c in regression} >= {"dimension=race"}
    folder = tmp_path / "new-run" / "jobs"
    comparison = pl.read_parquet(folder / "comparison.parquet")
    assert (comparison["n_unmatched_before"] == 0).all()
    assert (comparison["n_matched"] > 0).all()
    assert "Since the baseline" in (folder / "report.html").read_text()
    assert "max_regression" in (tmp_path / "j.xml").read_text()
    assert "Since the baseline" in summary.read_text()
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    assert main(["run", str(manifest), "-o", "text-run"]) == code  # printed for people too
    shown = capsys.readouterr().out
    assert "old-run/jobs: 39 pair judgements matched across the runs" in shown
    table = shown[shown.index("since the baseline") :]
    assert "| pairwise-bias | dimension=race " in table and "| excess divergence |" in table


def test_baseline_keys_are_validated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "rows.parquet").write_bytes((DATA / "jobs_group.parquet").read_bytes())
    bad = _manifest(
        tmp_path, "rows.parquet", "baseline: nowhere\nmax_regression: 2\nfamilywise: holmes\n"
    )
    problems = [str(p) for p in validate_manifest(bad)]
    assert any("baseline" in p and "does not exist" in p for p in problems)
    assert any("max_regression: expected a number from 0 to 1, got 2" in p for p in problems)
    assert any("familywise: expected none, holm or bh" in p and "holm" in p for p in problems)
    alone = _manifest(tmp_path, "rows.parquet", "max_regression: 0.1\n")
    assert any("needs a baseline" in str(p) for p in validate_manifest(alone))
    assert main(["validate", str(bad)]) == EXIT_INVALID
