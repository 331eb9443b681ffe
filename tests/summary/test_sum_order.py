"""A summary does not depend on the order its per-group sums arrive in, merged or not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
from polars.testing import assert_frame_equal

import pairwise_polars as pp
from pairwise_polars.summary import combine, error_sums, group_sums, merge_sums

KEYS = ["metric", "dimension"]
OPTIONS = {"equivalence_threshold": 0.0, "divergence_threshold": 0.5}


def scored(seed: int, groups: int = 400) -> pl.DataFrame:
    """Groups of 1 to 8 pairs, a quarter of them control pairs, scores that are not short
    binary fractions (so float sums depend on their order), some failed, some groups with no
    dimension, one group far larger than the others."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 9, groups)
    sizes[0] = 300
    group = np.repeat(np.arange(groups), sizes)
    rows = group.size
    dimension = rng.choice(np.array(["age", "gender", "race", None], dtype=object), groups)
    score = rng.binomial(4, rng.beta(0.5, 2.0, groups)[group]) / 4 * 0.987654321
    return pl.DataFrame(
        {
            "group_id": group,
            "dimension": dimension[group],
            "metric": rng.choice(["pairwise-bias", "pairwise-refusal-disparity"], rows),
            "pair_kind": np.where(rng.random(rows) < 0.25, "control", "counterfactual"),
            "score": np.where(rng.random(rows) < 0.05, np.nan, score),
        }
    ).with_columns(pl.col("score").fill_nan(None), pl.col("dimension").cast(pl.String))


def test_a_summary_is_the_same_to_the_last_bit_whatever_order_its_sums_arrive_in() -> None:
    # What Ray hands back: block sums in any order, merged or (repeated groups) not.
    data = scored(3)
    blocks = [
        group_sums(part.lazy(), KEYS, "group_id", **OPTIONS).collect()
        for _, part in data.group_by(pl.int_range(pl.len()) % 3, maintain_order=True)
    ]
    repeated = pl.concat(blocks)
    merged = group_sums(data.lazy(), KEYS, "group_id", **OPTIONS).collect()
    for sums in (merged, repeated):
        expected = combine(sums, KEYS)
        for seed in (1, 2):
            shuffled = sums.sample(fraction=1.0, shuffle=True, seed=seed)
            assert_frame_equal(combine(shuffled, KEYS), expected, check_exact=True)
    assert repeated.height > merged.height


def judged(seed: int, groups: int = 300) -> pl.DataFrame:
    """A scored frame with everything a summary sums: control pairs, failed judgements, both
    orders, labels, scores that are not short binary fractions (so the order of any float sum
    shows in its last bits), groups of 1 to 8 pairs and one of 300."""
    data = scored(seed, groups)
    rng = np.random.default_rng(seed + 100)
    rows = data.height
    ab = rng.integers(0, 4, rows) / 3
    labelled = rng.random(rows) < 0.3
    return data.with_columns(
        pair_id=pl.int_range(pl.len()),
        error=pl.when(pl.col("score").is_null()).then(pl.lit("timeout after 3 attempts")),
        score_ab=pl.when(pl.col("score").is_not_null()).then(pl.Series(ab)),
        score_ba=pl.when(pl.col("score").is_not_null()).then(pl.col("score") * 2 - pl.Series(ab)),
        raw_label=pl.Series(np.where(labelled, rng.integers(0, 5, rows), np.nan)).fill_nan(None),
    ).with_columns(
        score_ba=pl.col("score_ba").clip(0.0, 1.0), label=pl.col("raw_label") / 4 * 0.987654321
    )


def parts(data: pl.DataFrame, folder: Path, size: int, *, whole_groups: bool) -> pl.LazyFrame:
    """``data`` written as parquet parts of about ``size`` rows (whole groups, as a
    chunked run writes them, or cut anywhere) and scanned back."""
    folder.mkdir()
    row = pl.int_range(pl.len())
    if whole_groups:  # a group's rows together, in the part where its first row falls
        data = data.sort("group_id", maintain_order=True)
        data = data.with_columns(part=(row // size).first().over("group_id"))
    else:
        data = data.with_columns(part=row // size)
    for index, part in data.group_by("part", maintain_order=True):
        part.drop("part").write_parquet(folder / f"part-{index[0]:05d}.parquet")
    return pl.scan_parquet(folder / "*.parquet")


def bits(summary: pl.DataFrame) -> pl.DataFrame:
    """Each float column as its 64 bits: frames equal only when every value is, to the bit."""
    return summary.with_columns(
        pl.col(c).reinterpret(signed=True) for c, t in summary.schema.items() if t == pl.Float64
    )


def test_a_summary_is_the_same_to_the_last_bit_by_every_path_in_any_row_order(
    tmp_path: Path,
) -> None:
    # In memory, rows shuffled (within groups too), parquet parts of whole groups at several
    # chunk sizes or cut anywhere, either engine, and block sums merged as Ray merges them.
    # With labels on one path only: their figures take a second an aggregate.
    data = judged(5)
    labelled = bits(pp.aggregate(data))
    assert labelled["mean_divergence_ppi"].null_count() < labelled.height
    shuffled = data.sample(fraction=1.0, shuffle=True, seed=1)
    with pl.Config(engine_affinity="streaming"):
        scan = parts(shuffled, tmp_path / "labelled", 300, whole_groups=False)
        assert_frame_equal(bits(pp.aggregate(scan)), labelled, check_exact=True)
    data = data.drop("label", "raw_label")
    expected = bits(pp.aggregate(data))
    assert expected.filter(pl.col("excess_divergence_low").is_not_null()).height > 3
    assert expected["mean_position_gap"].null_count() == 0
    for seed in (1, 2):
        shuffled = data.sample(fraction=1.0, shuffle=True, seed=seed)
        assert_frame_equal(bits(pp.aggregate(shuffled)), expected, check_exact=True)
    for size, whole in ((37, True), (250, True), (1000, False)):
        scan = parts(shuffled, tmp_path / f"{size}", size, whole_groups=whole)
        for engine in ("in-memory", "streaming"):
            with pl.Config(engine_affinity=engine):
                assert_frame_equal(bits(pp.aggregate(scan)), expected, check_exact=True)
    keys = ["metric", "dimension"]
    blocks = [  # whole groups per block, blocks in any order: what a Ray run hands back
        group_sums(part.lazy(), keys, "group_id", **OPTIONS).collect()
        for _, part in data.group_by(pl.col("group_id") % 4)
    ]
    errors = error_sums(data.lazy(), keys)
    for order in (blocks, blocks[::-1]):
        merged = combine(merge_sums(order, [*keys, "group_id"]), keys, errors=errors)
        assert_frame_equal(bits(merged), expected, check_exact=True)


def test_many_groups_give_the_same_bits_whatever_order_the_rows_arrive_in() -> None:
    # At a few thousand per-group rows polars adds a slice's rows in parts split by their
    # place in the frame: the per-group rows must sit in the same places, not only in the
    # same order within each slice.
    data = scored(3, groups=1500)
    expected = bits(pp.aggregate(data))
    for seed in (1, 2):
        shuffled = data.sample(fraction=1.0, shuffle=True, seed=seed)
        assert_frame_equal(bits(pp.aggregate(shuffled)), expected, check_exact=True)
