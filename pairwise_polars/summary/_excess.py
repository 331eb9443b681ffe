"""The noise floor: counterfactual divergence beyond what re-asking the same question gives.

A control pair is two answers to the same input, so its mean score is the divergence sampling
alone produces. The excess divergence of a slice is ``m - k``: the mean counterfactual score
``m = S / N`` minus the mean control score ``k = C / Q`` (``S``, ``N``: the sum and count of
scored counterfactual pairs; ``C``, ``Q``: of scored control pairs).

Groups are the unit, as for every interval of the summary (a group's pairs share a reference,
and its control pairs share it too). The interval is the cluster-robust (linearised) variance
of that difference of two ratio means: each group ``g`` contributes

``r_g = (s_g - m n_g) / N - (c_g - k q_g) / Q``

and ``V = G/(G-1) * sum_g r_g^2`` over the ``G`` groups with a scored pair of either kind. The
bounds are ``m - k -/+ t * sqrt(V)`` with a Student t quantile on Satterthwaite's degrees of
freedom (``2 A^2 / (B - A^2 / G)``, ``A = sum r_g^2``, ``B = sum r_g^4``, kept in
``[1, G - 1]``, as for the mean), clipped to ``[-1, 1]``. Everything is a function of the
per-group sums, so a merged block of sums gives the same interval. With no scored control pair
(or no counterfactual one) the figures are null; with one group the bounds are null.
``benchmarks/bench_excess.py`` simulates its coverage with and without an effect.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from pairwise_polars.summary._intervals import satterthwaite
from pairwise_polars.summary._student_t import t_quantile

EXCESS = "excess_divergence"
CONTROL_MEAN = "control_mean_divergence"
CONTROL_SUMS = ("n_control", "n_control_scored", "n_control_errors", "control_score_sum")
"""The per-group sums of control pairs (see :func:`~pairwise_polars.summary._sums.group_sums`)."""


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
    joint = [k for k in keys if k == "metric"]
    if [k for k in keys if k not in joint] == []:
        return sums
    controls = sums.group_by([*joint, group_by]).agg(pl.col(CONTROL_SUMS).sum())
    return (
        sums.filter(pl.col("n_pairs") > 0)
        .drop(CONTROL_SUMS)
        .join(controls, on=[*joint, group_by], how="left", nulls_equal=True)
        .with_columns(pl.col(CONTROL_SUMS).fill_null(0))
    )


def excess_sums() -> list[pl.Expr]:
    """Aggregations over a slice's per-group sums (``score_sum``, ``n_scored``,
    ``control_score_sum``, ``n_control_scored``): the residual sums of the excess and the
    number of groups it rests on."""
    n, s = pl.col("n_scored"), pl.col("score_sum")
    q, c = pl.col("n_control_scored"), pl.col("control_score_sum")
    big_n, big_q = n.sum(), q.sum()
    m, k = s.sum() / big_n, c.sum() / big_q
    r = (s - m * n) / big_n - (c - k * q) / big_q
    both = (big_n > 0) & (big_q > 0)
    return [
        pl.when(both).then((r * r).sum()).alias("__excess_r2"),
        pl.when(both).then((r * r * r * r).sum()).alias("__excess_r4"),
        ((n > 0) | (q > 0)).sum().cast(pl.Int64).alias("__excess_groups"),
    ]


def with_excess(summary: pl.DataFrame, confidence: float) -> pl.DataFrame:
    """Add ``control_mean_divergence``, ``excess_divergence`` and its ``_low`` / ``_high``
    bounds to a frame with one row per slice holding the sums of :func:`excess_sums`."""
    groups = pl.col("__excess_groups")
    a, b = pl.col("__excess_r2"), pl.col("__excess_r4")
    frame = summary.with_columns(satterthwaite(a, b, groups).cast(pl.Int64).alias("__excess_df"))
    p = 0.5 + confidence / 2
    degrees = sorted({int(v) for v in frame["__excess_df"].drop_nulls().unique().to_list()})
    quantiles = {df: t_quantile(p, df) for df in degrees}
    q = pl.col("__excess_df").replace_strict(quantiles, default=None, return_dtype=pl.Float64)
    scored, controls = pl.col("n_scored"), pl.col("n_control_scored")
    control_mean = pl.when(controls > 0).then(pl.col("control_score_sum") / controls)
    excess = pl.when((scored > 0) & (controls > 0)).then(
        pl.col("score_sum") / scored - pl.col("control_score_sum") / controls
    )
    g = groups.cast(pl.Float64)
    half = q * (g / (g - 1) * a).sqrt()
    bounded = (scored > 0) & (controls > 0) & (groups > 1)
    return frame.with_columns(
        control_mean.alias(CONTROL_MEAN),
        excess.alias(EXCESS),
        pl.when(bounded).then((excess - half).clip(-1.0, 1.0)).alias(f"{EXCESS}_low"),
        pl.when(bounded).then((excess + half).clip(-1.0, 1.0)).alias(f"{EXCESS}_high"),
    ).drop("__excess_r2", "__excess_r4", "__excess_groups", "__excess_df")
