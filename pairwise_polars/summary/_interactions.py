"""The interaction of two crossed dimensions (``gender×race``): per cell ``x|y`` off both
references, the cell's effect minus the sum of its two main effects (``x|r2`` and ``r1|y``
against the reference cell ``r1|r2``), computed within each group and then over groups, with a
Student t interval like every disparity."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from pairwise_polars.pairing import PAIR_KIND
from pairwise_polars.summary._disparity_sums import FIGURES, P, group_means
from pairwise_polars.summary._student_t import t_quantile

SEPARATOR = "|"
INTERACTION_COLUMNS = tuple(
    f"{column}_interaction{end}" for column in FIGURES.values() for end in ("", "_low", "_high")
)
"""Columns of :func:`~pairwise_polars.disparities` for crossed dimensions (null elsewhere)."""


def with_interactions(
    figures: pl.DataFrame,
    sums: pl.LazyFrame | pl.DataFrame,
    keys: Sequence[str],
    group_by: str,
    confidence: float,
) -> pl.DataFrame:
    """``figures`` with the :data:`INTERACTION_COLUMNS` (null where there is no interaction)."""
    empty = [pl.lit(None, pl.Float64).alias(c) for c in INTERACTION_COLUMNS]
    if "attribute" not in keys:
        return figures.with_columns(empty)
    per_group = _per_group(sums, keys, group_by)
    if per_group.is_empty():
        return figures.with_columns(empty)
    slice_keys = [*keys, PAIR_KIND]
    stats = per_group.group_by(slice_keys).agg(
        aggs
        for name in FIGURES
        for aggs in (
            pl.col(f"__i_{name}").is_not_null().sum().alias(f"__n_{name}"),
            pl.col(f"__i_{name}").mean().alias(f"__m_{name}"),
            pl.col(f"__i_{name}").var(ddof=1).alias(f"__v_{name}"),
        )
    )
    p = 0.5 + confidence / 2
    columns: list[pl.Expr] = []
    for name, column in FIGURES.items():
        g = pl.col(f"__n_{name}")
        degrees = {int(v) for v in stats[f"__n_{name}"].to_list() if v is not None and v > 1}
        q = g.replace_strict({d: t_quantile(p, d - 1) for d in degrees}, default=None,
                             return_dtype=pl.Float64)  # fmt: skip
        half = q * (pl.col(f"__v_{name}") / g.cast(pl.Float64)).sqrt()
        mean = pl.col(f"__m_{name}")
        columns += [
            pl.when(g > 0).then(mean).alias(f"{column}_interaction"),
            pl.when(g > 1).then(mean - half).alias(f"{column}_interaction_low"),
            pl.when(g > 1).then(mean + half).alias(f"{column}_interaction_high"),
        ]
    stats = stats.select(*slice_keys, *columns)
    return figures.join(stats, on=slice_keys, how="left", nulls_equal=True)


def _per_group(
    sums: pl.LazyFrame | pl.DataFrame, keys: Sequence[str], group_by: str
) -> pl.DataFrame:
    """One row per (slice, group) of a cell off both references, with each measure's
    within-group interaction ``__i_<measure>``."""
    others = [k for k in keys if k != "attribute"]
    means = (
        group_means(sums.lazy())
        .filter(
            (pl.col(PAIR_KIND) == "counterfactual")
            & pl.col("attribute").str.contains(SEPARATOR, literal=True)
            & pl.col(P + "reference").str.contains(SEPARATOR, literal=True)
        )
        .collect()
    )
    if means.is_empty():
        return means
    cell = pl.col("attribute").str.split(SEPARATOR)
    ref = pl.col(P + "reference").str.split(SEPARATOR)
    means = means.with_columns(
        cell.list.get(0).alias("__a1"), cell.list.get(1).alias("__a2"),
        ref.list.get(0).alias("__r1"), ref.list.get(1).alias("__r2"),
    )  # fmt: skip
    values = [pl.col(f"__{name}").alias(f"__{name}") for name in FIGURES]
    lookup = means.select(*others, group_by, "attribute", *values)
    cells = means.filter((pl.col("__a1") != pl.col("__r1")) & (pl.col("__a2") != pl.col("__r2")))
    cells = cells.with_columns(
        pl.concat_str("__a1", pl.lit(SEPARATOR), "__r2").alias("__main1"),
        pl.concat_str("__r1", pl.lit(SEPARATOR), "__a2").alias("__main2"),
    )
    on = [*others, group_by]
    for main in ("__main1", "__main2"):
        renamed = lookup.rename({"attribute": main, **{f"__{n}": f"{main}_{n}" for n in FIGURES}})
        cells = cells.join(renamed, on=[*on, main], how="left", nulls_equal=True)
    return cells.select(
        *keys,
        PAIR_KIND,
        group_by,
        *(
            (pl.col(f"__{n}") - pl.col(f"__main1_{n}") - pl.col(f"__main2_{n}")).alias(f"__i_{n}")
            for n in FIGURES
        ),
    )
