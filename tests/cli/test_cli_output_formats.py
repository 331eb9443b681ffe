"""Every output path writes the format its suffix names (parquet, CSV, TSV, NDJSON/JSON Lines,
JSON) or is refused with exit 2 before any work; an output path equal to an input is refused."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from pairwise_polars.cli import EXIT_INVALID, EXIT_PASS, main

DATA = Path(__file__).resolve().parents[2] / "data"
JOBS = str(DATA / "jobs_group.parquet")


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    pl.read_parquet(JOBS).head(24).write_parquet("rows.parquet")
    return tmp_path


def read(path: str) -> pl.DataFrame:
    suffix = Path(path).suffix
    if suffix == ".csv":
        return pl.read_csv(path, infer_schema_length=None)
    if suffix == ".tsv":
        return pl.read_csv(path, separator="\t", infer_schema_length=None)
    if suffix in (".jsonl", ".ndjson"):
        return pl.read_ndjson(path)
    if suffix == ".json":
        return pl.read_json(path)
    return pl.read_parquet(path)


def test_score_and_pairs_write_the_format_their_suffix_names(workdir: Path) -> None:
    assert main(["score", "rows.parquet", "-o", "scored.parquet", "-q", "--no-cache"]) == 0
    reference = pl.read_parquet("scored.parquet")
    for suffix in (".csv", ".tsv", ".jsonl", ".ndjson", ".json"):
        out = f"scored{suffix}"
        assert main(["score", "rows.parquet", "-o", out, "-q", "--no-cache"]) == EXIT_PASS
        assert not Path(out).read_bytes().startswith(b"PAR1"), out
        got = read(out)
        assert sorted(got.columns) == sorted(reference.columns)
        keyed = [f.select(pl.col("pair_id").cast(pl.String), "metric", "score").sort("pair_id")
                 for f in (got, reference)]  # fmt: skip
        assert_frame_equal(*keyed)
    assert main(["pairs", "rows.parquet", "-o", "pairs.csv", "--diagnostics", "diag.tsv",
                 "-q"]) == EXIT_PASS  # fmt: skip
    assert read("pairs.csv").height == pl.read_parquet(JOBS).head(24)["group_id"].n_unique() * 3
    assert Path("diag.tsv").read_text().splitlines()[0].startswith("group_id\t")
    assert main(["summarize", "scored.parquet", "-o", "summary.jsonl", "-q"]) == EXIT_PASS
    assert read("summary.jsonl")["metric"].to_list()[0] == "pairwise-bias"


def test_counterfactual_rows_in_csv_keep_their_substitutions_as_json(workdir: Path) -> None:
    pl.DataFrame({"input": ["Should I hire him? He is a nurse."]}).write_csv("prompts.csv")
    assert main(["counterfactual", "prompts.csv", "-o", "rows.csv", "-d", "gender", "-q"]) == 0
    rows = read("rows.csv")
    assert rows["input"].to_list()[1] == "Should I hire her? She is a nurse."
    assert json.loads(rows["substitutions"][1])[0]["target"] == "her"
    assert main(["counterfactual", "prompts.csv", "-o", "rows.parquet", "-d", "gender"]) == 0
    assert_frame_equal(rows.drop("substitutions"), read("rows.parquet").drop("substitutions"))


@pytest.mark.parametrize(
    "argv",
    [
        ["score", "rows.parquet", "-o", "scored.txt"],
        ["score", "rows.parquet", "-o", "scored"],
        ["pairs", "rows.parquet", "-o", "pairs.xlsx"],
        ["pairs", "rows.parquet", "--diagnostics", "diag.txt"],
        ["summarize", "rows.parquet", "-o", "summary.html"],
        ["counterfactual", "rows.parquet", "-o", "cf.txt"],
    ],
)
def test_an_output_suffix_that_names_no_format_is_refused_before_any_work(
    workdir: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    before = sorted(p.name for p in workdir.iterdir())
    assert main([*argv, "--no-cache"] if argv[0] == "score" else argv) == EXIT_INVALID
    err = capsys.readouterr().err
    assert f"{argv[-1]!r}: its suffix picks the format, so name it .parquet, .csv, .tsv, " in err
    assert sorted(p.name for p in workdir.iterdir()) == before  # nothing written


@pytest.mark.parametrize(
    "argv",
    [
        ["score", "rows.parquet", "-o", "rows.parquet", "--no-cache"],
        ["score", "rows.parquet", "-o", "./sub/../rows.parquet", "--no-cache"],
        ["score", ".", "-o", "rows.parquet", "--no-cache"],
        ["pairs", "rows.parquet", "-o", "rows.parquet"],
        ["pairs", "rows.parquet", "--diagnostics", "rows.parquet"],
        ["summarize", "rows.parquet", "-o", "rows.parquet"],
        ["report", "rows.parquet", "-o", "rows.parquet"],
        ["counterfactual", "rows.parquet", "-o", "rows.parquet"],
        ["respond", "rows.parquet", "-o", "rows.parquet", "--model", "m"],
    ],
)
def test_an_output_equal_to_an_input_is_refused(
    workdir: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    before = Path("rows.parquet").read_bytes()
    assert main(argv) == EXIT_INVALID
    assert "it is also an input, and writing it would overwrite the data" in capsys.readouterr().err
    assert Path("rows.parquet").read_bytes() == before


def test_two_outputs_on_one_file_are_refused(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["pairs", "rows.parquet", "-o", "out.csv", "--diagnostics", "out.csv"]
    assert main(argv) == EXIT_INVALID
    assert "the pair frame (-o) is the same file" in capsys.readouterr().err
    assert not Path("out.csv").exists()
