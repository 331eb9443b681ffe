"""What a judge is: anything with one async batch method over a frame of requests.

The scoring map sends a *requests frame* (one row per unique judge request) and reads back
*result frames* as they arrive; results are joined to pairs by ``key``, never by position.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

import polars as pl

REQUEST_SCHEMA: dict[str, pl.DataType] = {
    "key": pl.String(),  # the request's identity (also the cache key)
    "metric": pl.String(),  # metric name
    "max_score": pl.Int64(),  # the rubric's top: valid answers are 0..max_score
    "messages": pl.String(),  # the rendered chat messages, JSON-encoded
    "input_a": pl.String(),
    "input_b": pl.String(),
    "output_a": pl.String(),
    "output_b": pl.String(),
    "attribute_a": pl.String(),
    "attribute_b": pl.String(),
    "dimension": pl.String(),
}
"""Columns of the requests frame a judge receives. ``messages`` is null for judges that do not
use them (``uses_messages = False``); the text columns are always filled."""

RESULT_SCHEMA: dict[str, pl.DataType] = {
    "key": pl.String(),
    "raw_score": pl.Int64(),  # the rubric answer; null when the judgement failed
    "reason": pl.String(),
    "error": pl.String(),  # null on success; a short description of what failed otherwise
    "attempts": pl.Int64(),
    "latency_s": pl.Float64(),
    "input_tokens": pl.Int64(),
    "output_tokens": pl.Int64(),
    "raw_reply": pl.String(),
    "judge_model": pl.String(),
}
"""Columns of every result frame a judge yields: one row per request key."""


@runtime_checkable
class Judge(Protocol):
    """A judge scores a frame of requests and yields result frames as answers arrive.

    Optional attributes the scoring map reads when present: ``uses_messages`` (default True:
    render the metric templates; False for judges working on the raw texts), ``cacheable``
    (default True: store successful results in the cache) and ``identity`` (a dict of the model
    and parameters that change answers: part of the cache key; default ``{"name": name}``).
    ``score_parquet`` also looks for ``submitting()``: a judge that only submits its requests
    (e.g. to the Batch API) so that every chunk can be submitted before any is collected.
    """

    name: str
    """The label written to ``judge_model``."""

    def judge(self, requests: pl.DataFrame) -> AsyncIterator[pl.DataFrame]:
        """Yield frames with RESULT_SCHEMA columns covering every request key exactly once."""
        ...


def result_frame(rows: list[dict]) -> pl.DataFrame:
    """Build a result frame from row dicts (missing keys become nulls)."""
    return pl.DataFrame(rows, schema=RESULT_SCHEMA)
