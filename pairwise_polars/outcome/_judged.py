"""Outcomes read by an LLM judge: one pointwise judgement per response through the cached map.

Each response is rendered with the ``outcome`` metric (``input``, ``output``, ``dimension``,
``attribute``), keyed like every judgement (judge identity, metric version, messages), looked up
in the cache and sent through the judge's one async method. The judge checks the ``score``
(favourability on the rubric); the other fields are read here from the reply, strictly: a field
missing or of the wrong type makes an error row, never a guess.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from pairwise_polars._schemas import RESULT_SCHEMA
from pairwise_polars.engine import cache_session, cached_map, run_sync
from pairwise_polars.judges import Judge, traits_of
from pairwise_polars.judges._chat_judge import answers_of
from pairwise_polars.judges._parse import ReplyError, parse_judgement
from pairwise_polars.metrics import Metric
from pairwise_polars.outcome._heuristic import OUTCOME_COLUMNS, OUTCOME_SCHEMA
from pairwise_polars.pairing import Columns
from pairwise_polars.scoring._pointwise import OUTCOME_ROW as _ROW
from pairwise_polars.scoring._pointwise import outcome_judge, outcome_metric, outcome_requests

OUTCOME_ERROR = "outcome_error"
"""Column of :func:`~pairwise_polars.outcome` with an LLM judge: why a row has no outcome."""
_DECISIONS = {"yes": 1.0, "no": 0.0}


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
    with cache_session(cache, enabled=traits_of(judge).cacheable) as store:
        read, _ = await aread_outcomes(rows, judge, outcome_metric(outcomes), cols, store, progress)
    return read


async def aread_outcomes(
    rows: pl.DataFrame, judge: Judge, metric: Metric, cols: Columns, store: Any, progress: bool
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(rows with the outcome columns and outcome_error, the judge's results)``: the results
    (one per unique request, ``cached`` set on hits) say what the call spent. ``store`` is an
    open cache (or None)."""
    judge = outcome_judge(judge)
    indexed = rows.with_row_index(_ROW)
    keyed, requests = outcome_requests(indexed, metric, judge, cols)
    results = pl.DataFrame(schema={**RESULT_SCHEMA, "cached": pl.Boolean})
    if not requests.is_empty():
        results = await cached_map(
            requests, answers_of(judge), store, schema=RESULT_SCHEMA,
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
    frame = out.select(
        *rows.columns,
        *OUTCOME_COLUMNS,
        pl.when(not_judged)
        .then(pl.lit("not judged: the output is null"))
        .otherwise(pl.col("error"))
        .alias(OUTCOME_ERROR),
    )
    return frame, results


def judged_outcomes(
    rows: pl.DataFrame, judge: Judge, outcomes: str | Path | Metric, cols: Columns, *,
    cache: Any, progress: bool,
) -> pl.DataFrame:  # fmt: skip
    """The sync twin of :func:`ajudged_outcomes`."""
    return run_sync(ajudged_outcomes(rows, judge, outcomes, cols, cache=cache, progress=progress))
