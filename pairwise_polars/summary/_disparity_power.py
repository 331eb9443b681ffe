"""Power for disparities: the smallest disparity a planned run detects, from a pilot.

A disparity is a mean over groups of one figure per group (a within-group difference: see
:mod:`pairwise_polars.summary._disparity_sums`), so with ``G`` groups its variance is ``v / G``,
``v`` the variance of the groups' figures in the pilot (for differences of yes/no outcomes, with
the same floor as the interval's). The minimum detectable effect and the groups needed follow
:mod:`pairwise_polars.summary._power`. Only a pilot that carries each side's outcomes
(``decision_a`` / ``decision_b`` ...) or scored ``pairwise-favour`` gives these rows: a
disparity's spread has no default worth stating.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import polars as pl

from pairwise_polars.summary._disparity_ppi import P
from pairwise_polars.summary._disparity_sums import (
    BINARY,
    FIGURES,
    _floored_var,
    disparity_sums,
    group_means,
)
from pairwise_polars.summary._power import (
    DEFAULT_POWER,
    SlicePower,
    detection,
)
from pairwise_polars.summary._sums import PAIR_KIND

DISPARITIES = "disparities"
"""The ``metric`` of disparity rows (in a plan's power and in a comparison)."""
FAVOUR_METRIC = "pairwise-favour"
SIDED = [f"{c}_{s}" for c in ("decision", "amount", "amount_unit", "refused") for s in "ab"]
"""Each side's outcome columns a frame must carry for its disparities to be read."""


def has_favour(frame: pl.LazyFrame) -> bool:
    """Whether the scored frame has ``pairwise-favour`` rows."""
    if "metric" not in frame.collect_schema().names():
        return False
    found = frame.select("metric").filter(pl.col("metric") == FAVOUR_METRIC).head(1).collect()
    return not found.is_empty()


def sided_measures(frame: pl.LazyFrame, pair_key: list[str], outcomes: bool) -> pl.LazyFrame:
    """One row per counterfactual pair of a scored frame, with each measure as
    :func:`disparity_sums` reads it (from the sided outcome columns, and the sign of
    ``pairwise-favour`` where scored), ``attribute``, ``pair_kind`` and the reference."""
    names = frame.collect_schema().names()
    if PAIR_KIND in names:
        frame = frame.filter(pl.col(PAIR_KIND).cast(pl.String).ne_missing("control"))
    favour = (
        frame.filter(pl.col("metric") == FAVOUR_METRIC)
        .group_by(pair_key)
        .agg((-pl.col("score").cast(pl.Float64)).first().alias(P + "favour"))
    )
    pairs = frame.unique(pair_key, keep="first").join(
        favour, on=pair_key, how="left", nulls_equal=True
    )
    pairs = pairs.with_columns(
        pl.col("attribute_b").cast(pl.String).alias("attribute"),
        pl.lit("counterfactual").alias(PAIR_KIND),
        pl.col("attribute_a").cast(pl.String).alias(P + "reference"),
    )
    if not outcomes:
        empty = pl.lit(None, pl.Float64)
        return pairs.with_columns(
            *(empty.alias(P + c) for c in ("decision_a", "decision_b", "amount", "refusal"))
        )
    amount_a, amount_b = pl.col("amount_a").cast(pl.Float64), pl.col("amount_b").cast(pl.Float64)
    same_unit = pl.col("amount_unit_a").cast(pl.String).eq_missing(pl.col("amount_unit_b"))
    refused = [pl.col(f"refused_{s}").cast(pl.Float64) for s in "ab"]
    return pairs.with_columns(
        pl.col("decision_a").cast(pl.Float64).alias(P + "decision_a"),
        pl.col("decision_b").cast(pl.Float64).alias(P + "decision_b"),
        pl.when(same_unit & (amount_a != 0))
        .then((amount_b - amount_a) / amount_a.abs())
        .alias(P + "amount"),
        (refused[1] - refused[0]).alias(P + "refusal"),
    )


def group_figures(
    frame: pl.LazyFrame, keys: Sequence[str], pair_key: list[str], group_by: str, outcomes: bool
) -> pl.LazyFrame:
    """Per (``keys``, attribute, group): each measure's within-group mean (``__<measure>``)
    and the group's pairs (``n_pairs``)."""
    pairs = sided_measures(frame, pair_key, outcomes)
    means = group_means(disparity_sums(pairs, [*keys, "attribute"], group_by))
    return means.select(
        *keys, "attribute", group_by, "n_pairs", *(pl.col(f"__{m}") for m in FIGURES)
    )


def disparity_power(
    pairs: pl.DataFrame,
    slices: Sequence[str],
    group_by: str,
    pilot: pl.LazyFrame,
    *,
    detect: float | None = None,
    confidence: float = 0.95,
    power: float = DEFAULT_POWER,
) -> tuple[SlicePower, ...]:
    """One :class:`SlicePower` per slice, attribute and disparity of the planned ``pairs`` that
    the ``pilot`` measured (its spread for that slice and attribute, else over all of them)."""
    names = pilot.collect_schema().names()
    outcomes = all(c in names for c in SIDED)
    usable = {"pair_id", "attribute_a", "attribute_b", group_by, *slices} <= set(names)
    if not usable or not (outcomes or has_favour(pilot)):
        return ()
    spread = group_figures(pilot, slices, ["pair_id"], group_by, outcomes).collect()
    keys = [*slices, "attribute"]
    planned = pairs.lazy()
    if PAIR_KIND in pairs.columns:
        planned = planned.filter(pl.col(PAIR_KIND).cast(pl.String).ne_missing("control"))
    shape = (
        planned.with_columns(pl.col("attribute_b").cast(pl.String).alias("attribute"))
        .group_by(keys)
        .agg(groups=pl.col(group_by).n_unique(), n=pl.len())
        .sort(keys, nulls_last=True)
        .collect()
    )
    rows = []
    for measure, figure in FIGURES.items():
        value = pl.col(f"__{measure}")
        var = _floored_var(value) if measure in BINARY else value.var(ddof=1)
        found = spread.filter(value.is_not_null())
        pooled = found.select(var).item() if found.height > 1 else None
        each = found.group_by(keys).agg(var.alias("v"), pl.len().alias("g"))
        known = {tuple(r[:-2]): r[-2] for r in each.rows() if r[-1] > 1}
        for row in shape.iter_rows(named=True):
            variance = known.get(tuple(row[k] for k in keys), pooled)
            if variance is not None:
                rows.append(_row(figure, keys, row, variance, detect, confidence, power))
    return tuple(rows)


def _row(
    figure: str,
    keys: Sequence[str],
    shape: dict[str, Any],
    variance: float,
    detect: float | None,
    confidence: float,
    power: float,
) -> SlicePower:
    groups = int(shape["groups"])
    return SlicePower(
        metric=DISPARITIES,
        slice=", ".join(f"{k}={shape[k]}" for k in keys),
        figure=figure,
        n_groups=groups,
        pairs_per_group=round(int(shape["n"]) / groups, 3),
        controls_per_group=0.0,
        icc=0.0,  # a disparity's spread is its groups' own: no correlation to state
        sd=round(math.sqrt(variance), 4),
        source="pilot",
        **detection(variance, groups, detect, confidence=confidence, power=power),
    )
