"""Label rows: read from frames and files, checked against the scored pairs and the rubric,
attached as ``label`` / ``raw_label``; every unusable row is named."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import pairwise_polars as pp
from pairwise_polars.labels import attach_labels

BIG_ID = 18_446_744_073_709_551_000  # a pair_id beyond Int64, as real ids often are


def scored() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "pair_id": pl.Series([BIG_ID, 2, 3, 4], dtype=pl.UInt64),
            "group_id": ["g1", "g1", "g2", "g2"],
            "id_a": [0, 0, 3, 3],
            "id_b": [1, 2, 4, 5],
            "metric": "pairwise-bias",
            "score": [0.0, 0.5, 1.0, 0.25],
            "raw_score": [0.0, 2.0, 4.0, 1.0],
        }
    )


def test_labels_by_pair_id_from_a_csv_are_normalised_and_empty_ones_skipped(
    tmp_path: Path,
) -> None:
    path = tmp_path / "labels.csv"
    path.write_text(f"pair_id,metric,label,note\n{BIG_ID},pairwise-bias,2,x\n3,pairwise-bias,,\n")
    out = attach_labels(scored().lazy(), str(path)).collect().sort("pair_id")
    assert out["raw_label"].to_list() == [None, None, None, 2.0]
    assert out["label"].to_list() == [None, None, None, 0.5]
    assert out.height == 4 and out["pair_id"].dtype == pl.UInt64


def test_labels_by_group_and_ids() -> None:
    labels = pl.DataFrame({"group_id": ["g2"], "id_a": [3], "id_b": [5], "metric": "pairwise-bias",
                           "label": [4]})  # fmt: skip
    out = attach_labels(scored().lazy(), labels).collect()
    assert out.filter(pl.col("label").is_not_null())["pair_id"].to_list() == [4]


@pytest.mark.parametrize(
    ("labels", "words"),
    [
        ({"pair_id": [2, 99], "label": [1, 1]}, ["1 labels name a (pair, metric)", "row 2",
                                                  "pair_id=99"]),
        ({"pair_id": [2, 3], "label": [5, 1]}, ["off their metric's rubric", "pairwise-bias: 0-4",
                                                 "row 1", "label=5"]),
        ({"pair_id": [2, 3], "label": [1.5, 1]}, ["off their metric's rubric", "label=1.5"]),
        ({"pair_id": [2, 2], "label": [1, 2]}, ["2 label rows label the same", "row 1", "row 2"]),
        ({"pair_id": [2, 3], "label": ["1", "high"]}, ["not numbers", "row 2", "'high'"]),
    ],
)  # fmt: skip
def test_unusable_label_rows_are_named(labels: dict[str, list[object]], words: list[str]) -> None:
    frame = pl.DataFrame({**labels, "metric": "pairwise-bias"}, strict=False)
    with pytest.raises(pp.PairwiseError) as caught:
        pp.aggregate(scored(), labels=frame)
    for word in words:
        assert word in str(caught.value)


def test_missing_label_columns_are_named() -> None:
    with pytest.raises(pp.ColumnError, match=r"need the columns label, pair_id \(or group_id"):
        pp.aggregate(scored(), labels=pl.DataFrame({"metric": ["pairwise-bias"], "id": [1]}))


def test_a_label_under_an_unscored_metric_is_unknown() -> None:
    labels = pl.DataFrame({"pair_id": [2], "metric": ["pairwise-refusal-disparity"], "label": [1]})
    with pytest.raises(pp.ColumnError, match="metric=pairwise-refusal-disparity"):
        pp.aggregate(scored(), labels=labels)
