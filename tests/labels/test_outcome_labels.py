"""Outcome labels (for disparities): every unusable row is an error that names it."""

from __future__ import annotations

import polars as pl
import pytest

import pairwise_polars as pp
from pairwise_polars._errors import ColumnError, DataSourceError
from tests.summary.test_disparity_ppi import pair_ids, rows


@pytest.mark.parametrize(
    ("metric", "side_a", "side_b", "twice", "error", "message"),
    [
        ("decision", 2, 0, False, DataSourceError, "a yes/no outcome that is not 0 or 1: row 1"),
        ("approval", 1, 0, False, DataSourceError, "an outcome other than decision, amount"),
        ("amount", 100, None, False, DataSourceError, "a side that is empty or not a number"),
        ("decision", 1, 0, True, DataSourceError, "the same (pair, outcome) more than once"),
    ],
)
def test_bad_outcome_labels_name_the_row(
    metric: str, side_a: object, side_b: object, twice: bool, error: type, message: str
) -> None:
    frame = rows([(1, 1), (1, 0)])
    ids = pair_ids(frame)[: 1 + twice] if not twice else [pair_ids(frame)[0]] * 2
    labels = pl.DataFrame(
        {"pair_id": ids, "metric": metric, "label_a": side_a, "label_b": side_b},
        schema_overrides={"label_a": pl.String, "label_b": pl.String},
    )
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        pp.disparities(frame, labels=labels)


def test_unknown_pairs_and_missing_columns() -> None:
    frame = rows([(1, 1), (1, 0)])
    labels = pl.DataFrame({"pair_id": ["nope"], "metric": "decision", "label_a": 1, "label_b": 0})
    with pytest.raises(DataSourceError, match="name a pair the data does not have: row 1"):
        pp.disparities(frame, labels=labels)
    with pytest.raises(ColumnError, match=r"need the columns \['label_b'\]"):
        pp.disparities(frame, labels=labels.drop("label_b"))
    empty = labels.with_columns(pl.lit(None, pl.String).alias(c) for c in ("label_a", "label_b"))
    assert pp.disparities(frame, labels=empty)["n_labelled"].item() == 0  # not yet labelled
