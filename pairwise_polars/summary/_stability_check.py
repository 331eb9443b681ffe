"""The gate's check of ``verdict_stability`` (a summary column from :func:`verdict_stability`):
a verdict that flips on resampled repeats cannot vouch for anything, so it is inconclusive."""

from __future__ import annotations

import polars as pl

STABILITY = "verdict_stability"
MIN_STABILITY = 0.9
"""Below this share of resampled runs agreeing, a verdict is inconclusive."""


def stability_checks(summary: pl.DataFrame, label: pl.Expr) -> pl.DataFrame | None:
    """One check per summary row with a ``verdict_stability`` (None: the summary has none)."""
    if STABILITY not in summary.columns:
        return None
    rows = summary.filter(pl.col(STABILITY).is_not_null())
    if rows.is_empty():
        return None
    observed = pl.col(STABILITY).cast(pl.Float64)
    percent = (observed * 100).round(0).cast(pl.Int64).cast(pl.String)
    return rows.select(
        metric=pl.col("metric"),
        slice=label,
        gate=pl.lit(STABILITY),
        threshold=pl.lit(MIN_STABILITY, pl.Float64),
        observed=observed,
        passed=observed >= MIN_STABILITY,
        note=pl.when(observed < MIN_STABILITY).then(
            pl.lit("the verdict holds in only ")
            + percent
            + pl.lit(
                "% of resampled runs (each request's repeats drawn again): inconclusive; ask "
                "more repeats, a steadier judge (temperature 0) or a panel"
            )
        ),
    )
