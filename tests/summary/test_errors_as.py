"""Failed judgements at their worst (issue 23, ``errors_as="worst"``): an unscored pair moves the
estimate and both bounds by exactly the count it stands for, never by a guess (hypothesis)."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import pairwise_polars as pp
from pairwise_polars.summary._three_way import counted

RUBRIC = (0.0, 0.25, 0.5, 0.75, 1.0)


def frame_of(scores: list[float | None]) -> pl.DataFrame:
    """One pair per score, two pairs a group; ``None`` is a failed judgement."""
    return pl.DataFrame(
        {
            "pair_id": [f"p{i}" for i in range(len(scores))],
            "group_id": [f"g{i // 2}" for i in range(len(scores))],
            "metric": "pairwise-bias",
            "dimension": "gender",
            "score": pl.Series(scores, dtype=pl.Float64),
            "error": pl.Series(
                [None if s is not None else "timeout" for s in scores], dtype=pl.String
            ),
        }
    )


@settings(max_examples=15, deadline=None)
@given(
    scores=st.lists(st.sampled_from(RUBRIC), min_size=6, max_size=40),
    lost=st.lists(st.integers(0, 10_000), min_size=1, max_size=6),
)
@example(scores=[0.0] * 6, lost=[0, 1, 2, 75, 196, 269])  # every judgement failed
def test_a_failed_judgement_moves_the_figure_and_its_bounds_by_its_count(
    scores: list[float], lost: list[int]
) -> None:
    failed = sorted({i % len(scores) for i in lost})
    with_errors = frame_of([None if i in failed else s for i, s in enumerate(scores)])
    summary = pp.aggregate(with_errors, by=[])
    row = summary.row(0, named=True)
    n, k = row["n_pairs"], len(failed)
    scored = n - k
    assert row["n_scored"] == scored
    if scored == 0:  # every judgement failed: nothing is known, and nothing passes
        assert row["divergence_rate"] is None
        verdict = pp.gate(summary, max_divergence_rate=0.5, max_error_rate=None, min_groups=1)
        assert not verdict.passed and verdict.status == "inconclusive"
        return

    # The point: the same as re-scoring every failed pair at its worst (1: divergent, not
    # equivalent), or at its best (0) for the bound that could fail.
    worst = frame_of([1.0 if i in failed else s for i, s in enumerate(scores)])
    best = frame_of([0.0 if i in failed else s for i, s in enumerate(scores)])
    as_worst = pp.aggregate(worst, by=[]).row(0, named=True)
    as_best = pp.aggregate(best, by=[]).row(0, named=True)
    for figure, direction in (
        ("divergence_rate", "max"),
        ("mean_divergence", "max"),
        ("equivalence_rate", "min"),
    ):
        for reading, twin in ((True, as_worst), (False, as_best)):
            moved = summary.select(
                counted(summary.columns, figure, direction, pl.col(figure), worst=reading)
            ).item()
            assert moved == pytest.approx(twin[figure], abs=1e-12)

    # The bounds: each moved by the same map, (bound * scored + count) / pairs.
    def observed(**gates: float) -> float:
        checks = pp.gate(
            summary, conservative=True, max_error_rate=None, min_groups=1, **gates
        ).checks
        return checks.filter(pl.col("gate") == next(iter(gates)))["observed"].item()

    high, low = row["divergence_rate_high"], row["equivalence_rate_low"]
    mean_high = row["mean_divergence_high"]
    if None in (high, low, mean_high):  # no interval (too little spread): nothing to move
        assert observed(max_divergence_rate=0.5) is None or high is not None
        return
    assert observed(max_divergence_rate=0.5) == pytest.approx((high * scored + k) / n)
    assert observed(min_equivalence_rate=0.5) == pytest.approx(low * scored / n)
    assert observed(max_mean_divergence=0.5) == pytest.approx((mean_high * scored + k) / n)
    # ignoring failures reads the measured bound itself
    ignored = pp.gate(
        summary,
        conservative=True,
        max_error_rate=None,
        min_groups=1,
        errors_as="ignore",
        max_divergence_rate=0.5,
    ).checks
    assert ignored.filter(pl.col("gate") == "max_divergence_rate")["observed"].item() == (
        pytest.approx(high)
    )
