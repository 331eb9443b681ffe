"""A summary does not depend on the order its per-group sums arrive in, merged or not."""

from __future__ import annotations

import numpy as np
import polars as pl
from polars.testing import assert_frame_equal

from pairwise_polars.summary import combine, group_sums

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
