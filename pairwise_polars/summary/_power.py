"""Power: the smallest effect a run can detect, and the groups a run needs to detect one.

A slice's figure is estimated from ``G`` groups, so its variance is ``V(G) = v / G`` with ``v``
the variance of one group's own figure (its excess divergence, or without controls its mean
divergence: see :mod:`pairwise_polars.summary._pilot`, from a pilot or assumed). The effect
detected with probability ``power`` by a two-sided test at ``confidence`` is
``(t_{(1+c)/2} + t_{power}) * sqrt(V)`` on ``G - 1`` degrees of freedom: the minimum
detectable effect. The groups needed to detect ``detect`` are the fewest ``G`` whose minimum
detectable effect is at most ``detect``. A summary's own ``min_detectable_effect`` uses the
same formula on its measured cluster-robust variance.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

import polars as pl

from pairwise_polars.summary._pilot import Variability, pilot_variability
from pairwise_polars.summary._student_t import t_cdf, t_quantile
from pairwise_polars.summary._sums import PAIR_KIND

DEFAULT_POWER = 0.8
MAX_GROUPS = 10_000_000


def detectable(
    se: float, df: float, *, confidence: float = 0.95, power: float = DEFAULT_POWER
) -> float:
    """The minimum detectable effect of an estimate with standard error ``se``.

    >>> round(detectable(0.01, 1000), 4)
    0.028
    """
    return (t_quantile(0.5 + confidence / 2, df) + t_quantile(power, df)) * se


def power_at(effect: float, se: float, df: float, *, confidence: float = 0.95) -> float:
    """The chance that a true ``effect`` is detected (the interval excludes zero on its side)."""
    if se <= 0:
        return 1.0 if effect > 0 else 0.0
    return t_cdf(effect / se - t_quantile(0.5 + confidence / 2, df), df)


def groups_needed(
    effect: float, group_variance: float, *, confidence: float = 0.95, power: float = DEFAULT_POWER
) -> int | None:
    """The fewest groups (at least 2) whose minimum detectable effect is at most ``effect``;
    None beyond ten million."""
    if effect <= 0:
        return None

    def enough(g: int) -> bool:
        se = math.sqrt(group_variance / g)
        return detectable(se, g - 1, confidence=confidence, power=power) <= effect

    if not enough(MAX_GROUPS):
        return None
    low, high = 2, 2
    while not enough(high):
        low, high = high, high * 2
    while low < high:
        middle = (low + high) // 2
        if enough(middle):
            high = middle
        else:
            low = middle + 1
    return low


MIN_DETECTABLE = "min_detectable_effect"


def with_min_detectable_effect(summary: pl.DataFrame, confidence: float) -> pl.DataFrame:
    """Add ``min_detectable_effect`` to a frame of per-slice sums (before
    :func:`~pairwise_polars.summary._excess.with_excess` drops the excess's residual sums): the
    excess divergence the slice detects with 80% power where it has scored control pairs, else
    the distance from a threshold its mean divergence detects; null with one group."""
    controls = pl.col("n_control_scored") > 0
    groups = pl.when(controls).then(pl.col("__excess_groups")).otherwise(pl.col("n_groups"))
    g = groups.cast(pl.Float64)
    n = pl.col("n_scored").cast(pl.Float64)
    r2 = (
        pl.when(controls)
        .then(pl.col("__excess_r2"))
        .otherwise(pl.col("mean_divergence_r2") / (n * n))
    )
    frame = summary.with_columns(
        (g / (g - 1) * r2).sqrt().alias("__mde_se"), (groups - 1).alias("__mde_df")
    )
    degrees = [int(d) for d in frame["__mde_df"].drop_nulls().unique().to_list() if d >= 1]
    factor = {d: detectable(1.0, d, confidence=confidence) for d in degrees}
    scale = pl.col("__mde_df").replace_strict(factor, default=None, return_dtype=pl.Float64)
    usable = (pl.col("__mde_df") >= 1) & (pl.col("n_scored") > 0)
    return frame.with_columns(
        pl.when(usable).then(scale * pl.col("__mde_se")).alias(MIN_DETECTABLE)
    ).drop("__mde_se", "__mde_df")


@dataclass(frozen=True, kw_only=True)
class SlicePower:
    """What one metric and slice of a planned run can detect (a row of :attr:`Plan.power`)."""

    metric: str
    slice: str
    figure: str
    """``excess_divergence`` (the slice has control pairs) or ``mean_divergence`` (against a
    threshold)."""
    n_groups: int
    pairs_per_group: float
    controls_per_group: float
    icc: float
    sd: float
    source: str
    """Where ``icc`` and ``sd`` came from: ``"pilot"`` or ``"default"``."""
    min_detectable_effect: float | None
    detect: float | None
    power: float | None
    """The chance of detecting ``detect`` with ``n_groups`` groups."""
    groups_needed: int | None
    """The fewest groups that detect ``detect`` with the planned power."""


def slice_power(
    pairs: pl.DataFrame,
    metrics: Sequence[str],
    slices: Sequence[str],
    group_by: str,
    *,
    detect: float | None = None,
    pilot: pl.LazyFrame | None = None,
    confidence: float = 0.95,
    power: float = DEFAULT_POWER,
) -> tuple[SlicePower, ...]:
    """One :class:`SlicePower` per metric and slice of a planned pair frame, from the pilot's
    variability for that metric and slice (or the whole pilot's for a slice it lacks, or the
    defaults)."""
    is_control = pl.col(PAIR_KIND) == "control" if PAIR_KIND in pairs.columns else pl.lit(False)
    shape = (
        pairs.group_by([*slices, group_by])
        .agg(n=(~is_control).sum(), q=is_control.sum())
        .group_by(slices if slices else pl.lit(0))
        .agg(groups=pl.len(), n=pl.col("n").mean(), q=pl.col("q").mean())
        .sort(slices or "groups", nulls_last=True)
    )
    found = pilot_variability(pilot, slices, group_by) if pilot is not None else {}
    rows = []
    for metric in metrics:
        for row in shape.iter_rows(named=True):
            values = tuple(row[s] for s in slices)
            spread = found.get((metric, values)) or found.get((metric, None)) or Variability()
            rows.append(_row(metric, slices, values, row, spread, detect, confidence, power))
    return tuple(rows)


def _row(
    metric: str,
    slices: Sequence[str],
    values: tuple[object, ...],
    shape: dict[str, float],
    spread: Variability,
    detect: float | None,
    confidence: float,
    power: float,
) -> SlicePower:
    groups, n, q = int(shape["groups"]), float(shape["n"]), float(shape["q"])
    variance = spread.group_variance(n, q)
    label = ", ".join(f"{s}={v}" for s, v in zip(slices, values, strict=True)) or "overall"
    return SlicePower(
        metric=metric,
        slice=label,
        figure="excess_divergence" if q > 0 else "mean_divergence",
        n_groups=groups,
        pairs_per_group=round(n, 3),
        controls_per_group=round(q, 3),
        icc=round(spread.icc, 4),
        sd=round(spread.sd, 4),
        source=spread.source,
        **detection(variance, groups, detect, confidence=confidence, power=power),
    )


class Detection(TypedDict):
    """The detection figures of a :class:`SlicePower`."""

    min_detectable_effect: float | None
    detect: float | None
    power: float | None
    groups_needed: int | None


def detection(
    variance: float, groups: int, detect: float | None, *, confidence: float, power: float
) -> Detection:
    """What ``groups`` groups whose own figure has ``variance`` detect: the minimum detectable
    effect (none from one group), and for ``detect`` the chance and the groups needed."""
    se = math.sqrt(variance / groups)
    usable = groups > 1
    return Detection(
        min_detectable_effect=(
            detectable(se, groups - 1, confidence=confidence, power=power) if usable else None
        ),
        detect=detect,
        power=(
            power_at(detect, se, groups - 1, confidence=confidence)
            if usable and detect is not None
            else None
        ),
        groups_needed=(
            groups_needed(detect, variance, confidence=confidence, power=power)
            if detect is not None
            else None
        ),
    )
