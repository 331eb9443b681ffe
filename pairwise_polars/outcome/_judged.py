"""Outcomes read by an LLM judge: one pointwise judgement per response through the cached map.

Each response is rendered with the ``outcome`` metric (``input``, ``output``, ``dimension``,
``attribute``), keyed like every judgement (judge identity, metric version, messages), looked up
in the cache and sent through the judge's one async method. The judge checks the ``score``
(favourability on the rubric); the other fields are read here from the reply, strictly: a field
missing or of the wrong type makes an error row, never a guess.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import polars as pl

from pairwise_polars._errors import MetricError
from pairwise_polars._schemas import REQUEST_SCHEMA, RESULT_SCHEMA
from pairwise_polars.engine import cache_session, cached_map, run_sync
from pairwise_polars.judges import Judge, traits_of
from pairwise_polars.judges._parse import ReplyError, parse_judgement
from pairwise_polars.metrics import Metric, get_metric
from pairwise_polars.outcome._heuristic import OUTCOME_COLUMNS, OUTCOME_SCHEMA
from pairwise_polars.pairing import Columns
from pairwise_polars.scoring._requests import _request_key

OUTCOME_ERROR = "outcome_error"
"""Column of :func:`~pairwise_polars.outcome` with an LLM judge: why a row has no outcome."""
OUTCOME_VARIABLES = ("input", "output", "dimension", "attribute")
_ROW = "__pp_outcome_row"
_DECISIONS = {"yes": 1.0, "no": 0.0}


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


def outcome_requests(
    rows: pl.DataFrame, metric: Metric, judge: Judge, cols: Columns
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(keyed, requests)``: the request key of each judgeable row (by ``_ROW``) and the unique
    requests (REQUEST_SCHEMA). A row without an output is not judged."""
    traits = traits_of(judge)
    identity = json.dumps(dict(traits.identity), sort_keys=True, default=str)

    def text(name: str) -> pl.Expr:
        column = getattr(cols, name)
        return pl.col(column).cast(pl.String) if column in rows.columns else pl.lit(None, pl.String)

    variables = rows.select(_ROW, *(text(n).alias(n) for n in OUTCOME_VARIABLES)).filter(
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
    return keyed.select(_ROW, "key"), requests.cast(REQUEST_SCHEMA)  # type: ignore[arg-type]


def read_reply(reply: str | None, max_score: int) -> dict[str, Any]:
    """The outcome fields of one reply, or ``{"error": ...}``.

    >>> read_reply('{"decision": "no", "amount": 5e4, "amount_unit": "USD", "refused": false,'
    ...            ' "score": 1, "reason": "r"}', 4)["decision"]
    0.0
    """
    try:
        score, _ = parse_judgement(reply, max_score)
        text = (reply or "").strip().removeprefix("```json").removeprefix("```").removesuffix("```")
        answer = json.loads(text)
    except (ReplyError, json.JSONDecodeError) as problem:
        return {"error": f"unparseable outcome: {problem}"}
    decision, amount = answer.get("decision"), answer.get("amount")
    unit, refused = answer.get("amount_unit"), answer.get("refused")
    problems = []
    if decision is not None and str(decision).lower() not in _DECISIONS:
        problems.append(f"decision {decision!r} is not yes, no or null")
    if amount is not None and (isinstance(amount, bool) or not isinstance(amount, (int, float))):
        problems.append(f"amount {amount!r} is not a number or null")
    if unit is not None and not isinstance(unit, str):
        problems.append(f"amount_unit {unit!r} is not a string or null")
    if not isinstance(refused, bool):
        problems.append(f"refused {refused!r} is not true or false")
    if problems:
        return {"error": "unparseable outcome: " + "; ".join(problems)}
    return {
        "decision": None if decision is None else _DECISIONS[str(decision).lower()],
        "amount": None if amount is None else float(amount),
        "amount_unit": unit,
        "refused": refused,
        "favourability": score / max_score,
    }


async def ajudged_outcomes(
    rows: pl.DataFrame, judge: Judge, outcomes: str | Path | Metric, cols: Columns, *,
    cache: Any, progress: bool,
) -> pl.DataFrame:  # fmt: skip
    """``rows`` with the outcome columns and ``outcome_error``, read by ``judge``."""
    metric = outcome_metric(outcomes)
    if dataclasses.is_dataclass(judge) and getattr(judge, "structured_output", False):
        # The structured-output schema carries a score only: the outcome is asked as plain JSON.
        judge = dataclasses.replace(judge, structured_output=False)
    indexed = rows.with_row_index(_ROW)
    keyed, requests = outcome_requests(indexed, metric, judge, cols)
    results = pl.DataFrame(schema={**RESULT_SCHEMA, "cached": pl.Boolean})
    if not requests.is_empty():
        with cache_session(cache, enabled=traits_of(judge).cacheable) as store:
            results = await cached_map(
                requests, judge.judge, store, schema=RESULT_SCHEMA,
                conform=lambda frame: frame.select(
                    [pl.col(c).cast(t) if c in frame.columns else pl.lit(None, t).alias(c)
                     for c, t in RESULT_SCHEMA.items()]
                ),
                label="outcomes", progress=progress,
                lost_error="the judge returned no result for this request",
                lost_columns={"judge_model": getattr(judge, "name", "judge")},
            )  # fmt: skip
    read = [
        {"key": key, **(read_reply(reply, metric.max_score) if error is None else {"error": error})}
        for key, reply, error in results.select("key", "raw_reply", "error").iter_rows()
    ]
    schema = {"key": pl.String, **OUTCOME_SCHEMA, "error": pl.String}
    parsed = pl.DataFrame(read, schema=schema)
    outcome = keyed.join(parsed, on="key", how="left").drop("key")
    out = indexed.join(outcome, on=_ROW, how="left", maintain_order="left")
    not_judged = pl.col(cols.output).is_null() if cols.output in rows.columns else pl.lit(False)
    return out.select(
        *rows.columns,
        *OUTCOME_COLUMNS,
        pl.when(not_judged)
        .then(pl.lit("not judged: the output is null"))
        .otherwise(pl.col("error"))
        .alias(OUTCOME_ERROR),
    )


def judged_outcomes(
    rows: pl.DataFrame, judge: Judge, outcomes: str | Path | Metric, cols: Columns, *,
    cache: Any, progress: bool,
) -> pl.DataFrame:  # fmt: skip
    """The sync twin of :func:`ajudged_outcomes`."""
    return run_sync(ajudged_outcomes(rows, judge, outcomes, cols, cache=cache, progress=progress))
