"""Where the Batch API judge keeps its batches: two tables in a SQLite file (by default the
judgement cache's), so a process that dies with batches in flight finds them again.

A batch is known by its input file from the moment the file is uploaded, before the batch
exists: a process killed between creating the batch and writing its id finds the batch again
by listing batches for that input file, instead of creating a second one.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS openai_batches (
    input_file_id TEXT PRIMARY KEY,
    batch_id TEXT,
    scope TEXT NOT NULL,
    model TEXT,
    status TEXT NOT NULL,
    n_requests INTEGER NOT NULL,
    round INTEGER NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS openai_batch_requests (
    key TEXT NOT NULL,
    input_file_id TEXT NOT NULL,
    max_score INTEGER NOT NULL,
    PRIMARY KEY (key, input_file_id)
);
CREATE INDEX IF NOT EXISTS openai_batch_requests_file ON openai_batch_requests (input_file_id);
"""
_CHUNK = 900  # stay under SQLite's bound-variable limit
DONE = "consumed"
"""A batch whose results were handed to the caller (or reported as errors): never polled again."""


@dataclass
class BatchRecord:
    input_file_id: str
    batch_id: str | None
    status: str
    round: int
    created: float
    n_requests: int


class BatchState:
    """The batches of one scope (an API base URL) in a SQLite file."""

    def __init__(self, path: str | os.PathLike[str], scope: str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.scope = scope
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA busy_timeout=10000")
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def open_batches(self, keys: list[str]) -> dict[str, BatchRecord]:
        """Batches of this scope not yet consumed that hold any of these request keys."""
        found: dict[str, BatchRecord] = {}
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            rows = self._db.execute(
                "SELECT DISTINCT b.input_file_id, b.batch_id, b.status, b.round, b.created, "
                "b.n_requests "
                "FROM openai_batch_requests r JOIN openai_batches b USING (input_file_id) "
                f"WHERE r.key IN ({','.join('?' * len(chunk))}) AND b.scope = ? "
                "AND b.status != ?",
                [*chunk, self.scope, DONE],
            ).fetchall()
            for row in rows:
                found[row[0]] = BatchRecord(*row)
        return found

    def requests_of(self, input_file_id: str) -> dict[str, int]:
        """The request keys of one batch, with each one's rubric maximum."""
        rows = self._db.execute(
            "SELECT key, max_score FROM openai_batch_requests WHERE input_file_id = ?",
            [input_file_id],
        ).fetchall()
        return dict(rows)

    def record_upload(
        self, input_file_id: str, model: str, requests: dict[str, int], round: int
    ) -> BatchRecord:
        now = time.time()
        with self._db:
            self._db.execute("BEGIN")
            self._db.execute(
                "INSERT INTO openai_batches VALUES (?, NULL, ?, ?, 'uploaded', ?, ?, ?, ?)",
                [input_file_id, self.scope, model, len(requests), round, now, now],
            )
            self._db.executemany(
                "INSERT OR REPLACE INTO openai_batch_requests VALUES (?, ?, ?)",
                [(key, input_file_id, max_score) for key, max_score in requests.items()],
            )
        return BatchRecord(input_file_id, None, "uploaded", round, now, len(requests))

    def update(
        self, record: BatchRecord, *, batch_id: str | None = None, status: str | None = None
    ) -> None:
        record.batch_id = batch_id or record.batch_id
        record.status = status or record.status
        self._db.execute(
            "UPDATE openai_batches SET batch_id = ?, status = ?, updated = ? "
            "WHERE input_file_id = ?",
            [record.batch_id, record.status, time.time(), record.input_file_id],
        )

    def consume(self, record: BatchRecord) -> None:
        """Results handed over: forget its requests (the cache holds the answers)."""
        with self._db:
            self._db.execute("BEGIN")
            self._db.execute(
                "UPDATE openai_batches SET status = ?, updated = ? WHERE input_file_id = ?",
                [DONE, time.time(), record.input_file_id],
            )
            self._db.execute(
                "DELETE FROM openai_batch_requests WHERE input_file_id = ?",
                [record.input_file_id],
            )
        record.status = DONE
