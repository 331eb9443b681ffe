"""The persistent response cache: a ``responses`` table beside the judgements, in the same
SQLite file (WAL mode), keyed by the request hash (model, parameters, messages, sample index).

It stores the text, finish reason, answering model and token usage of successful generations
only (a failure is retried on the next run), and never an API key or a header.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import polars as pl

from pairwise_polars._cache import JudgementCache, default_cache_path
from pairwise_polars.counterfactual._target import RESPONSE_SCHEMA

_COLUMNS = ("key", "output", "finish_reason", "response_model", "input_tokens", "output_tokens")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    output TEXT NOT NULL,
    finish_reason TEXT,
    response_model TEXT,
    input_tokens INTEGER,
    output_tokens INTEGER,
    created REAL NOT NULL
)
"""
_LOOKUP_CHUNK = 900  # stay under SQLite's bound-variable limit


class ResponseCache:
    """A SQLite cache of successful generations. ``path=None`` means the default file, the
    one the judgement cache uses.

    >>> import tempfile, pathlib
    >>> with ResponseCache(pathlib.Path(tempfile.mkdtemp()) / "c.sqlite") as cache:
    ...     cache.lookup(["nope"]).height
    0
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")  # a rerun pays again for a power loss
        self._db.execute("PRAGMA busy_timeout=10000")
        self._db.execute(_SCHEMA)

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r})"

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def lookup(self, keys: list[str]) -> pl.DataFrame:
        """Cached results for these keys, as a result frame (cached rows only)."""
        rows: list[tuple] = []
        for start in range(0, len(keys), _LOOKUP_CHUNK):
            chunk = keys[start : start + _LOOKUP_CHUNK]
            marks = ",".join("?" * len(chunk))
            rows += self._db.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM responses WHERE key IN ({marks})", chunk
            ).fetchall()
        found = pl.DataFrame(rows, schema={c: RESPONSE_SCHEMA[c] for c in _COLUMNS}, orient="row")
        return found.with_columns(
            error=pl.lit(None, pl.String), attempts=pl.lit(0, pl.Int64), latency_s=pl.lit(0.0)
        ).select(list(RESPONSE_SCHEMA))

    def store(self, results: pl.DataFrame) -> int:
        """Store the successful rows of a result frame in one transaction; returns how many."""
        ok = results.filter(pl.col("error").is_null() & pl.col("output").is_not_null())
        if ok.is_empty():
            return 0
        now = time.time()
        rows = [(*row, now) for row in ok.select(_COLUMNS).iter_rows()]
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany(
                f"INSERT OR REPLACE INTO responses ({', '.join(_COLUMNS)}, created) "
                f"VALUES ({', '.join('?' * (len(_COLUMNS) + 1))})",
                rows,
            )
        return len(rows)

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        self._db.close()


ResponseCacheLike = bool | str | os.PathLike[str] | ResponseCache | JudgementCache | None


def open_response_cache(cache: ResponseCacheLike) -> tuple[ResponseCache | None, bool]:
    """``(cache, opened_here)``. ``True``: the default file; a path or a ``JudgementCache``:
    that file; ``False``/``None``: no cache. ``opened_here``: the caller closes it."""
    if cache is None or cache is False:
        return None, False
    if isinstance(cache, ResponseCache):
        return cache, False
    if isinstance(cache, JudgementCache):
        return ResponseCache(cache.path), True
    return ResponseCache(None if cache is True else cache), True
