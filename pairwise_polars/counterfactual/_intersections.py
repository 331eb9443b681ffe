"""Intersections: two dimensions crossed into one, ``gender×race`` with attributes such as
``female|Black``, so disparities can report each cell and the interaction of the two.

A prompt is moved along the first dimension (its reference and every variant), then each of
those texts along the second; the cell of both references is the group's reference, every other
cell a variant, all in one group. The substitutions of the second dimension are offsets into the
text the first one made.
"""

from __future__ import annotations

from dataclasses import replace

import polars as pl

from pairwise_polars.counterfactual._matches import ROW, TEXT
from pairwise_polars.counterfactual._variant_plan import (
    CONTROL,
    NO_VARIANT,
    Options,
    dimension_rows,
)

CROSS = "×"
"""Joins the names of crossed dimensions: ``gender×race``."""
SEPARATOR = "|"
"""Joins a cell's attributes: ``female|Black``."""
_FIRST = "__cf_first"


def crossed_name(dims: tuple[str, ...]) -> str:
    """The dimension name of an intersection: ``gender×race``."""
    return CROSS.join(dims)


def intersection_rows(
    texts: pl.DataFrame, dims: tuple[str, str], opts: Options
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(rows, skipped)`` like :func:`dimension_rows`, for the cross of two dimensions."""
    if opts.strategy != "group":
        raise ValueError(
            f"Intersections {crossed_name(dims)!r} need strategy='group' (a reference cell and "
            "every other cell); contrastive poles have no cells between them."
        )
    plain = replace(opts, control=False)
    first, skipped_first = dimension_rows(texts, dims[0], plain)
    first = first.with_row_index(_FIRST)
    moved = first.select(pl.col(_FIRST).alias(ROW), pl.col("input").alias(TEXT))
    # A first-pass text whose second-pass variants all fail still holds its own cell
    # (male|White when no male|Black can be made); a prompt left with one cell is dropped below.
    second, skipped_second = dimension_rows(moved, dims[1], replace(plain, keep_alone=True))
    joined = second.join(
        first.select(
            _FIRST,
            pl.col(ROW).alias("__row"),
            pl.col("role").alias("__role"),
            pl.col("attribute").alias("__attribute"),
            pl.col("substitutions").alias("__subs"),
            pl.col("_order").alias("__order"),
        ),
        left_on=ROW,
        right_on=_FIRST,
    )
    both_reference = (pl.col("role") == "reference") & (pl.col("__role") == "reference")
    rows = joined.select(
        pl.col("__row").alias(ROW),
        pl.when(both_reference)
        .then(pl.lit("reference"))
        .otherwise(pl.lit("variant"))
        .alias("role"),
        pl.concat_str("__attribute", pl.lit(SEPARATOR), "attribute").alias("attribute"),
        "input",
        pl.concat_list("__subs", "substitutions").alias("substitutions"),
        (pl.col("__order").cast(pl.Int32) * 1000 + pl.col("_order").cast(pl.Int32)).alias("_order"),
    )
    alone = rows.group_by(ROW).len().filter(pl.col("len") < 2).select(ROW)
    rows = rows.join(alone, on=ROW, how="anti")
    if opts.control:
        control = rows.filter(pl.col("role") == "reference").with_columns(
            role=pl.lit(CONTROL), _order=pl.lit(1_000_000_000, pl.Int32)
        )
        rows = pl.concat([rows, control])
    # A failure in the second pass names the first pass's row and its own value: mapped back
    # to the prompt and to the cell (male|Black).
    back = first.select(pl.col(_FIRST).alias(ROW), pl.col(ROW).alias("__row"), "attribute")
    skipped_second = (
        skipped_second.join(back, on=ROW, how="inner", suffix="_first")
        .with_columns(
            pl.concat_str("attribute_first", pl.lit(SEPARATOR), "attribute").alias("attribute")
        )
        .drop(ROW)
        .rename({"__row": ROW})
    )
    out = alone.select(ROW, attribute=pl.lit(None, pl.String), reason=pl.lit(NO_VARIANT))
    later = [frame.select(skipped_first.columns) for frame in (skipped_second, out)]
    skipped = pl.concat([skipped_first, *later])
    return rows, skipped.unique(maintain_order=True)
