"""The persistent judgement cache: a SQLite file in WAL mode, keyed by the request hash.

It stores the parsed answer, the raw reply and token usage of successful judgements only (a
failure is retried on the next run), and never an API key or a header.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from pathlib import Path

import polars as pl

from pairwise_polars.judges._protocol import RESULT_SCHEMA

_COLUMNS = ("key", "raw_score", "reason", "input_tokens", "output_tokens", "raw_reply",
            "judge_model")  # fmt: skip
_SCHEMA = """
CREATE TABLE IF NOT EXISTS judgements (
    key TEXT PRIMARY KEY,
    raw_score INTEGER NOT NULL,
    reason TEXT,
    input_tokens INTEGER,
    output_tokens INTEGER,
    raw_reply TEXT,
    judge_model TEXT,
    created REAL NOT NULL
)
"""
_LOOKUP_CHUNK = 900  # stay under SQLite's bound-variable limit


def default_cache_path() -> Path:
    """The user cache directory's ``pairwise_polars/judgements.sqlite``."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local"))
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "pairwise_polars" / "judgements.sqlite"


class JudgementCache:
    """A SQLite cache of successful judgements. ``path=None`` means the default location.

    >>> import tempfile, pathlib
    >>> cache = JudgementCache(pathlib.Path(tempfile.mkdtemp()) / "c.sqlite")
    >>> cache.lookup(["nope"]).height
    0
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # One connection per cache object, used from the event loop's thread only.
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        # NORMAL: a commit survives the process being killed; only a power loss may lose the
        # last transactions, which a rerun simply pays for again.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA busy_timeout=10000")
        self._db.execute(_SCHEMA)

    def __repr__(self) -> str:
        return f"JudgementCache({str(self.path)!r})"

    def lookup(self, keys: list[str]) -> pl.DataFrame:
        """Cached results for these keys, as a result frame (cached rows only)."""
        rows: list[tuple] = []
        for start in range(0, len(keys), _LOOKUP_CHUNK):
            chunk = keys[start : start + _LOOKUP_CHUNK]
            marks = ",".join("?" * len(chunk))
            rows += self._db.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM judgements WHERE key IN ({marks})", chunk
            ).fetchall()
        found = pl.DataFrame(rows, schema={c: RESULT_SCHEMA[c] for c in _COLUMNS}, orient="row")
        return found.with_columns(
            error=pl.lit(None, pl.String),
            attempts=pl.lit(0, pl.Int64),
            latency_s=pl.lit(0.0),
        ).select(list(RESULT_SCHEMA))

    def store(self, results: pl.DataFrame) -> int:
        """Store the successful rows of a result frame in one transaction; returns how many."""
        ok = results.filter(pl.col("error").is_null() & pl.col("raw_score").is_not_null())
        if ok.is_empty():
            return 0
        now = time.time()
        rows = [(*row, now) for row in ok.select(_COLUMNS).iter_rows()]
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany(
                f"INSERT OR REPLACE INTO judgements ({', '.join(_COLUMNS)}, created) "
                f"VALUES ({', '.join('?' * (len(_COLUMNS) + 1))})",
                rows,
            )
        return len(rows)

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM judgements").fetchone()[0]

    def close(self) -> None:
        self._db.close()


def open_cache(
    cache: bool | str | os.PathLike[str] | JudgementCache | None,
) -> JudgementCache | None:
    """``True``: the default file; a path: that file; ``False``/``None``: no cache."""
    if cache is None or cache is False:
        return None
    if isinstance(cache, JudgementCache):
        return cache
    return JudgementCache(None if cache is True else cache)
