"""The frames judges exchange with the scoring map: a requests frame in, result frames out.

A ground-floor module (it imports nothing of the package), so that the engine's cache, the
judges and the scoring map all read the same schemas without importing one another.
"""

from __future__ import annotations

from typing import Any

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
    "cached_tokens": pl.Int64(),  # prompt tokens the provider served from its prompt cache
    "raw_reply": pl.String(),
    "judge_model": pl.String(),
    "expected_score": pl.Float64(),  # score_from="logprobs": the rubric's expectation
    "score_source": pl.String(),  # what the score is: "answer", "logprobs", or a fallback
}
"""Columns of every result frame a judge yields: one row per request key."""


def result_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """Build a result frame from row dicts (missing keys become nulls)."""
    return pl.DataFrame(rows, schema=RESULT_SCHEMA)


PANEL_MODEL = "panel"
"""The ``judge_model`` of a panel's combined rows in a scored frame."""
REPEAT = "repeat"
"""Scored column with a panel or repeats: the member row's repeat index (0 for a single ask),
null on the combined row, the row every figure uses."""
