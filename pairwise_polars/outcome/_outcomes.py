"""``outcomes``: one row per response with typed, signed outcomes beside the row's columns."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from pairwise_polars._errors import ColumnError
from pairwise_polars.io import DataLike
from pairwise_polars.io._frames import finish, to_lazy
from pairwise_polars.judges import HeuristicJudge, Judge
from pairwise_polars.metrics import Metric
from pairwise_polars.outcome._heuristic import OUTCOME_COLUMNS, heuristic_outcomes
from pairwise_polars.pairing import Columns
from pairwise_polars.scoring._spec import as_judge

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from pairwise_polars.pairing._columns import ColumnNames


def outcomes(
    rows: DataLike,
    judge: Judge | str | None = None,
    outcomes: str | Path | Metric = "outcome",
    *,
    columns: Columns | None = None,
    cache: Any = True,
    progress: bool = False,
    **names: Unpack[ColumnNames],
) -> pl.DataFrame | pl.LazyFrame:
    """Read each response's outcome: one row per response, the row's columns then
    ``decision`` (Float64: 1.0 a yes / approve / hire / grant, 0.0 a no, null when the response
    makes no decision), ``amount`` (Float64: the offered number, e.g. a salary, a sentence
    length, a rating), ``amount_unit`` (String, when one is written), ``refused`` (Boolean) and
    ``favourability`` (Float64, 0-1: how well the response treats the person it concerns).

    With the heuristic judge (the default) the outcomes are read key-free from its treatment
    profile (see :mod:`pairwise_polars.outcome._heuristic`); numbers the prompt itself states
    are skipped. With an LLM judge each response is judged on the pointwise metric ``outcomes``
    (the shipped ``outcome``, or a user metric file of ``kind: outcome``) through the same
    cached async map as every judgement: a failed judgement gives null outcomes and a
    ``outcome_error``, never a guess. Eager in, eager out; lazy in, lazy out (heuristic).

    >>> rows = pl.DataFrame({"input": "Offer Anna a salary.", "output": [
    ...     "A fair salary is $90,000.", "No, I would not hire her.", "I can't help with that."]})
    >>> outcomes(rows).select("decision", "amount", "amount_unit", "refused").rows()
    [(None, 90000.0, 'USD', False), (0.0, None, None, False), (None, None, None, True)]
    """
    cols = Columns.of(columns, names, caller="outcomes")
    judge = None if judge is None else as_judge(judge)
    frame, eager = to_lazy(rows)
    schema = frame.collect_schema()
    present = [c for c in OUTCOME_COLUMNS if c in schema]
    if present:
        raise ColumnError(
            f"The rows already have outcome columns {present}. Drop or rename them to read the "
            "outcomes again, or pass the rows straight to disparities(), which uses them."
        )
    if cols.output not in schema:
        raise ColumnError(
            f"outcomes needs the response column {cols.output!r}, which the rows lack. Columns "
            f"present: {schema.names()}. Pass output=<the response column>."
        )
    if schema[cols.output] not in (pl.String, pl.Null):  # categorical text is a string by now
        raise ColumnError(
            f"Column {cols.output!r} has type {schema[cols.output]}, expected a string column "
            "(the response whose outcomes are read). Cast it first, e.g. "
            f"rows.with_columns(pl.col({cols.output!r}).cast(pl.String))."
        )
    if judge is None or isinstance(judge, HeuristicJudge):
        given = cols.input if cols.input in schema else None
        return finish(heuristic_outcomes(frame, cols.output, given), eager)
    from pairwise_polars.outcome._judged import judged_outcomes

    judged = judged_outcomes(frame.collect(), judge, outcomes, cols, cache=cache, progress=progress)
    return judged if eager else judged.lazy()
