"""The noise floor: counterfactual divergence beyond what re-asking the same question gives.

A control pair is two answers to the same input, so its mean score is the divergence sampling
alone produces. The excess divergence of a slice is ``m - k``: the mean counterfactual score
``m = S / N`` minus the mean control score ``k = C / Q`` (``S``, ``N``: the sum and count of
scored counterfactual pairs; ``C``, ``Q``: of scored control pairs).

Groups are the unit, as for every interval of the summary (a group's pairs share a reference,
and its control pairs share it too). The interval is the CR2 cluster-robust variance of that
difference of two ratio means (the regression of the scores on a counterfactual and a control
indicator, contrast ``(1, -1)``): each group ``g`` contributes

``u_g = (s_g - m n_g) / (N sqrt(1 - n_g/N)) - (c_g - k q_g) / (Q sqrt(1 - q_g/Q))``

and ``V = sum_g u_g^2``. The bounds are ``m - k -/+ t * sqrt(V)`` with a Student t quantile on
the smaller of Bell and McCaffrey's degrees of freedom for that contrast (from the group sizes
only: the eigenvalues of ``G'G`` are those of ``diag(d) - x x' - y y'``) and Satterthwaite's
from the data, clipped to ``[-1, 1]``. When either side shows no spread between groups (every
control scored 0, say) a linearised variance has nothing to estimate: the bounds are MOVER's
(Zou and Donner), combining one interval per side: a side with spread keeps its own CR2 t
interval (its mean's CR2 variance, the smaller of Bell-McCaffrey's and Satterthwaite's degrees
of freedom for that mean, clipped to ``[0, 1]``: what the side contributes to the interval
above), a side without spread gets the rates' worst-case bounds, Jeffreys' on ``N^2 / sum
n_g^2`` trials, or Clopper-Pearson's when every group has 1 pair (see
:mod:`pairwise_polars.summary._intervals`). Everything is a function of the
per-group sums, so a merged block of sums gives the same interval. With no scored control pair
(or no counterfactual one) the figures are null; with one group, or one group holding every
pair of a side, the bounds are null (inconclusive). ``benchmarks/bench_coverage.py`` simulates
its coverage with no effect, a uniform one and one in 20% of the groups.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from pairwise_polars.summary._intervals import (
    DESIGN_DF,
    MEAN,
    NO_SPREAD,
    SIZE_SQ,
    beta_bounds_of,
    satterthwaite_df,
    t_quantiles,
)
from pairwise_polars.summary._sums import CONTROL_SUMS, on_whole_groups

EXCESS = "excess_divergence"
CONTROL_MEAN = "control_mean_divergence"


def attach_controls(sums: pl.LazyFrame, keys: Sequence[str], group_by: str) -> pl.LazyFrame:
    """Per-group sums whose control columns are the control pairs of the whole group (and
    metric), on every slice row of the group's counterfactual pairs.

    A control pair measures the noise of its group, not of a slice: its own slice values (the
    reference's ``attribute`` as ``attribute_b``, a ``role_b`` of ``control``) say nothing about
    the variants. So every slice of counterfactual pairs draws its noise floor from the control
    pairs of the groups it contains, whatever the slicing columns, and control pairs never form
    slices of their own. Without slice columns (the overall row) the sums are left as they are,
    groups with control pairs only included. The sums may come merged from blocks in any
    split: the control columns are added up per group first."""
    return on_whole_groups(sums, keys, group_by, CONTROL_SUMS, kept=pl.col("n_pairs") > 0)


def with_excess(summary: pl.DataFrame, confidence: float) -> pl.DataFrame:
    """Add ``control_mean_divergence``, ``excess_divergence`` and its ``_low`` / ``_high``
    bounds to a frame with one row per slice holding the excess sums (``_slice_sums``) and the
    bounds of the mean divergence."""
    if not (summary["n_control_scored"] > 0).any():  # every figure is null without controls
        nulls = (CONTROL_MEAN, EXCESS, f"{EXCESS}_low", f"{EXCESS}_high")
        return _without_passes(summary).with_columns(
            pl.lit(None, pl.Float64).alias(c) for c in nulls
        )
    return _excess_columns(summary, confidence)


def _excess_columns(summary: pl.DataFrame, confidence: float) -> pl.DataFrame:
    """:func:`with_excess` of a frame where some slice has a scored control pair."""
    p = 0.5 + confidence / 2
    groups = pl.col("__excess_groups")
    frame = summary.with_columns(
        pl.min_horizontal(
            pl.col("__excess_bm"),
            satterthwaite_df(pl.col("__excess_u2"), pl.col("__excess_u4"), groups),
        ).alias("__excess_df"),
        pl.min_horizontal(
            pl.col("__control_bm"),
            satterthwaite_df(
                pl.col("__control_u2"), pl.col("__control_u4"), pl.col("__control_groups")
            ),
        ).alias("__control_df"),
    )
    q = t_quantiles(frame, "__excess_df", p)
    q_control = t_quantiles(frame, "__control_df", p)
    scored, controls = pl.col("n_scored"), pl.col("n_control_scored")
    big_q = controls.cast(pl.Float64)
    k = pl.col("control_score_sum") / big_q
    m = pl.col("score_sum") / scored
    control_mean = pl.when(controls > 0).then(k)
    excess = pl.when((scored > 0) & (controls > 0)).then(m - k)
    half = q * pl.col("__excess_u2").sqrt()
    # A side without spread between groups has no variance to linearise: MOVER (Zou and
    # Donner) combines that side's worst-case bounds with the other side's own CR2-t interval.
    control_variance = pl.col("__control_u2") / (big_q * big_q)
    control_spread = control_variance > NO_SPREAD * k * (1 - k) / big_q
    cf_spread = pl.col(f"{MEAN}_u2") > NO_SPREAD * (m * (1 - m)) * scored
    mover = ~(cf_spread & control_spread)
    frame = frame.with_columns(
        pl.min_horizontal(
            pl.col(DESIGN_DF),
            satterthwaite_df(pl.col(f"{MEAN}_u2"), pl.col(f"{MEAN}_u4"), pl.col("n_groups")),
        ).alias("__excess_mean_df"),
        *_worst_case_sums(m, scored.cast(pl.Float64), pl.col(SIZE_SQ), ~cf_spread, "__excess_m"),
        *_worst_case_sums(k, big_q, pl.col("__control_n_sq"), ~control_spread, "__excess_k"),
    )
    q_mean = t_quantiles(frame, "__excess_mean_df", p)
    (m_flat_low, m_flat_high), (k_flat_low, k_flat_high) = _worst_case_bounds(
        frame, ("__excess_m", "__excess_k"), confidence
    )
    m_half = q_mean * (pl.col(f"{MEAN}_u2").sqrt() / scored)
    k_half = q_control * control_variance.sqrt()
    m_low = pl.when(cf_spread).then((m - m_half).clip(0.0, 1.0)).otherwise(m_flat_low)
    m_high = pl.when(cf_spread).then((m + m_half).clip(0.0, 1.0)).otherwise(m_flat_high)
    k_low = pl.when(control_spread).then((k - k_half).clip(0.0, 1.0)).otherwise(k_flat_low)
    k_high = pl.when(control_spread).then((k + k_half).clip(0.0, 1.0)).otherwise(k_flat_high)
    mover_low = excess - ((m - m_low) ** 2 + (k_high - k) ** 2).sqrt()
    mover_high = excess + ((m_high - m) ** 2 + (k - k_low) ** 2).sqrt()
    low = pl.when(mover).then(mover_low).otherwise(excess - half)
    high = pl.when(mover).then(mover_high).otherwise(excess + half)
    # One group holding every pair of a side leaves that side's spread unknown: no interval.
    whole = pl.col("__excess_bm").is_null()
    bounded = (scored > 0) & (controls > 0) & (groups > 1) & ~whole
    return frame.with_columns(
        control_mean.alias(CONTROL_MEAN),
        excess.alias(EXCESS),
        pl.when(bounded).then(low.clip(-1.0, 1.0)).alias(f"{EXCESS}_low"),
        pl.when(bounded).then(high.clip(-1.0, 1.0)).alias(f"{EXCESS}_high"),
    ).pipe(_without_passes)


def _without_passes(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` without the excess sums and the passes over them."""
    return frame.drop(c for c in frame.columns if c.startswith(("__excess", "__control")))


def _worst_case_sums(
    mean: pl.Expr, count: pl.Expr, size_sq: pl.Expr, flat: pl.Expr, name: str
) -> list[pl.Expr]:
    """Where a side is ``flat`` (no spread between groups): its worst-case effective n
    ``N^2 / sum n_g^2`` (``{name}_n``), its events ``m n`` (``{name}_x``) and whether some
    group has more than 1 pair (``{name}_j``); null elsewhere."""
    worst = pl.when(flat & (count > 0)).then(count * count / size_sq)
    return [
        worst.alias(f"{name}_n"),
        (mean * worst).alias(f"{name}_x"),
        (size_sq > count).alias(f"{name}_j"),
    ]


def _worst_case_bounds(
    frame: pl.DataFrame, names: Sequence[str], confidence: float
) -> list[tuple[pl.Expr, pl.Expr]]:
    """Each side's rates' bounds on its worst case (see :func:`_worst_case_sums`): Jeffreys
    where some group has more than 1 pair, Clopper-Pearson with 1 pair per group; null where
    the side has no pair. Both sides' quantiles in one solve."""
    sides = []
    for name in names:
        usable = frame[f"{name}_n"].fill_nan(None)
        # A mean a hair above 0 (scores of 1e-300) is 0: the beta quantiles need x = 0 or x > 0.
        events = pl.col(f"{name}_x").fill_nan(None)
        x = frame.select(pl.when(events < 1e-9).then(0.0).otherwise(events)).to_series()
        sides.append((x, usable, frame[f"{name}_j"], name))
    return [(pl.lit(low), pl.lit(high)) for low, high in beta_bounds_of(sides, confidence)]
