"""Group ids far apart (their span past what one int64 holds beside the slice) still give each
slice its own rows and the same bits in any row order."""

from __future__ import annotations

import polars as pl
from polars.testing import assert_frame_equal

import pairwise_polars as pp


def test_group_ids_spanning_the_int64_range_keep_each_slice_whole() -> None:
    groups = [-(2**62), -5, 0, 7, 2**62, 2**63 - 1]
    rows = [(g, d, m) for g in groups for d in ("age", "race") for m in range(3)]
    data = pl.DataFrame(
        {
            "group_id": [g for g, _, _ in rows],
            "dimension": [d for _, d, _ in rows],
            "metric": "pairwise-bias",
            "score": [(i % 7) / 7 for i in range(len(rows))],
        }
    )
    expected = pp.aggregate(data)
    assert expected.select("dimension", "n_pairs", "n_groups").rows() == [
        ("age", 18, 6),
        ("race", 18, 6),
    ]
    for seed in (1, 2):
        shuffled = pp.aggregate(data.sample(fraction=1.0, shuffle=True, seed=seed))
        assert_frame_equal(shuffled, expected, check_exact=True)
