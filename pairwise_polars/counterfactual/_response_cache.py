"""The persistent response cache: a ``responses`` table beside the judgements, in the same
SQLite file (WAL mode), keyed by the request hash (model, parameters, messages, sample index).

It stores the text, finish reason, answering model and token usage of successful generations
only (a failure is retried on the next run), and never an API key or a header.
"""

from __future__ import annotations

import os
from typing import ClassVar

import polars as pl

from pairwise_polars.counterfactual._target import RESPONSE_SCHEMA
from pairwise_polars.engine._cache import JudgementCache, ResultTable


class ResponseCache(ResultTable):
    """A SQLite cache of successful generations. ``path=None`` means the default file, the
    one the judgement cache uses.

    >>> import tempfile, pathlib
    >>> with ResponseCache(pathlib.Path(tempfile.mkdtemp()) / "c.sqlite") as cache:
    ...     cache.lookup(["nope"]).height
    0
    """

    table = "responses"
    answer = "output"
    result_schema = RESPONSE_SCHEMA
    # Every column of a response but the call's own facts, which a lookup fills in itself.
    columns: ClassVar[dict[str, pl.DataType]] = {
        name: dtype
        for name, dtype in RESPONSE_SCHEMA.items()
        if name not in ("error", "attempts", "latency_s")
    }


ResponseCacheLike = bool | str | os.PathLike[str] | ResponseCache | JudgementCache | None
"""``True``: the default file (the judgement cache's); a path or a JudgementCache: that file;
``False``: no cache."""
