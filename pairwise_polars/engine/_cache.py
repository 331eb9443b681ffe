"""The persistent caches: tables in one SQLite file (WAL mode), keyed by the request hash.

A table stores successful results only (a failure is retried on the next run) and never an API
key or a header. ``judgements`` holds the judge's parsed answers; the counterfactual package
adds ``responses`` (the target system's answers) to the same file.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, ClassVar, TypeVar, overload

import polars as pl

from pairwise_polars._errors import CacheError, Fix
from pairwise_polars._schemas import RESULT_SCHEMA

T = TypeVar("T", bound="ResultTable")
_LOOKUP_CHUNK = 900  # stay under SQLite's bound-variable limit
_SQLITE_HEADER = b"SQLite format 3\x00"
_SQL_TYPES = {pl.String: "TEXT", pl.Int64: "INTEGER", pl.Float64: "REAL"}


def default_cache_path() -> Path:
    """The user cache directory's ``pairwise_polars/judgements.sqlite``."""
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local"))
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "pairwise_polars" / "judgements.sqlite"


class ResultTable:
    """One table of successful results in a SQLite cache file; subclasses name the table, its
    columns (``key`` first) and the column that must be set for a row to count as a success."""

    table: ClassVar[str]
    columns: ClassVar[dict[str, pl.DataType]]
    answer: ClassVar[str]
    result_schema: ClassVar[dict[str, pl.DataType]]
    """The schema of the result frames the table caches (a lookup returns this schema)."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self._db: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _check_header(self.path)  # before SQLite touches it: a foreign file stays as it is
            # One connection per cache object, used from the event loop's thread only.
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            # NORMAL: a commit survives the process being killed; only a power loss may lose
            # the last transactions, which a rerun simply pays for again.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA busy_timeout=10000")
            fields = [
                f"{name} {_SQL_TYPES[type(dtype)]}"
                + (" PRIMARY KEY" if name == "key" else " NOT NULL" if name == self.answer else "")
                for name, dtype in self.columns.items()
            ]
            self._db.execute(
                f"CREATE TABLE IF NOT EXISTS {self.table} ({', '.join(fields)}, "
                "created REAL NOT NULL)"
            )
            self._add_new_columns()
        except (sqlite3.Error, OSError) as exc:
            if self._db is not None:
                self._db.close()
            raise self._error(exc, "open") from exc

    def _add_new_columns(self) -> None:
        """A file written before a column existed gets it (null in its old rows)."""
        assert self._db is not None
        have = {row[1] for row in self._db.execute(f"PRAGMA table_info({self.table})")}
        for name, dtype in self.columns.items():
            if name not in have:
                self._db.execute(
                    f"ALTER TABLE {self.table} ADD COLUMN {name} {_SQL_TYPES[type(dtype)]}"
                )

    def _error(self, exc: BaseException, doing: str) -> CacheError:
        """The error for a cache file that cannot be opened, read or written: which file, why,
        and what to do instead (it is never modified or replaced here)."""
        what = f"the {self.table.removesuffix('s')} cache"
        reason = str(exc).strip().rstrip(".") or type(exc).__name__
        if isinstance(exc, OSError) and exc.strerror:
            reason = exc.strerror
        if isinstance(exc, sqlite3.Error) and "disk is full" in reason:
            reason = "the disk holding it is full"
        detail = f"Cannot {doing} {what} {str(self.path)!r}: {reason}."
        return CacheError(
            f"{detail} Pass cache=False (or another cache path), or move the file away to "
            "start a new cache there; the file was not modified.",
            detail=detail,
            fixes=[Fix("cache", {"cache": "False"})],
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r})"

    def __enter__(self) -> ResultTable:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def lookup(self, keys: list[str]) -> pl.DataFrame:
        """Cached results for these keys, as a result frame (cached rows only)."""
        missing = [
            pl.lit(None, dtype).alias(name)
            for name, dtype in self.result_schema.items()
            if name not in self.columns and name not in ("error", "attempts", "latency_s")
        ]
        return (
            self._rows(keys)
            .with_columns(
                *missing,
                error=pl.lit(None, pl.String),
                attempts=pl.lit(0, pl.Int64),
                latency_s=pl.lit(0.0),
            )
            .select(list(self.result_schema))
        )

    def _rows(self, keys: list[str]) -> pl.DataFrame:
        names = ", ".join(self.columns)
        rows: list[tuple] = []
        for start in range(0, len(keys), _LOOKUP_CHUNK):
            chunk = keys[start : start + _LOOKUP_CHUNK]
            marks = ",".join("?" * len(chunk))
            try:
                rows += self._connection.execute(
                    f"SELECT {names} FROM {self.table} WHERE key IN ({marks})", chunk
                ).fetchall()
            except sqlite3.Error as exc:
                raise self._error(exc, "read") from exc
        return pl.DataFrame(rows, schema=self.columns, orient="row")

    def store(self, results: pl.DataFrame) -> int:
        """Store the successful rows of a result frame in one transaction; returns how many."""
        ok = results.filter(pl.col("error").is_null() & pl.col(self.answer).is_not_null())
        if ok.is_empty():
            return 0
        return self._insert(list(ok.select(list(self.columns)).iter_rows()))

    def store_rows(self, rows: Iterable[Mapping[str, Any]]) -> int:
        """:meth:`store` of result rows (dicts, a missing column null) without making a frame.
        The table holds what :meth:`store` writes: a column's declared type converts as a
        frame would (an integer in a REAL column is stored as a float)."""
        columns, answer = list(self.columns), self.answer
        kept = [
            tuple(map(row.get, columns))
            for row in rows
            if row.get("error") is None and row.get(answer) is not None
        ]
        return self._insert(kept) if kept else 0

    def _insert(self, rows: list[tuple[Any, ...]]) -> int:
        now = time.time()
        db = self._connection
        try:
            with db:
                db.execute("BEGIN")
                db.executemany(
                    f"INSERT OR REPLACE INTO {self.table} ({', '.join(self.columns)}, created) "
                    f"VALUES ({', '.join('?' * (len(self.columns) + 1))})",
                    [(*row, now) for row in rows],
                )
        except sqlite3.Error as exc:
            raise self._error(exc, "write") from exc
        return len(rows)

    @property
    def _connection(self) -> sqlite3.Connection:
        assert self._db is not None  # set in __init__, or __init__ raised
        return self._db

    def __len__(self) -> int:
        return self._connection.execute(f"SELECT COUNT(*) FROM {self.table}").fetchone()[0]

    def is_empty(self) -> bool:
        """Whether the table holds no result (without counting a large one)."""
        return self._connection.execute(f"SELECT 1 FROM {self.table} LIMIT 1").fetchone() is None

    def close(self) -> None:
        if self._db is not None:
            self._db.close()


class JudgementCache(ResultTable):
    """A SQLite cache of successful judgements. ``path=None`` means the default location.

    >>> import tempfile, pathlib
    >>> cache = JudgementCache(pathlib.Path(tempfile.mkdtemp()) / "c.sqlite")
    >>> cache.lookup(["nope"]).height
    0
    """

    table = "judgements"
    answer = "raw_score"
    result_schema = RESULT_SCHEMA
    columns: ClassVar[dict[str, pl.DataType]] = {
        name: RESULT_SCHEMA[name]
        for name in (
            "key",
            "raw_score",
            "reason",
            "input_tokens",
            "output_tokens",
            "raw_reply",
            "judge_model",
            "expected_score",
            "score_source",
        )
    }


def _check_header(path: Path) -> None:
    """Refuse a file that exists and is not a SQLite database, without writing to it."""
    if not path.exists():
        return
    if path.is_dir():
        raise IsADirectoryError(21, "it is a folder: name a file", str(path))
    with open(path, "rb") as handle:
        head = handle.read(len(_SQLITE_HEADER))
    if head and head != _SQLITE_HEADER:
        raise sqlite3.DatabaseError("the file is not a SQLite database")


CacheArg = bool | str | os.PathLike[str] | ResultTable | None
"""What a ``cache=`` argument can be: ``True``, ``False``/``None``, a path, or a cache."""


@overload
def cache_session(
    cache: CacheArg, *, enabled: bool = ...
) -> AbstractContextManager[JudgementCache | None]: ...
@overload
def cache_session(
    cache: CacheArg, *, enabled: bool = ..., table: type[T]
) -> AbstractContextManager[T | None]: ...
@contextmanager
def cache_session(
    cache: CacheArg, *, enabled: bool = True, table: type[ResultTable] = JudgementCache
) -> Iterator[Any]:
    """The cache for one call (None when disabled or ``False``/``None``): ``True`` the default
    file, a path that file, a cache of another table that cache's file. Closed afterwards if
    opened here; a ``table`` the caller passed stays open for their next call.

    >>> import tempfile, pathlib
    >>> with cache_session(pathlib.Path(tempfile.mkdtemp()) / "c.sqlite") as store:
    ...     type(store).__name__, len(store)
    ('JudgementCache', 0)
    """
    store = _open(cache, table) if enabled else None
    try:
        yield store
    finally:
        if store is not None and store is not cache:
            store.close()


def _open(cache: CacheArg, table: type[ResultTable]) -> ResultTable | None:
    if cache is None or cache is False:
        return None
    if isinstance(cache, table):
        return cache
    if isinstance(cache, ResultTable):  # another table of the same file
        return table(cache.path)
    return table(None if cache is True else cache)
