"""Pointwise requests: one judgement per response (the ``outcome`` metric), rendered and keyed
like every pairwise judgement, so a plan can count them and the cached map can send them.

Here rather than in ``outcome/`` because a plan (this room) counts them before anything is
spent, and the outcome room reads the replies.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import polars as pl

from pairwise_polars._errors import MetricError
from pairwise_polars._schemas import REQUEST_SCHEMA
from pairwise_polars.judges import Judge, traits_of
from pairwise_polars.metrics import Metric, get_metric
from pairwise_polars.pairing import Columns
from pairwise_polars.scoring._requests import _request_key

OUTCOME_VARIABLES = ("input", "output", "dimension", "attribute")
"""What an outcome metric's template may read of a response."""
OUTCOME_ROW = "__pp_outcome_row"
"""The row index column :func:`outcome_requests` keys by."""
SIDE_ID = "__pp_side_id"
"""The response id column of :func:`pair_sides`."""


def outcome_metric(outcomes: str | Path | Metric) -> Metric:
    """The outcome metric, checked: of ``kind: outcome`` and reading only known variables."""
    metric = get_metric(outcomes)
    if metric.kind != "outcome":
        raise MetricError(
            f"Metric {metric.name!r} is of kind {metric.kind!r}; outcomes are read with a "
            "pointwise metric of kind 'outcome' (the shipped 'outcome', or a file with "
            "kind: outcome)."
        )
    metric.check_variables(set(OUTCOME_VARIABLES))
    return metric


def outcome_judge(judge: Judge) -> Judge:
    """The judge as outcomes are asked of it: a structured-output schema carries a score only,
    so the outcome is asked as plain JSON (the same judge otherwise, and the same keys in a
    plan and in the run)."""
    if dataclasses.is_dataclass(judge) and getattr(judge, "structured_output", False):
        return dataclasses.replace(judge, structured_output=False)
    return judge


def outcome_requests(
    rows: pl.DataFrame, metric: Metric, judge: Judge, cols: Columns
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(keyed, requests)``: the request key of each judgeable row (by :data:`OUTCOME_ROW`,
    which ``rows`` must carry) and the unique requests (REQUEST_SCHEMA). A row without an
    output is not judged."""
    traits = traits_of(judge)
    identity = json.dumps(dict(traits.identity), sort_keys=True, default=str)

    def text(name: str) -> pl.Expr:
        column = getattr(cols, name)
        return pl.col(column).cast(pl.String) if column in rows.columns else pl.lit(None, pl.String)

    variables = rows.select(OUTCOME_ROW, *(text(n).alias(n) for n in OUTCOME_VARIABLES)).filter(
        pl.col("output").is_not_null()
    )
    keys, messages = [], []
    for row in variables.iter_rows(named=True):
        rendered = metric.render({n: row[n] for n in OUTCOME_VARIABLES})
        messages.append(rendered if traits.uses_messages else None)
        keys.append(_request_key(identity, metric, rendered))
    keyed = variables.with_columns(
        key=pl.Series(keys, dtype=pl.String), messages=pl.Series(messages, dtype=pl.String)
    )
    requests = keyed.unique("key", keep="first", maintain_order=True).select(
        pl.col("key"),
        pl.lit(metric.name).alias("metric"),
        pl.lit(metric.max_score, pl.Int64).alias("max_score"),
        pl.col("messages"),
        pl.col("input").alias("input_a"),
        pl.col("input").alias("input_b"),
        pl.col("output").alias("output_a"),
        pl.lit(None, pl.String).alias("output_b"),
        pl.col("attribute").alias("attribute_a"),
        pl.lit(None, pl.String).alias("attribute_b"),
        pl.col("dimension"),
    )
    return keyed.select(OUTCOME_ROW, "key"), requests.cast(REQUEST_SCHEMA)  # type: ignore[arg-type]


def pair_sides(pairs: pl.DataFrame) -> pl.DataFrame:
    """The responses of a pair frame, once each: :data:`SIDE_ID` (the side's row id) with
    ``input``, ``output``, ``dimension`` and ``attribute`` (null where the pairs lack them)."""

    def column(name: str, side: str) -> pl.Expr:
        for candidate in (f"{name}_{side}", name):
            if candidate in pairs.columns:
                return pl.col(candidate).cast(pl.String)
        return pl.lit(None, pl.String)

    sides = [
        pairs.select(
            pl.col(f"id_{side}").cast(pl.String).alias(SIDE_ID),
            *(column(n, side).alias(n) for n in OUTCOME_VARIABLES),
        )
        for side in "ab"
    ]
    return pl.concat(sides).unique(SIDE_ID, keep="first", maintain_order=True)
