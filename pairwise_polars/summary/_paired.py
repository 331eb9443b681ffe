"""Paired differences of summary figures between two runs, with cluster-robust intervals.

The same groups appear in both runs, so a change is measured within each group and the
between-group spread, which dominates a figure's variance, cancels. Every figure is a sum of
ratio means ``sign * S / N`` over per-group sums (a rate: hits over scored pairs; the mean:
scores over scored pairs; the excess: the mean minus the control mean). Its change ``delta =
after - before`` is linearised per group,

``r_g = sum over the after terms of sign * (s_g - m n_g) / N  -  the same over the before terms``

and ``V = G/(G-1) * sum_g r_g^2`` over the ``G`` groups with a scored pair in either run (the
variance of the excess in :mod:`pairwise_polars.summary._excess`, with the run in place of the
pair kind). The interval is ``delta -/+ t * sqrt(V)`` on Satterthwaite's degrees of freedom,
and the p-value that of ``delta / sqrt(V)`` under Student's t (two-sided). Everything is a
function of per-group sums: merged blocks of sums give the same figures.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from pairwise_polars.summary._intervals import satterthwaite
from pairwise_polars.summary._student_t import t_cdf, t_quantile

# figure -> its terms (sign, sum column, count column); the sign of "worse" for each figure
FIGURES: dict[str, tuple[tuple[int, str, str], ...]] = {
    "equivalence_rate": ((1, "n_equivalent", "n_scored"),),
    "divergence_rate": ((1, "n_divergent", "n_scored"),),
    "mean_divergence": ((1, "score_sum", "n_scored"),),
    "excess_divergence": (
        (1, "score_sum", "n_scored"),
        (-1, "control_score_sum", "n_control_scored"),
    ),
}
WORSE = {"equivalence_rate": -1, "divergence_rate": 1, "mean_divergence": 1, "excess_divergence": 1}
"""The direction in which each figure gets worse: +1 up, -1 down."""
RUNS = ("before", "after")


def _estimate(terms: Sequence[tuple[int, str, str]], run: str) -> pl.Expr:
    parts = [sign * pl.col(f"{s}_{run}").sum() / pl.col(f"{n}_{run}").sum() for sign, s, n in terms]
    defined = pl.all_horizontal([pl.col(f"{n}_{run}").sum() > 0 for _, _, n in terms])
    return pl.when(defined).then(pl.sum_horizontal(parts))


def _residual(terms: Sequence[tuple[int, str, str]], run: str) -> pl.Expr:
    parts = []
    for sign, s, n in terms:
        big_s, big_n = pl.col(f"{s}_{run}").sum(), pl.col(f"{n}_{run}").sum()
        parts.append(sign * (pl.col(f"{s}_{run}") - big_s / big_n * pl.col(f"{n}_{run}")) / big_n)
    return pl.sum_horizontal(parts)


def paired_figures(sums: pl.LazyFrame, keys: Sequence[str]) -> pl.DataFrame:
    """One row per (``keys``, figure) from per-group sums of both runs (the columns of
    ``group_sums`` suffixed ``_before`` and ``_after``, zero where a group has no pair in a
    run): ``before``, ``after``, ``delta``, ``n_groups`` and the sums of squared (and fourth
    power) residuals ``__r2``, ``__r4``."""
    frames = []
    for figure, terms in FIGURES.items():
        counts = [f"{n}_{run}" for _, _, n in terms for run in RUNS]
        before, after = _estimate(terms, "before"), _estimate(terms, "after")
        r = _residual(terms, "after") - _residual(terms, "before")
        defined = before.is_not_null() & after.is_not_null()
        frames.append(
            sums.group_by(keys, maintain_order=True)
            .agg(
                before=before,
                after=after,
                n_groups=(pl.any_horizontal([pl.col(c) > 0 for c in counts])).sum().cast(pl.Int64),
                __r2=pl.when(defined).then((r * r).sum()),
                __r4=pl.when(defined).then((r * r * r * r).sum()),
            )
            .with_columns(figure=pl.lit(figure))
        )
    return pl.concat(pl.collect_all(frames)).with_columns(delta=pl.col("after") - pl.col("before"))


def with_inference(frame: pl.DataFrame, confidence: float) -> pl.DataFrame:
    """Add ``delta_se``, ``delta_df``, ``delta_low``, ``delta_high`` and ``p_value`` to the
    output of :func:`paired_figures` (null with fewer than two groups)."""
    g = pl.col("n_groups")
    gf = g.cast(pl.Float64)
    a, b = pl.col("__r2"), pl.col("__r4")
    frame = frame.with_columns(
        delta_se=pl.when(g > 1).then((gf / (gf - 1) * a).sqrt()),
        delta_df=pl.when(g > 1).then(satterthwaite(a, b, g).cast(pl.Int64)),
    )
    p = 0.5 + confidence / 2
    quantiles = {df: t_quantile(p, df) for df in frame["delta_df"].drop_nulls().unique().to_list()}
    q = pl.col("delta_df").replace_strict(quantiles, default=None, return_dtype=pl.Float64)
    p_values = [
        _two_sided(delta, se, df)
        for delta, se, df in frame.select("delta", "delta_se", "delta_df").iter_rows()
    ]
    return frame.with_columns(
        delta_low=(pl.col("delta") - q * pl.col("delta_se")).clip(-1.0, 1.0),
        delta_high=(pl.col("delta") + q * pl.col("delta_se")).clip(-1.0, 1.0),
        p_value=pl.Series(p_values, dtype=pl.Float64),
    ).drop("__r2", "__r4")


def _two_sided(delta: float | None, se: float | None, df: int | None) -> float | None:
    if delta is None or se is None or df is None:
        return None
    if se == 0:  # every group changed by exactly the same amount: no noise to hide behind
        return 1.0 if delta == 0 else 0.0
    return min(1.0, 2 * t_cdf(-abs(delta) / se, df))


def one_sided(excess: float | None, se: float | None, df: int | None) -> float | None:
    """P(T > excess / se): the evidence that a figure exceeds an allowance by ``excess``."""
    if excess is None or se is None or df is None:
        return None
    if se == 0:
        return 0.0 if excess > 0 else 1.0
    return t_cdf(-excess / se, df)
