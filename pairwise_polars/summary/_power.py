"""Power: the smallest effect a run can detect, and the groups a run needs to detect one.

A slice's excess divergence is estimated from ``G`` groups; its variance is the variance of a
group's own figure over ``G``. With ``n`` counterfactual and ``q`` control pairs per group,
scores of standard deviation ``s`` (counterfactual) and ``s_c`` (control) and within-group
correlation ``rho`` (pairs of one group share a reference, so they move together),

``V(G) = (s^2 (rho + (1 - rho) / n) + s_c^2 / q) / G``

(without control pairs the last term is dropped and the figure is the mean divergence, judged
against a threshold). The effect detected with probability ``power`` by a two-sided test at
``confidence`` is ``(t_{(1+c)/2} + t_{power}) * sqrt(V)`` on ``G - 1`` degrees of freedom: the
minimum detectable effect. The groups needed to detect ``detect`` are the fewest ``G`` whose
minimum detectable effect is at most ``detect``. ``s``, ``s_c`` and ``rho`` come from a pilot
(one-way analysis of variance over its groups) or the stated defaults below.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from pairwise_polars.summary._student_t import t_cdf, t_quantile
from pairwise_polars.summary._sums import PAIR_KIND

DEFAULT_POWER = 0.8
DEFAULT_ICC = 0.3
"""The within-group correlation assumed without a pilot."""
DEFAULT_SD = 0.25
"""The standard deviation of a pair's score assumed without a pilot (scores lie in [0, 1])."""
MAX_GROUPS = 10_000_000


@dataclass(frozen=True, kw_only=True)
class Variability:
    """How a slice's scores vary: ``sd`` of a counterfactual pair's score, ``control_sd`` of a
    control pair's, ``icc`` the within-group correlation, and where they came from."""

    sd: float = DEFAULT_SD
    control_sd: float = DEFAULT_SD
    icc: float = DEFAULT_ICC
    source: str = "default"

    def group_variance(self, pairs: float, controls: float) -> float:
        """The variance of one group's figure with ``pairs`` counterfactual and ``controls``
        control pairs (no control term without controls)."""
        own = self.sd**2 * (self.icc + (1 - self.icc) / max(pairs, 1.0))
        return own + (self.control_sd**2 / controls if controls > 0 else 0.0)


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


def variability(pilot: pl.LazyFrame, keys: Sequence[str], group_by: str) -> pl.DataFrame:
    """Per ``keys``: the scores' ``sd``, ``control_sd`` and within-group correlation ``icc``
    from a scored pilot (one-way analysis of variance over groups; an icc that cannot be
    estimated, with one pair per group or one group, is null)."""
    schema = pilot.collect_schema()
    is_control = (
        pl.col(PAIR_KIND).cast(pl.String).eq_missing("control")
        if PAIR_KIND in schema
        else pl.lit(False)
    )
    score = pl.col("score").cast(pl.Float64)
    frame = pilot.select(*keys, group_by, score.alias("score"), is_control.alias("__control"))
    controls = (
        frame.filter(pl.col("__control") & pl.col("score").is_not_null())
        .group_by(keys)
        .agg(control_sd=pl.col("score").std())
    )
    groups = (
        frame.filter(~pl.col("__control") & pl.col("score").is_not_null())
        .group_by([*keys, group_by])
        .agg(n=pl.len(), s=pl.col("score").sum(), ss=(pl.col("score") ** 2).sum())
    )
    n, s, ss = pl.col("n").cast(pl.Float64), pl.col("s"), pl.col("ss")
    big_n, k = n.sum(), pl.len().cast(pl.Float64)
    mean = s.sum() / big_n
    ssb = (s * s / n).sum() - big_n * mean * mean
    ssw = (ss - s * s / n).sum()
    msb = ssb / (k - 1)
    msw = ssw / (big_n - k)
    n0 = (big_n - (n * n).sum() / big_n) / (k - 1)
    between = pl.max_horizontal((msb - msw) / n0, pl.lit(0.0))
    usable = (k > 1) & (big_n > k)
    stats = groups.group_by(keys).agg(
        sd=((ss.sum() - big_n * mean * mean) / (big_n - 1)).clip(lower_bound=0.0).sqrt(),
        icc=pl.when(usable).then(
            pl.when(between + msw > 0).then(between / (between + msw)).otherwise(0.0)
        ),
    )
    return stats.join(controls, on=list(keys), how="full", coalesce=True, nulls_equal=True).collect()
