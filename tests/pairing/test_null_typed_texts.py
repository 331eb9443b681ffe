"""A text column that holds only nulls has polars' Null type (an all-null JSON field, a pandas
column of None): its pairs are kept and said to be unjudgeable, never a polars type error."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from conftest import jobs

import pairwise_polars as pp


@pytest.mark.parametrize("column", ["output", "input"])
def test_an_all_null_text_column_gives_skipped_pairs_not_a_type_error(column: str) -> None:
    rows = jobs(2).with_columns(pl.lit(None).alias(column))
    assert rows.schema[column] == pl.Null
    pairs = pp.form_pairs(rows)
    assert pairs.height == pp.form_pairs(jobs(2)).height
    assert pairs.schema[f"{column}_a"] == pl.String
    assert pairs["skip_reason"].str.starts_with(f"null {column}_").all()
    scored = pp.score(rows, "pairwise-bias")
    assert scored["score"].null_count() == scored.height
    assert scored["error"].str.starts_with(f"not judged: null {column}_").all()


def test_an_all_null_output_in_a_json_file_is_read_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "rows.ndjson"
    jobs(2).with_columns(output=pl.lit(None)).write_ndjson(path)
    assert pl.scan_ndjson(path).collect_schema()["output"] == pl.Null
    pairs = pp.form_pairs(path).collect()
    assert pairs.height > 0 and pairs["skip_reason"].is_not_null().all()
    found = pp.disparities(jobs(2).with_columns(output=pl.lit(None)))
    assert found.height > 0
