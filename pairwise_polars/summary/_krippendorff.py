"""Krippendorff's alpha of a panel at the interval level (``judge_report``'s figures, and
scores too continuous for the ordinal level of :mod:`pairwise_polars.summary._ordinal`), from
per-group sums (so it merges across chunks and its interval resamples groups).

alpha = 1 - D_o / D_e: the disagreement observed within units over the disagreement expected
by chance over all pairable values (Krippendorff 2011, "Computing Krippendorff's
alpha-reliability"; the ``krippendorff`` package computes the same from a coincidence matrix).
Units are (pair, metric) requests; the values are each judge's score for it (its mean over
repeats); a unit with fewer than two values is not pairable and left out. With the interval
distance (v - v')^2, the sum over ordered pairs of values within a unit of m values is
2 (m * sum v^2 - (sum v)^2), so

    D_o = (1 / n) * sum_u 2 (m_u s2_u - s1_u^2) / (m_u - 1)
    D_e = 2 (n S2 - S1^2) / (n (n - 1))

with n, S1, S2 the pairable values' count, sum and sum of squares. For a binary rubric the
nominal distance [v != v'] equals (v - v')^2, so the same sums give nominal alpha.
"""

from __future__ import annotations

import numpy as np
import polars as pl

ALPHA_SUMS = ("alpha_n", "alpha_s1", "alpha_s2", "alpha_within")
"""Per-group sums alpha is computed from."""


def unit_sums(values: pl.Expr, n: pl.Expr) -> list[pl.Expr]:
    """Aggregations of one unit's values into the alpha sums (zeros when not pairable)."""
    m = n.cast(pl.Float64)
    s1, s2 = values.sum(), (values * values).sum()
    pairable = n >= 2
    return [
        pl.when(pairable).then(m).otherwise(0.0).alias("alpha_n"),
        pl.when(pairable).then(s1).otherwise(0.0).alias("alpha_s1"),
        pl.when(pairable).then(s2).otherwise(0.0).alias("alpha_s2"),
        pl.when(pairable)
        .then(2 * (m * s2 - s1 * s1) / (m - 1))
        .otherwise(0.0)
        .alias("alpha_within"),
    ]


def alpha_expr() -> pl.Expr:
    """Alpha from summed columns ``alpha_n``, ``alpha_s1``, ``alpha_s2``, ``alpha_within``;
    null when nothing is pairable or every value is the same (no variation to agree on)."""
    n, s1, s2 = pl.col("alpha_n"), pl.col("alpha_s1"), pl.col("alpha_s2")
    expected = 2 * (n * s2 - s1 * s1) / (n * (n - 1))
    observed = pl.col("alpha_within") / n
    return pl.when((n >= 2) & (expected > 1e-12)).then(1 - observed / expected)


def alpha_of(n: np.ndarray, s1: np.ndarray, s2: np.ndarray, within: np.ndarray) -> np.ndarray:
    """Alpha from summed arrays (NaN where undefined)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = 2 * (n * s2 - s1 * s1) / (n * (n - 1))
        alpha = 1 - (within / n) / expected
    return np.where((n >= 2) & (expected > 1e-12), alpha, np.nan)


def bootstrap_alpha(
    groups: pl.DataFrame, confidence: float, *, draws: int = 1000, seed: int = 0
) -> tuple[float | None, float | None]:
    """A percentile interval for alpha from resampling groups (rows of ``groups``, with the
    ``ALPHA_SUMS`` columns) with replacement; (None, None) with fewer than two groups."""
    g = groups.height
    if g < 2:
        return None, None
    sums = groups.select(ALPHA_SUMS).to_numpy().astype(np.float64)
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(g, np.full(g, 1.0 / g), size=draws).astype(np.float64)
    n, s1, s2, within = (counts @ sums).T
    alphas = alpha_of(n, s1, s2, within)
    alphas = alphas[~np.isnan(alphas)]
    if alphas.size < draws / 2:  # most resamples had nothing to agree on: no interval
        return None, None
    tail = (1 - confidence) / 2
    low, high = np.quantile(alphas, [tail, 1 - tail])
    return float(low), float(high)


def effective_judges(k: pl.Expr, alpha: pl.Expr) -> pl.Expr:
    """How many independent judges ``k`` judges agreeing at ``alpha`` are worth: the design
    effect of k correlated readings, k / (1 + (k - 1) rho), with rho = alpha clipped to [0, 1]
    (alpha 1: one judge's worth; alpha 0 or below: k)."""
    rho = alpha.clip(0.0, 1.0)
    return k / (1 + (k - 1) * rho)
