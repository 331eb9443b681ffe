"""How a slice's scores vary, read from a pilot run (or assumed): what a planned run's power
rests on.

A group's excess divergence is a contrast inside the group (its counterfactual mean minus its
control mean), so what the pairs of a group share (the prompt's own level) cancels: its
variance is ``tau^2 + s_w^2 (1/n + 1/q)`` with ``s_w^2`` the variance of a pair's score around
its group's mean for its kind (counterfactual or control), ``n`` and ``q`` the pairs of each
kind per group, and ``tau^2`` how much the excess itself differs from group to group. Without
controls the figure is the mean divergence, whose group mean varies by ``s_b^2 + s_w^2 / n``
(``s_b^2``: the between-group variance; ``icc = s_b^2 / (s_b^2 + s_w^2)`` is the within-group
correlation). A pilot gives all three by analysis of variance; without one, a score sd of
0.25, an icc of 0.3 and no heterogeneity are assumed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from pairwise_polars.summary._sums import PAIR_KIND

DEFAULT_ICC = 0.3
"""The within-group correlation assumed without a pilot."""
DEFAULT_SD = 0.25
"""The standard deviation of a pair's score assumed without a pilot (scores lie in [0, 1])."""
_KIND = "__pairwise_control"


@dataclass(frozen=True, kw_only=True)
class Variability:
    """Variance components of a slice's scores: ``within`` (a pair around its group and kind),
    ``between`` (groups' counterfactual means), ``effect`` (groups' excess), and their
    source."""

    within: float = DEFAULT_SD**2 * (1 - DEFAULT_ICC)
    between: float = DEFAULT_SD**2 * DEFAULT_ICC
    effect: float = 0.0
    source: str = "default"

    @property
    def sd(self) -> float:
        return (self.within + self.between) ** 0.5

    @property
    def icc(self) -> float:
        total = self.within + self.between
        return self.between / total if total > 0 else 0.0

    def group_variance(self, pairs: float, controls: float) -> float:
        """The variance of one group's figure with ``pairs`` counterfactual and ``controls``
        control pairs: its excess divergence, or without controls its mean divergence."""
        pairs = max(pairs, 1.0)
        if controls > 0:
            return self.effect + self.within * (1 / pairs + 1 / controls)
        return self.between + self.within / pairs


def variability(pilot: pl.LazyFrame, keys: Sequence[str], group_by: str) -> pl.DataFrame:
    """Per ``keys``: ``within``, ``between`` and ``effect`` variances from a scored pilot
    (null where the pilot cannot tell: one pair per group and kind, one group, no controls)."""
    schema = pilot.collect_schema()
    control = (
        pl.col(PAIR_KIND).cast(pl.String).eq_missing("control")
        if PAIR_KIND in schema
        else pl.lit(False)
    )
    score = pl.col("score").cast(pl.Float64)
    cells = (
        pilot.select(*keys, group_by, score.alias("score"), control.alias(_KIND))
        .filter(pl.col("score").is_not_null())
        .group_by([*keys, group_by, _KIND])
        .agg(n=pl.len().cast(pl.Float64), s=pl.col("score").sum(), ss=(pl.col("score") ** 2).sum())
        .with_columns(mean=pl.col("s") / pl.col("n"))
    )
    n, s, ss = pl.col("n"), pl.col("s"), pl.col("ss")
    within = cells.group_by(keys).agg(
        within=pl.when((n - 1).sum() > 0).then((ss - s * s / n).sum() / (n - 1).sum())
    )
    counterfactual = cells.filter(~pl.col(_KIND))
    k = pl.len().cast(pl.Float64)
    big_n = n.sum()
    grand = s.sum() / big_n
    msb = ((s * s / n).sum() - big_n * grand * grand) / (k - 1)
    n0 = (big_n - (n * n).sum() / big_n) / (k - 1)
    between = counterfactual.group_by(keys).agg(msb=pl.when(k > 1).then(msb), n0=n0)
    wide = counterfactual.join(
        cells.filter(pl.col(_KIND)).select(*keys, group_by, q="n", control_mean="mean"),
        on=[*keys, group_by],
        how="inner",
        nulls_equal=True,
    )
    d = pl.col("mean") - pl.col("control_mean")
    effect = wide.group_by(keys).agg(
        d_var=pl.when(pl.len() > 1).then(d.var()),
        inverse=(1 / pl.col("n") + 1 / pl.col("q")).mean(),
    )
    found = (
        within.join(between, on=list(keys), how="left", nulls_equal=True)
        .join(effect, on=list(keys), how="left", nulls_equal=True)
        .collect()
    )
    w = pl.col("within").fill_null(0.0)
    return found.select(
        *keys,
        "within",
        between=pl.when(pl.col("msb").is_not_null()).then(
            pl.max_horizontal((pl.col("msb") - w) / pl.col("n0"), pl.lit(0.0))
        ),
        effect=pl.when(pl.col("d_var").is_not_null()).then(
            pl.max_horizontal(pl.col("d_var") - w * pl.col("inverse"), pl.lit(0.0))
        ),
    )


def pilot_variability(
    pilot: pl.LazyFrame, slices: Sequence[str], group_by: str
) -> dict[tuple[str, tuple[object, ...] | None], Variability]:
    """The pilot's variability by (metric, slice values), and by (metric, None) over the whole
    pilot (for slices the pilot lacks); a component it cannot tell is assumed."""
    found: dict[tuple[str, tuple[object, ...] | None], Variability] = {}
    present = all(s in pilot.collect_schema() for s in slices)
    levels = [["metric"]] + ([["metric", *slices]] if slices and present else [])
    default = Variability()
    for keys in levels:
        for row in variability(pilot, keys, group_by).iter_rows(named=True):
            values = None if len(keys) == 1 else tuple(row[s] for s in slices)
            found[(row["metric"], values)] = Variability(
                within=default.within if row["within"] is None else row["within"],
                between=default.between if row["between"] is None else row["between"],
                effect=default.effect if row["effect"] is None else row["effect"],
                source="pilot",
            )
    return found
