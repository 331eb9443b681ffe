"""Rows without a dimension column (the metric does not need one) and input without rows."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from conftest import jobs, letters

import pairwise_polars as pp


def test_rows_without_a_dimension_score_and_summarise_overall() -> None:
    data = jobs(4).drop("dimension")
    pairs = pp.form_pairs(data)
    assert "dimension" not in pairs.columns and pairs.height > 0
    scored = pp.score(data, ["pairwise-bias", "pairwise-refusal-disparity"], progress=False)
    summary = pp.summarize(scored)
    assert summary.select("metric", "scope").rows() == [
        ("pairwise-bias", "overall"),
        ("pairwise-refusal-disparity", "overall"),
    ]
    assert pp.aggregate(scored).columns[:2] == ["metric", "n_pairs"]
    contrastive = pp.form_pairs(letters().drop("dimension"), "contrastive")
    assert contrastive.height == 60 and "dimension" not in contrastive.columns


def test_the_demographic_metric_takes_its_attribute_from_a_parameter() -> None:
    data = jobs(2).drop("dimension")
    with pytest.raises(pp.MetricError, match="have no dimension"):
        pp.score(data, "pairwise-demographic-bias", progress=False)
    metric = pp.get_metric("pairwise-demographic-bias", attribute_under_test="age")
    scored = pp.score(data, metric, progress=False)
    assert scored["error"].null_count() == scored.height


def test_a_dimension_column_that_was_named_must_exist() -> None:
    with pytest.raises(pp.ColumnError, match="Missing column 'attr' \\(the attribute under test"):
        pp.form_pairs(jobs(2), dimension="attr")


def test_input_without_rows_says_so(tmp_path: Path) -> None:
    empty = jobs(1).head(0)
    with pytest.warns(pp.EmptyDataWarning, match="^The input has no rows: there is nothing"):
        assert pp.form_pairs(empty).height == 0
    path = tmp_path / "empty.parquet"
    empty.write_parquet(path)
    with pytest.warns(pp.EmptyDataWarning, match=f"^The input \\({str(path)!r}\\) has no rows"):
        assert pp.score(path, progress=False).height == 0
    with pytest.warns(pp.EmptyDataWarning):
        pp.form_pairs(pl.LazyFrame(schema=empty.schema))
