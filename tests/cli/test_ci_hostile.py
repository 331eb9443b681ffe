"""CI outputs from hostile data (issue 30, item 23): control characters in a slice name keep
the JUnit XML well-formed; Markdown from the data never becomes a live image or link on the run
page."""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree as ET

import polars as pl
import pytest
from conftest import DATA

from pairwise_polars.cli import main

IMAGE = "![px](http://127.0.0.1:9/pixel.png)"


def test_hostile_slice_names_in_junit_and_the_step_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    letters = pl.read_parquet(DATA / "letters_contrastive.parquet")
    names = pl.when(pl.col("group_id").hash() % 2 == 0).then(pl.lit("gpt\x1b[31m\x07"))
    letters.with_columns(names.otherwise(pl.lit(IMAGE)).alias("model")).write_parquet("l.parquet")
    Path("m.yaml").write_text(
        "targets:\n  t:\n    pairwise:\n      data: l.parquet\n      strategy: contrastive\n"
        "      slices: [model_a]\n      gates:\n        per_slice: {max_mean_divergence: 1.0}\n",
        encoding="utf-8",
    )
    main(["run", "m.yaml", "-q", "--junit-xml", "junit.xml"])
    capsys.readouterr()
    root = ET.parse("junit.xml").getroot()  # well-formed
    names = {case.get("name") for case in root.iter("testcase")}
    assert any("gpt\\x1b[31m\\x07" in str(name) for name in names)
    summary = Path("summary.md").read_text(encoding="utf-8")
    assert IMAGE not in summary and "\\!\\[px\\](http://127.0.0.1:9/pixel.png)" in summary
