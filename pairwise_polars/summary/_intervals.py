"""Intervals over clustered pairs: a Wilson score interval on an effective sample size.

Pairs of one group share a reference (or a prompt), so their scores are correlated; groups are
taken as independent, pairs within a group as arbitrarily correlated. For a share (a rate) or a
mean of scores in [0, 1] over ``N`` scored pairs in ``G`` groups with estimate ``m``:

- the ratio estimator's cluster-robust variance ``V = G/(G-1) * sum_g r_g^2 / N^2``, with
  ``r_g = s_g - m * n_g`` (``s_g``, ``n_g``: the group's sum and count);
- the effective sample size ``n_eff = m(1-m) / V``: the number of independent 0/1 outcomes
  whose binomial variance equals ``V`` (for a rate at most ``N``: a design effect below 1 is
  not trusted). When the data show no spread (every value equal, so ``V = 0``) there is no
  variance to estimate and ``n_eff = N``;
- the Wilson score interval for ``m`` on ``n_eff`` with a Student t quantile instead of z: ``G - 1``
  degrees of freedom for the rates; for the mean, Satterthwaite's degrees of freedom for the
  variance (``2 A^2 / (B - A^2 / G)`` with ``A = sum r_g^2``, ``B = sum r_g^4``, rounded down
  and kept in ``[1, G - 1]``), which fall towards 1 when one or two groups carry the variance,
  as they do when scores are skewed near 0.

With one group there is no between-group variance and the bounds are null. The choice was
simulated, not assumed: ``benchmarks/bench_intervals.py`` measures coverage and width.
"""

from __future__ import annotations

import polars as pl

from pairwise_polars.summary._student_t import t_quantile

RATES = {"equivalence_rate": "n_equivalent", "divergence_rate": "n_divergent"}
"""Each rate of the summary and the group sum counting its hits."""
MEAN = "mean_divergence"
_NO_SPREAD = 1e12  # an n_eff beyond N * this is rounding noise of a zero variance


def residual_sums(total: str, count: str, name: str, *, fourth: bool = False) -> list[pl.Expr]:
    """Aggregations over a slice's per-group sums: ``{name}_r2`` (and ``{name}_r4``), the sums
    of ``r_g^2`` (and ``r_g^4``) with ``r_g = total_g - m * count_g``."""
    m = pl.col(total).sum() / pl.col(count).sum()
    r = pl.col(total) - m * pl.col(count)
    scored = pl.col(count).sum() > 0
    out = [pl.when(scored).then((r * r).sum()).alias(f"{name}_r2")]
    if fourth:
        out.append(pl.when(scored).then((r * r * r * r).sum()).alias(f"{name}_r4"))
    return out


def with_intervals(summary: pl.DataFrame, confidence: float) -> pl.DataFrame:
    """Add the estimate and ``_low`` / ``_high`` bounds of both rates and of the mean to a frame
    with one row per slice holding ``n_scored``, ``n_groups``, the hit counts, ``score_sum``
    and the residual sums of :func:`residual_sums`."""
    groups = pl.col("n_groups")
    mean_df = satterthwaite(pl.col(f"{MEAN}_r2"), pl.col(f"{MEAN}_r4"), groups)
    frame = summary.with_columns(
        (groups - 1).clip(lower_bound=1).cast(pl.Int64).alias("__df_rate"),
        mean_df.cast(pl.Int64).alias("__df_mean"),
    )
    degrees = {
        int(v)
        for column in ("__df_rate", "__df_mean")
        for v in frame[column].drop_nulls().unique().to_list()
    }
    p = 0.5 + confidence / 2
    quantiles = {df: t_quantile(p, df) for df in sorted(degrees)}

    def q(column: str) -> pl.Expr:
        return pl.col(column).replace_strict(quantiles, default=None, return_dtype=pl.Float64)

    n = pl.col("n_scored").cast(pl.Float64)
    columns: list[pl.Expr] = []
    for name, hits in RATES.items():
        estimate = pl.col(hits).cast(pl.Float64) / n
        columns += _bounds(name, estimate, pl.col(f"{name}_r2"), q("__df_rate"), cap=True)
    estimate = pl.col("score_sum") / n
    columns += _bounds(MEAN, estimate, pl.col(f"{MEAN}_r2"), q("__df_mean"), cap=False)
    return frame.with_columns(columns).drop("__df_rate", "__df_mean")


def _bounds(name: str, m: pl.Expr, r2: pl.Expr, q: pl.Expr, *, cap: bool) -> list[pl.Expr]:
    n = pl.col("n_scored").cast(pl.Float64)
    g = pl.col("n_groups").cast(pl.Float64)
    variance = g / (g - 1) * r2 / (n * n)
    binomial = m * (1 - m)
    n_eff = binomial / variance
    spread = (variance > 0) & (binomial > 0) & (n_eff < n * _NO_SPREAD)
    n_eff = pl.when(spread).then(n_eff).otherwise(n)
    if cap:
        n_eff = pl.min_horizontal(n_eff, n)
    denominator = 1 + q * q / n_eff
    centre = (m + q * q / (2 * n_eff)) / denominator
    half = q * (binomial / n_eff + q * q / (4 * n_eff * n_eff)).sqrt() / denominator
    scored = pl.col("n_scored") > 0
    bounded = scored & (pl.col("n_groups") > 1)
    return [
        pl.when(scored).then(m).alias(name),
        pl.when(bounded).then((centre - half).clip(0.0, 1.0)).alias(f"{name}_low"),
        pl.when(bounded).then((centre + half).clip(0.0, 1.0)).alias(f"{name}_high"),
    ]


def satterthwaite(a: pl.Expr, b: pl.Expr, groups: pl.Expr) -> pl.Expr:
    """Degrees of freedom of the cluster-robust variance (``A = sum r^2``, ``B = sum r^4``):
    ``2 A^2 / (B - A^2 / G)``, rounded down, in ``[1, G - 1]``; ``G - 1`` without spread."""
    g = groups.cast(pl.Float64)
    top = (g - 1).clip(lower_bound=1)
    excess = b - a * a / g
    df = (2 * a * a / excess).floor()
    usable = (a > 0) & (excess > 0) & df.is_finite()
    return pl.when(usable).then(df.clip(1, top)).otherwise(top)
