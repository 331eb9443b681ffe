"""The labelling loop on the command line and in a manifest: label-sample writes the sheet, a
filled-in sheet corrects the summary and the gates (which say so), bad labels stop a run before
the judge is called."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import polars as pl
import pytest

import pairwise_polars as pp
from pairwise_polars import ManifestError
from pairwise_polars.cli import EXIT_GATE_FAILED, EXIT_INVALID, EXIT_PASS, main
from pairwise_polars.manifest import load_manifest, run_target

DATA = Path(__file__).resolve().parents[2] / "data"
JOBS = str(DATA / "jobs_group.parquet")


@pytest.fixture(scope="module")
def loop(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A scored run and a labelling sheet filled in by a 'person' who scores one point lower
    than the judge."""
    folder = tmp_path_factory.mktemp("labels")
    scored, sheet = folder / "scored.parquet", folder / "sheet.csv"
    assert main(["score", JOBS, "-o", str(scored), "--quiet", "--no-cache"]) == EXIT_PASS
    assert main(["label-sample", str(scored), "-o", str(sheet), "-n", "300", "--seed", "4",
                 "--quiet"]) == EXIT_PASS  # fmt: skip
    drawn = pl.read_csv(sheet, infer_schema=False)
    assert drawn["label"].null_count() == drawn.height and drawn.height >= 250
    raw = pl.read_parquet(scored).select(pl.col("pair_id").cast(pl.String), "raw_score")
    filled = drawn.drop("label").join(raw, on="pair_id", how="left", maintain_order="left")
    filled = filled.with_columns(
        label=(pl.col("raw_score").round(0) - 1).clip(0, 4).cast(pl.Int64)
    ).drop("raw_score")
    filled.write_csv(sheet)
    return scored, sheet


def test_a_filled_in_sheet_corrects_the_gate_and_the_verdict_says_so(
    loop: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    scored, sheet = loop
    gate = ["--by", "--max-mean-divergence", "0.2", "--max-error-rate", "1"]
    assert main(["summarize", str(scored), *gate]) == EXIT_GATE_FAILED
    capsys.readouterr()
    assert main(["summarize", str(scored), *gate, "--labels", str(sheet)]) == EXIT_PASS
    out = capsys.readouterr().out
    assert "mean divergence, corrected by labels" in out
    assert "corrected by human labels (prediction-powered)" in out
    code = main(["summarize", str(scored), "--by", "--labels", str(sheet),
                 "--min-label-agreement", "0.99", "--max-error-rate", "1"])  # fmt: skip
    assert code == 4  # inconclusive: the instrument disagrees with people
    assert "the judge agrees with the human labels below min_label_agreement" in (
        capsys.readouterr().out
    )


def test_a_bad_label_stops_score_before_any_judgement(
    loop: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, sheet = loop
    bad = pl.read_csv(sheet, infer_schema=False).with_columns(
        label=pl.when(pl.int_range(pl.len()) == 2).then(pl.lit("7")).otherwise(pl.col("label"))
    )
    bad.write_csv(tmp_path / "bad.csv")
    out = tmp_path / "scored.parquet"
    code = main(["score", JOBS, "-o", str(out), "--labels", str(tmp_path / "bad.csv"), "--quiet"])
    assert code == EXIT_INVALID and not out.exists()
    assert "1 labels lie off their metric's rubric (pairwise-bias: 0-4): row 3" in (
        capsys.readouterr().err
    )


def test_score_keeps_the_labels_and_a_manifest_reads_them(
    loop: tuple[Path, Path], tmp_path: Path
) -> None:
    _, sheet = loop
    out = tmp_path / "scored.parquet"
    assert main(["score", JOBS, "-o", str(out), "--labels", str(sheet), "--quiet"]) == EXIT_PASS
    assert (
        pl.read_parquet(out)["raw_label"].drop_nulls().len()
        == pl.read_csv(sheet, infer_schema=False).height
    )
    shutil.copy(JOBS, tmp_path / "jobs.parquet")
    shutil.copy(sheet, tmp_path / "labels.csv")
    manifest = tmp_path / "m.yaml"
    manifest.write_text("targets:\n  jobs:\n    pairwise:\n" + textwrap.indent(textwrap.dedent("""\
        data: jobs.parquet
        labels: labels.csv
        gates:
          overall: {max_mean_divergence: 0.2, min_label_agreement: 0.5}
        """), " " * 6), encoding="utf-8")  # fmt: skip
    run = run_target(load_manifest(manifest).targets["jobs"], progress=False, cache=False)
    assert run.summary is not None and run.gates is not None
    overall = run.summary.filter(pl.col("scope") == "overall").row(0, named=True)
    assert overall["mean_divergence_ppi"] < overall["mean_divergence"]
    assert run.gates.passed
    (tmp_path / "labels.csv").unlink()
    with pytest.raises(ManifestError, match=r"labels file .* does not exist"):
        load_manifest(manifest)


def test_the_report_shows_judge_only_and_corrected_side_by_side(
    loop: tuple[Path, Path], tmp_path: Path
) -> None:
    """Per slice, the report's summary table has the judge's figure, the corrected one,
    n_labelled and the judge-label agreement in one row."""
    scored, sheet = loop
    page = tmp_path / "report.html"
    argv = ["report", str(scored), "-o", str(page), "--labels", str(sheet), "--quiet"]
    assert main(argv) == EXIT_PASS
    html = page.read_text(encoding="utf-8")
    summary = pp.aggregate(pl.read_parquet(scored), labels=sheet)
    headings = ["mean divergence", "mean divergence, corrected by labels", "labelled",
                "judge-label agreement (kappa)"]  # fmt: skip
    positions = [html.find(f">{h}<") for h in headings]
    assert all(p > 0 for p in positions), dict(zip(headings, positions, strict=True))
    row = summary.filter(pl.col("dimension") == summary["dimension"][0]).row(0, named=True)
    assert f"{row['mean_divergence_ppi']:.3f}" in html and str(row["n_labelled"]) in html


def test_disparities_take_outcome_labels_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.summary.test_disparity_ppi import pair_ids, rows

    frame = rows([(1, 1)] * 6)
    data, sheet = tmp_path / "rows.parquet", tmp_path / "outcomes.csv"
    frame.write_parquet(data)
    pl.DataFrame(
        {"pair_id": pair_ids(frame)[:4], "metric": "decision", "label_a": 1, "label_b": 0}
    ).write_csv(sheet)
    assert main(["disparities", str(data), "--labels", str(sheet), "--json"]) == EXIT_PASS
    out = capsys.readouterr().out
    assert '"decision_difference_ppi": -1.0' in out and '"n_labelled": 4' in out
    sheet.write_text("pair_id,metric,label_a,label_b\nnope,decision,1,0\n")
    assert main(["disparities", str(data), "--labels", str(sheet)]) == EXIT_INVALID
    assert "name a pair the data does not have: row 1 (pair_id=nope" in capsys.readouterr().err
