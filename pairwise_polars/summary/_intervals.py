"""Intervals over clustered pairs on an effective sample size: Korn-Graubard for the rates,
Wilson with a Student t quantile for the mean.

Pairs of one group share a reference (or a prompt), so their scores are correlated; groups are
taken as independent, pairs within a group as arbitrarily correlated. For a share (a rate) or a
mean of scores in [0, 1] over ``N`` scored pairs in ``G`` groups (group ``g``: ``n_g`` pairs,
sum ``s_g``) with estimate ``m = S / N``:

- the variance is the CR2 (bias-reduced linearisation) cluster-robust variance of the mean,
  ``V = sum_g r_g^2 / (1 - n_g / N) / N^2`` with ``r_g = s_g - m n_g``: the regression of the
  scores on a constant has leverage ``n_g / N`` in group ``g``, and CR2 scales each group's
  residual by the inverse square root of one minus it (equal sizes: ``G / (G - 1)``, CR1);
- the effective sample size ``n_eff = m(1-m) / max(V, s^2 / N)``: the number of independent
  0/1 outcomes whose binomial variance equals ``V``, where ``s^2`` is the variance of one pair's
  score (``m(1-m)`` for a rate, so ``n_eff <= N``): a design effect below 1 is never trusted.
  When the slice shows no spread between groups (``V = 0``: every group's mean is equal, e.g.
  no events at all) the variance cannot be estimated and ``n_eff`` is the worst case,
  ``N^2 / sum_g n_g^2`` (pairs of a group perfectly correlated: ``G`` for equal sizes). When
  fewer than 3 groups (5 for the mean) carry the rarer side (the inverse Herfindahl index of
  the groups' hits, or misses above 1/2), where it landed decides ``V``, so ``n_eff`` is at
  most that worst case (for the rates too: dropping it for equal sizes left groups of 10 at
  intra-group correlation 0.8 near 0 and 1 at 0.82-0.88 coverage);
- a **rate**: Korn and Graubard's interval (R survey's ``svyciprop(method="beta")``): the
  Clopper-Pearson bounds for ``m`` on ``n_eff * (t_{N-1} / t_df)^2`` trials (fractional), with
  ``df`` Bell and McCaffrey's below, so the exact binomial bounds carry the design's degrees of
  freedom. Where the worst case sets ``n_eff`` and is below ``N`` (some group has more than 1
  pair), the Jeffreys bounds instead, the quantiles of ``Beta(x + 1/2, n - x + 1/2)`` on
  ``n = n_eff`` unscaled (``x = m n``; 0 at ``x = 0``, 1 at ``x = n``): the worst case estimates
  no variance, so it has no degrees of freedom to carry, and it already assumes the most
  clustering the sizes allow (Clopper-Pearson on it was 1.3-1.4x the narrowest covering
  competitor on the held-out grid). With 1 pair per group the worst case is an exact binomial
  count, where Jeffreys under-covers, so Clopper-Pearson stays. The beta quantiles come from
  :mod:`pairwise_polars.summary._beta`;
- the **mean**: the Wilson score interval for ``m`` on ``n_eff`` with a Student t quantile
  instead of z, on the smaller of two degrees of freedom, both fractional (rounded down to
  1/100, never to a whole number): Bell and McCaffrey's
  for CR2 (``N^2 / F`` with ``F = sum d_g^2 - 2/N sum d_g v_g + (sum v_g)^2 / N^2``,
  ``d_g = n_g / (1 - n_g/N)``, ``v_g = n_g d_g``: ``G - 1`` for equal sizes, 1.3 / 4.5 / 15.5
  at 5 / 10 / 30 groups of 1 and 20 pairs), which depends on the sizes only, and
  Satterthwaite's from the data (``2 A^2 / (B - A^2 / G)`` with ``A``, ``B`` the sums of the
  scaled residuals' squares and fourth powers), which falls towards 1 when one or two groups
  carry the variance, as they do when a rate is near 0 or 1.

Everything is a function of the per-group counts and sums (and ``score_sq_sum``), so merged
blocks give the same bounds. With one group the bounds are null. The choice was simulated, not
assumed: ``benchmarks/bench_coverage.py`` measures coverage and width on a grid of group
counts, sizes, correlations and true values.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from pairwise_polars.summary._beta import beta_quantile
from pairwise_polars.summary._student_t import t_quantile

RATES = {"equivalence_rate": "n_equivalent", "divergence_rate": "n_divergent"}
"""Each rate of the summary and the group sum counting its hits."""
MEAN = "mean_divergence"
DESIGN_DF = "__bm_df"
SIZE_SQ = "__n_sq_sum"
MASS_AWAY = 3.0  # groups' worth of mean away from 0 and 1 before a score's spread is trusted
CARRIERS = (5.0, 3.0)  # (mean, rates): fewer groups carrying the rarer side, V is not trusted
NO_SPREAD = 1e-12  # a variance below this share of the binomial one is rounding noise of 0
_PAIRS_DF = "__pairs_df"
_DF_GRID = 100  # degrees of freedom are rounded down to 1/100 below 30, to whole numbers above


def residual_sums(total: str, count: str, name: str, *, fourth: bool = False) -> list[pl.Expr]:
    """Aggregations over a slice's per-group sums: ``{name}_r2`` (and ``{name}_r4``), the sums
    of ``r_g^2`` (and ``r_g^4``) with ``r_g = total_g - m * count_g``, and ``{name}_u2`` /
    ``{name}_u4``, those of the CR2-scaled residual ``r_g / sqrt(1 - count_g / N)``."""
    n = pl.col(count)
    m = pl.col(total).sum() / n.sum()
    r = pl.col(total) - m * n
    # 1 - n_g / N is 0 only when one group holds every pair: no interval then (G = 1).
    u2 = r * r / (1 - n / n.sum())
    scored = n.sum() > 0
    out = [
        # How the total is spread over groups, for the rule of CARRIERS in :func:`_bounds`.
        pl.when(scored).then((pl.col(total) * pl.col(total)).sum()).alias(f"{name}_x2"),
        pl.when(scored).then((pl.col(total) * n).sum()).alias(f"{name}_nx"),
        pl.when(scored).then((r * r).sum()).alias(f"{name}_r2"),
        pl.when(scored).then(u2.sum()).alias(f"{name}_u2"),
        pl.when(scored).then((u2 * u2).sum()).alias(f"{name}_u4"),
    ]
    if fourth:
        out.append(pl.when(scored).then((r * r * r * r).sum()).alias(f"{name}_r4"))
    return out


def design_sums(count: str) -> list[pl.Expr]:
    """Aggregations over a slice's per-group counts: Bell and McCaffrey's degrees of freedom
    of the CR2 variance of a mean (``__bm_df``) and ``sum_g n_g^2`` (``__n_sq_sum``)."""
    n = pl.col(count).cast(pl.Float64)
    big_n = n.sum()
    share = n / big_n
    d = n / (1 - share)
    f = (d * d).sum() - 2 / big_n * (d * d * n).sum() + (d * n).sum() ** 2 / (big_n * big_n)
    usable = (share < 1).all() & (big_n > 0)
    return [
        pl.when(usable).then(big_n * big_n / f).alias(DESIGN_DF),
        (n * n).sum().alias(SIZE_SQ),
    ]


def with_intervals(summary: pl.DataFrame, confidence: float) -> pl.DataFrame:
    """Add the estimate and ``_low`` / ``_high`` bounds of both rates and of the mean to a frame
    with one row per slice holding ``n_scored``, ``n_groups``, the hit counts, ``score_sum``,
    ``score_sq_sum`` and the sums of :func:`residual_sums` and :func:`design_sums`."""
    n = pl.col("n_scored").cast(pl.Float64)
    groups = pl.col("n_groups")
    frame = _figures(summary, n, groups)
    estimates = {name: pl.col(f"__m_{name}") for name in (*RATES, MEAN)}
    p = 0.5 + confidence / 2
    # Each t quantile a column the bounds read (inlined, polars planned its lookup again
    # wherever a bound read it).
    quantiles = {df: f"__q{df}" for df in (_PAIRS_DF, DESIGN_DF, f"__df_{MEAN}")}
    frame = frame.with_columns(t_quantiles(frame, df, p).alias(q) for df, q in quantiles.items())
    q_pairs, q_design = pl.col(quantiles[_PAIRS_DF]), pl.col(quantiles[DESIGN_DF])
    scored = pl.col("n_scored") > 0
    bounded = scored & (groups > 1)
    columns: list[pl.Expr] = [pl.when(scored).then(m).alias(name) for name, m in estimates.items()]
    for name, m in estimates.items():
        n_eff, worst_case = pl.col(f"__neff_{name}"), pl.col(f"__worst_{name}")
        if name == MEAN:
            q = pl.col(quantiles[f"__df_{MEAN}"])
            low, high = _wilson(m, n_eff, q)
            ok = bounded & q.is_not_null()
            columns += [
                pl.when(ok).then(low).alias(f"{name}_low"),
                pl.when(ok).then(high).alias(f"{name}_high"),
            ]
            continue
        # Korn and Graubard: the design's effective n, scaled so that the t quantile on the
        # design's degrees of freedom becomes the one on the pairs'. Where the worst case sets
        # n_eff and is below N (some group has more than 1 pair), Jeffreys on it unscaled: the
        # worst case assumes the most clustering the sizes allow and estimates no variance,
        # so Clopper-Pearson and the degrees of freedom would be conservative twice over. With
        # 1 pair per group the worst case is the exact binomial N, where Jeffreys under-covers.
        ok = bounded & q_design.is_not_null() & q_pairs.is_not_null()
        jeffreys = worst_case & (pl.col(SIZE_SQ) > n)
        scaled = pl.when(jeffreys).then(n_eff).otherwise(n_eff * (q_pairs / q_design) ** 2)
        columns += [
            pl.when(ok).then(scaled).alias(f"__n_{name}"),
            pl.when(ok).then(m * scaled).alias(f"__x_{name}"),
            pl.when(ok).then(jeffreys).alias(f"__j_{name}"),
        ]
    frame = frame.with_columns(columns)
    frame = frame.with_columns(
        bound
        for bounds in beta_bounds_of(
            [(frame[f"__x_{r}"], frame[f"__n_{r}"], frame[f"__j_{r}"], r) for r in RATES],
            confidence,
        )
        for bound in bounds
    )
    passes = [f"__{c}_{name}" for name in estimates for c in ("m", "neff", "worst")]
    return frame.drop(
        f"__df_{MEAN}",
        _PAIRS_DF,
        *passes,
        *quantiles.values(),
        *(f"__{c}_{r}" for r in RATES for c in "nxj"),
    )


def _figures(summary: pl.DataFrame, n: pl.Expr, groups: pl.Expr) -> pl.DataFrame:
    """What every bound reads, each computed once (inlined, polars planned each again wherever
    it appears: most of :func:`with_intervals`' time on a frame of a few slices): the mean's
    degrees of freedom and the pairs', each figure's estimate (``__m_``), its effective n
    (``__neff_``) and whether the worst case set it (``__worst_``)."""
    estimates = {name: pl.col(hits).cast(pl.Float64) / n for name, hits in RATES.items()}
    estimates[MEAN] = pl.col("score_sum") / n
    # The rates' degrees of freedom are the design's (Korn and Graubard); the mean's the
    # smaller of the design's and Satterthwaite's from the data.
    satterthwaite_mean = satterthwaite_df(pl.col(f"{MEAN}_u2"), pl.col(f"{MEAN}_u4"), groups)
    frame = summary.with_columns(
        pl.min_horizontal(pl.col(DESIGN_DF), satterthwaite_mean).alias(f"__df_{MEAN}"),
        (n - 1).alias(_PAIRS_DF),
        *(m.alias(f"__m_{name}") for name, m in estimates.items()),
    )
    # Each figure's worst case, observed effective n and which one holds, then the effective n
    # from those columns (inlined, polars planned each again where the effective n reads it).
    passes: list[pl.Expr] = []
    for name in estimates:
        m = pl.col(f"__m_{name}")
        worst, observed, worst_case = _effective_n(name, m, m * (1 - m))
        passes += [
            worst.alias(f"__wn_{name}"),
            observed.alias(f"__on_{name}"),
            worst_case.alias(f"__worst_{name}"),
        ]
    n_eff = [
        pl.when(pl.col(f"__worst_{name}"))
        .then(pl.col(f"__wn_{name}"))
        .otherwise(pl.col(f"__on_{name}"))
        .alias(f"__neff_{name}")
        for name in estimates
    ]
    return (
        frame.with_columns(passes)
        .with_columns(n_eff)
        .drop(f"__{c}_{name}" for name in estimates for c in ("wn", "on"))
    )


def beta_bounds_of(
    rates: Sequence[tuple[pl.Series, pl.Series, pl.Series, str]], confidence: float
) -> list[tuple[pl.Series, pl.Series]]:
    """``{name}_low`` and ``{name}_high`` of each ``(x, n, jeffreys, name)``: for ``x`` events
    out of ``n`` trials, both fractional (null where either is null), Clopper-Pearson, the
    ``alpha/2`` quantile of ``Beta(x, n - x + 1)`` and the ``1 - alpha/2`` one of
    ``Beta(x + 1, n - x)``, or Jeffreys where ``jeffreys`` is true, both quantiles of
    ``Beta(x + 1/2, n - x + 1/2)``; either way 0 when ``x = 0`` and 1 when ``x = n``. Every
    quantile in one solve: its steps are element-wise, so the same values as a solve per
    bound, with a fraction of the numpy calls (on a few slices, those calls are the time)."""
    alpha = 1 - confidence
    ps, shapes_a, shapes_b, places = [], [], [], []
    for x, n, jeffreys, _ in rates:
        known = (x.is_not_null() & n.is_not_null()).to_numpy()
        xs = x.fill_null(0.0).to_numpy()[known]
        ns = n.fill_null(1.0).to_numpy()[known]
        half = np.where(jeffreys.fill_null(False).to_numpy()[known], 0.5, 0.0)
        # Rounding: x = m * n can land a hair above n when m = 1.
        xs = np.minimum(xs, ns)
        some, all_ = xs > 0, xs < ns
        ps += [np.full(some.sum(), alpha / 2), np.full(all_.sum(), 1 - alpha / 2)]
        shapes_a += [(xs + half)[some], (xs + 1 - half)[all_]]
        shapes_b += [(ns - xs + 1 - half)[some], (ns - xs + half)[all_]]
        places.append((known, some, all_))
    quantiles = iter(
        np.split(
            beta_quantile(*(np.concatenate(v) for v in (ps, shapes_a, shapes_b))),
            np.cumsum([p.size for p in ps])[:-1],
        )
    )
    out = []
    for (x, _, _, name), (known, some, all_) in zip(rates, places, strict=True):
        lows, highs = np.zeros(some.size), np.ones(some.size)
        lows[some], highs[all_] = next(quantiles), next(quantiles)
        low, high = np.full(len(x), np.nan), np.full(len(x), np.nan)
        low[known], high[known] = lows, highs
        out.append(
            (
                pl.Series(f"{name}_low", low).fill_nan(None),
                pl.Series(f"{name}_high", high).fill_nan(None),
            )
        )
    return out


def name_total(name: str) -> str:
    return RATES.get(name, "score_sum")


def _carriers(m: pl.Expr, total: pl.Expr, n: pl.Expr, name: str) -> pl.Expr:
    """The effective number of groups carrying the rarer side of ``m`` (the hits, or the
    misses when ``m > 1/2``): ``(sum_g y_g)^2 / sum_g y_g^2`` with ``y_g = x_g`` or
    ``n_g - x_g``, ``x_g`` the group's total."""
    x2, nx = pl.col(f"{name}_x2"), pl.col(f"{name}_nx")
    rest = n - total
    rest2 = pl.col(SIZE_SQ) - 2 * nx + x2
    return pl.when(m <= 0.5).then(total * total / x2).otherwise(rest * rest / rest2)


def _effective_n(name: str, m: pl.Expr, binomial: pl.Expr) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """What the effective sample size of ``m`` is chosen from: the worst case ``N^2 / sum
    n_g^2``, the observed ``m(1-m) / max(V, s^2 / N)``, and whether the worst case is what it
    is (without spread, or when few groups carry the rarer side and it is at most the
    observed one)."""
    n = pl.col("n_scored").cast(pl.Float64)
    groups = pl.col("n_groups")
    pair_variance = binomial
    if name == MEAN:
        # Scores between 0 and 1 may have less spread than 0/1 outcomes of the same mean;
        # trusted only with mass away from the nearer bound in enough groups: near it,
        # rare large scores carry the mean and the observed spread understates theirs.
        away = groups.cast(pl.Float64) * pl.min_horizontal(m, 1 - m)
        observed_sq = (pl.col("score_sq_sum") / n - m * m).clip(lower_bound=0.0)
        pair_variance = pl.when(away >= MASS_AWAY).then(observed_sq).otherwise(binomial)
    variance = pl.col(f"{name}_u2") / (n * n)
    spread = variance > NO_SPREAD * binomial / n
    worst = n * n / pl.col(SIZE_SQ)
    observed = binomial / pl.max_horizontal(variance, pair_variance / n)
    # Few groups carry the rarer side: where it lands (a group of 1 pair or of 20) decides
    # the observed variance, so it is not trusted beyond the worst case.
    carriers = _carriers(m, pl.col(name_total(name)), n, name)
    few = carriers.fill_nan(0.0).fill_null(0.0) < CARRIERS[name != MEAN]
    worst_case = ~spread | (few & (worst <= observed))
    return worst, observed, worst_case


def _wilson(m: pl.Expr, n_eff: pl.Expr, q: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    denominator = 1 + q * q / n_eff
    centre = (m + q * q / (2 * n_eff)) / denominator
    half = q * (m * (1 - m) / n_eff + q * q / (4 * n_eff * n_eff)).sqrt() / denominator
    return (centre - half).clip(0.0, 1.0), (centre + half).clip(0.0, 1.0)


def t_quantiles(frame: pl.DataFrame, column: str, p: float) -> pl.Expr:
    """The ``p`` quantile of Student's t on each row's fractional degrees of freedom in
    ``column`` (rounded down, to 1/100 below 30 and to a whole number above, so the quantile
    is never smaller than the exact one and an exact 5 computed as 4.9999999 stays 5; null
    where the degrees of freedom are null or below 1)."""
    key = _df_key(pl.col(column))
    keys = frame.select(key.alias("k")).get_column("k").drop_nulls().unique().to_list()
    quantiles = {k: t_quantile(p, k / _DF_GRID) for k in keys if k >= _DF_GRID}
    return key.replace_strict(quantiles, default=None, return_dtype=pl.Float64)


def _df_key(df: pl.Expr) -> pl.Expr:
    fine = (df * _DF_GRID + 1e-6).floor()
    coarse = (df.clip(upper_bound=1e7) + 1e-8).floor() * _DF_GRID
    return pl.when(df < 30).then(fine).otherwise(coarse).cast(pl.Int64)


def satterthwaite_df(a: pl.Expr, b: pl.Expr, groups: pl.Expr) -> pl.Expr:
    """Fractional degrees of freedom of a cluster-robust variance (``A = sum r^2``, ``B = sum
    r^4``): ``2 A^2 / (B - A^2 / G)`` in ``[1, G - 1]``; ``G - 1`` without spread."""
    g = groups.cast(pl.Float64)
    top = (g - 1).clip(lower_bound=1)
    excess = b - a * a / g
    df = 2 * a * a / excess
    usable = (a > 0) & (excess > 0) & df.is_finite()
    return pl.when(usable).then(df.clip(1, top)).otherwise(top)


def satterthwaite(a: pl.Expr, b: pl.Expr, groups: pl.Expr) -> pl.Expr:
    """:func:`satterthwaite_df` rounded down to a whole number, for callers whose quantiles
    are keyed by integers; an exact whole number computed a hair below stays whole."""
    return (satterthwaite_df(a, b, groups) + 1e-9).floor()
