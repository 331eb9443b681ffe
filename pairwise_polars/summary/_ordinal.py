"""Krippendorff's alpha at the ordinal level, the level of a rubric (0 equivalent, 1 minor, ...,
4 severe: ordered, with no promise that the steps are equal), from per-group coincidence
matrices, so it merges across chunks and its interval resamples groups.

Within a unit of m pairable values, every ordered pair of values from two different judges
adds 1 / (m - 1) to the coincidence o[c, k] of its two values (Krippendorff 2011, "Computing
Krippendorff's alpha-reliability"). With n_c the marginals and n their total, the ordinal
distance of levels c and k is

    delta[c, k] = (sum_{g between c and k} n_g - (n_c + n_k) / 2) ** 2

and alpha = 1 - (n - 1) * sum o[c, k] delta[c, k] / sum n_c n_k delta[c, k]. The distance
depends on the marginals, so it is computed from the summed matrix (and again in every
bootstrap draw). For two levels it equals the nominal and the interval alpha.
"""

from __future__ import annotations

import numpy as np
import polars as pl

MAX_LEVELS = 100
"""More distinct values than this (a judge with continuous scores): read at the interval level."""
_DIGITS = 9  # a repeat's mean computed in another order must still be the same level
_BATCH = 100  # bootstrap draws per batch: keeps the (draws, levels, levels) arrays small


def coincidences(values: pl.DataFrame, unit: list[str], keep: list[str]) -> pl.DataFrame:
    """The coincidences of ``values`` (column ``value``, one per judge and unit) per ``keep``
    (a prefix of ``unit``, e.g. the slice and the group): columns ``keep``, ``c``, ``k``, ``o``."""
    counts = (
        values.with_columns(pl.col("value").round(_DIGITS))
        .group_by(*unit, "value")
        .agg(n=pl.len())
        .with_columns(m=pl.col("n").sum().over(unit))
        .filter(pl.col("m") >= 2)  # a unit with one value is not pairable
    )
    pairs = counts.join(counts.select(*unit, "value", "n"), on=unit, suffix="_k")
    same = (pl.col("value") == pl.col("value_k")).cast(pl.Float64)
    weight = pl.col("n") * (pl.col("n_k") - same) / (pl.col("m") - 1)
    return pairs.group_by(*keep, pl.col("value").alias("c"), pl.col("value_k").alias("k")).agg(
        o=weight.sum()
    )


def ordinal_alpha(o: np.ndarray) -> np.ndarray:
    """Alpha of coincidence matrices ``o`` (shape ``(..., V, V)``, levels in order); NaN where
    nothing is pairable or every value is the same."""
    marginals = o.sum(axis=-1)
    n = marginals.sum(axis=-1)
    levels = np.arange(o.shape[-1])
    high, low = np.maximum.outer(levels, levels), np.minimum.outer(levels, levels)
    cumulative = np.cumsum(marginals, axis=-1)
    between = cumulative[..., high] - cumulative[..., low] + marginals[..., low]
    pair = marginals[..., :, None] + marginals[..., None, :]
    delta = (between - pair / 2) ** 2
    observed = (o * delta).sum(axis=(-2, -1))
    expected = (marginals[..., :, None] * marginals[..., None, :] * delta).sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1 - (n - 1) * observed / expected
    return np.where((n >= 2) & (expected > 1e-12), alpha, np.nan)


def ordinal_figures(
    table: pl.DataFrame, group: str, confidence: float, *, draws: int = 1000, seed: int = 0
) -> tuple[float | None, float | None, float | None] | None:
    """Alpha of one slice's coincidences (``table``: ``group``, ``c``, ``k``, ``o``) and a
    percentile interval from resampling its groups; None with more than :data:`MAX_LEVELS`
    levels (the caller reads those at the interval level)."""
    levels = np.unique(np.concatenate([table["c"].to_numpy(), table["k"].to_numpy()]))
    if levels.size > MAX_LEVELS:
        return None
    groups, at = np.unique(table[group].to_numpy(), return_inverse=True)
    size = levels.size
    per_group = np.zeros((groups.size, size, size))
    c = np.searchsorted(levels, table["c"].to_numpy())
    k = np.searchsorted(levels, table["k"].to_numpy())
    np.add.at(per_group, (at, c, k), table["o"].to_numpy())
    point = ordinal_alpha(per_group.sum(axis=0))
    alpha = None if np.isnan(point) else float(point)
    g = groups.size
    if g < 2 or alpha is None:
        return alpha, None, None
    rng = np.random.default_rng(seed)
    flat = per_group.reshape(g, size * size)
    found = []
    for start in range(0, draws, _BATCH):
        counts = rng.multinomial(g, np.full(g, 1.0 / g), size=min(_BATCH, draws - start))
        found.append(ordinal_alpha((counts @ flat).reshape(-1, size, size)))
    alphas = np.concatenate(found)
    alphas = alphas[~np.isnan(alphas)]
    if alphas.size < draws / 2:  # most resamples had nothing to agree on: no interval
        return alpha, None, None
    tail = (1 - confidence) / 2
    low, high = np.quantile(alphas, [tail, 1 - tail])
    return alpha, float(low), float(high)
