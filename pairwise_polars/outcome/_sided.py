"""Outcomes of both sides of scored pairs, read from the pairs' texts by the heuristic or by an
LLM judge on an outcome metric: the columns a chunk of a parquet run keeps beside its scores, so
its disparities need no text."""

from __future__ import annotations

from typing import Any

import polars as pl

from pairwise_polars.judges import Judge
from pairwise_polars.metrics import Metric
from pairwise_polars.outcome._heuristic import OUTCOME_COLUMNS, heuristic_outcomes
from pairwise_polars.outcome._judged import OUTCOME_ERROR, aread_outcomes
from pairwise_polars.pairing import Columns
from pairwise_polars.scoring._pointwise import SIDE_ID, pair_sides

SIDED = tuple(f"{c}_{s}" for c in OUTCOME_COLUMNS for s in "ab")
"""The per-side outcome columns: ``decision_a``, ``decision_b``, ``amount_a`` ..."""


def with_sided_outcomes(scored: pl.DataFrame) -> pl.DataFrame:
    """``scored`` with :data:`SIDED`, read once per pair (not per metric) from ``output_a`` /
    ``output_b`` (numbers stated in ``input_a`` / ``input_b`` skipped). Unchanged when it has
    them already or lacks the texts."""
    if any(c in scored.columns for c in SIDED) or not {"pair_id", "output_a", "output_b"} <= set(
        scored.columns
    ):
        return scored
    texts = [c for c in ("input_a", "input_b", "output_a", "output_b") if c in scored.columns]
    pairs = scored.select("pair_id", *texts).unique("pair_id", keep="first")
    given = "input" if {"input_a", "input_b"} & set(texts) else None
    # Both sides read in one pass (the profile's fixed cost is paid once a chunk, not twice):
    # the a sides stacked over the b sides, then set side by side again.
    stacked = pl.concat(
        [
            pairs.select(
                pl.col(f"output_{side}").cast(pl.String).alias("output"),
                *([_text(texts, f"input_{side}").alias("input")] if given else []),
            )
            for side in "ab"
        ]
    )
    read = heuristic_outcomes(stacked.lazy(), "output", given).collect()
    sides = [
        read.slice(i * pairs.height, pairs.height)
        .select(OUTCOME_COLUMNS)
        .rename({c: f"{c}_{side}" for c in OUTCOME_COLUMNS})
        for i, side in enumerate("ab")
    ]
    read = pl.concat([pairs.select("pair_id"), *sides], how="horizontal").select("pair_id", *SIDED)
    return scored.join(read, on="pair_id", how="left", maintain_order="left")


def _text(columns: list[str], name: str) -> pl.Expr:
    """The text column ``name``, or null text where the frame has none (a side without its
    prompt: no number is skipped)."""
    return pl.col(name).cast(pl.String) if name in columns else pl.lit(None, pl.String)


SIDED_ERRORS = ("outcome_error_a", "outcome_error_b")
"""Why a side has no outcome, when an LLM judge read them (null where it has one)."""


async def awith_judged_sided_outcomes(
    scored: pl.DataFrame, judge: Judge, metric: Metric, store: Any
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(scored with SIDED and SIDED_ERRORS, the judge's results)``: each response of the
    pairs judged once on the outcome ``metric`` through the cached map (``store``: the run's
    open cache), its outcome set on every pair side it is. A failed judgement is an error on
    the side, never a guessed outcome."""
    if any(c in scored.columns for c in SIDED):
        return scored, pl.DataFrame()
    sides = pair_sides(scored)
    # pair_sides names its columns the default way: only the id is its own
    read, results = await aread_outcomes(
        sides, judge, metric, Columns(id=SIDE_ID), store, progress=False
    )
    read = read.select(SIDE_ID, *OUTCOME_COLUMNS, OUTCOME_ERROR)
    out = scored
    for side in "ab":
        renamed = read.rename(
            {SIDE_ID: "__pp_side", **{c: f"{c}_{side}" for c in (*OUTCOME_COLUMNS, OUTCOME_ERROR)}}
        )
        out = out.with_columns(pl.col(f"id_{side}").cast(pl.String).alias("__pp_side")).join(
            renamed, on="__pp_side", how="left", maintain_order="left"
        )
        out = out.drop("__pp_side")
    return out, results
