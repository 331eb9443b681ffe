"""The cached async map shared by judging and response collection.

Look every request up in the cache, send only the misses, store each result frame as it arrives
(so an interrupted run keeps what it paid for), and make a request the sender never answered an
error row: nothing is lost, nothing is guessed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Protocol

import polars as pl

from pairwise_polars._errors import Fix, JudgeError
from pairwise_polars.engine._cache import ResultTable
from pairwise_polars.engine._progress import Progress

CACHED = "results so far are cached"
"""What a stopping error says of the answers already received, when a cache keeps them."""
NOT_CACHED = "nothing was cached (no cache in use)"
_FRAMES_PER_CHUNK = 256
"""Result frames kept apart before they are joined into one: at low concurrency every answer
is its own frame, and thousands of one-row frames measured tens of MB."""
_ROWS_PER_FRAME = 1024
"""Result rows (a sender's batches of row dicts) kept as rows until this many make one frame:
at 64 in flight a batch holds one or two answers, and a polars frame each measured ~30 us of
CPU (a tenth of the whole client's work per request)."""

Batch = pl.DataFrame | list[dict[str, Any]]
"""What a sender yields as answers arrive: a result frame, or result rows (dicts of the schema's
columns, a missing one null)."""
Observe = Callable[[int, int], None]
"""Told of every batch of fresh answers as it arrives (after it is stored): how many, and how
many of them are error rows."""


async def cached_map(
    requests: pl.DataFrame,
    send: Callable[[pl.DataFrame], AsyncIterator[Batch]],
    store: ResultTable | None,
    *,
    schema: Mapping[str, pl.DataType],
    conform: Callable[[pl.DataFrame], pl.DataFrame],
    label: str,
    progress: bool,
    lost_error: str,
    lost_columns: Mapping[str, Any] | None = None,
    hits: pl.DataFrame | None = None,
    observe: Observe | None = None,
) -> pl.DataFrame:
    """One result row per request ``key`` with the ``schema`` columns plus ``cached``.

    ``hits``: the cache's rows for these requests when the caller looked them up already (a
    plan before the run), so the cache is read once. ``observe`` is told of every batch of
    fresh answers as it arrives (after it is stored): a run's own progress counts them."""
    if hits is None:
        hits = lookup(store, requests, schema)
    fresh = _Fresh(store, schema, conform)
    misses = requests.join(hits.select("key"), on="key", how="anti", maintain_order="left")
    try:
        # The sender is made before any progress is shown: one that cannot start (no key) says
        # so first (see ready_first).
        frames = None if misses.is_empty() else send(misses)
        bar = Progress(requests.height, label=label, enabled=progress)
        bar.update(done=hits.height, cached=hits.height)
        try:
            if frames is not None:
                try:
                    # Per-batch work stays minimal: at 64 in flight a batch holds one or two.
                    counted = bar.enabled or observe is not None
                    async for batch in frames:
                        answers, errors = fresh.add(batch, counted)
                        if observe is not None:
                            observe(answers, errors)
                        bar.update(done=answers, errors=errors, sent=answers)
                finally:  # close the sender here, not when the loop is gone (its connections)
                    close = getattr(frames, "aclose", None)
                    if close is not None:
                        await close()
        finally:
            bar.close()
    except JudgeError as exc:
        if store is None:  # the run stops, and nothing it received was kept
            raise without_cache(exc) from None
        raise
    results = pl.concat(
        [
            hits.with_columns(cached=pl.lit(True)),
            fresh.frame(hits.clear()).with_columns(cached=pl.lit(False)),
        ]
    ).unique(subset="key", keep="first", maintain_order=True)
    lost = requests.select("key").join(results, on="key", how="anti")
    if not lost.is_empty():
        lost = lost.with_columns(
            error=pl.lit(lost_error),
            attempts=pl.lit(0, pl.Int64),
            cached=pl.lit(False),
            **{name: pl.lit(value) for name, value in (lost_columns or {}).items()},
        )
        results = pl.concat([results, lost], how="diagonal_relaxed")
    return results.select(*schema, "cached")


class Ready(Protocol):
    def ready(self) -> None: ...


def ready_first(
    endpoint: Ready, send: Callable[[pl.DataFrame], AsyncIterator[Batch]]
) -> Callable[[pl.DataFrame], AsyncIterator[Batch]]:
    """``send``, with ``endpoint.ready()`` checked when it is called rather than when its
    answers are first awaited: :func:`cached_map` calls its sender before it shows progress,
    so a run that cannot start (no key) fails before a progress line says ``0%``."""

    def sending(requests: pl.DataFrame) -> AsyncIterator[Batch]:
        endpoint.ready()
        return send(requests)

    return sending


class _Fresh:
    """The answers as they arrive: each batch stored at once (a crash keeps what was paid for),
    rows kept as rows until they make a frame, frames joined in chunks."""

    def __init__(
        self,
        store: ResultTable | None,
        schema: Mapping[str, pl.DataType],
        conform: Callable[[pl.DataFrame], pl.DataFrame],
    ) -> None:
        self.store, self.schema, self.conform = store, dict(schema), conform
        self.chunks: list[pl.DataFrame] = []
        self.pending: list[pl.DataFrame] = []  # frames as they arrived, not yet one chunk
        self.rows: list[dict[str, Any]] = []  # rows as they arrived, not yet a frame

    def add(self, batch: Batch, counted: bool) -> tuple[int, int]:
        """Store and keep a batch; its answers and error rows (errors counted if ``counted``)."""
        if not isinstance(batch, pl.DataFrame):
            if self.store is not None:
                self.store.store_rows(batch)
            self.rows.extend(batch)
            if len(self.rows) >= _ROWS_PER_FRAME:
                self._frame_rows()
            return len(batch), sum(row.get("error") is not None for row in batch)
        frame = self.conform(batch)
        if self.store is not None:
            self.store.store(frame)
        self.pending.append(frame)
        if len(self.pending) >= _FRAMES_PER_CHUNK:  # many tiny frames cost memory
            self.chunks.append(pl.concat(self.pending))
            self.pending = []
        # Two polars calls a frame, made only when someone counts errors.
        return frame.height, frame.height - frame["error"].null_count() if counted else 0

    def _frame_rows(self) -> None:
        self.pending.append(self.conform(pl.DataFrame(self.rows, schema=self.schema)))
        self.rows = []

    def frame(self, empty: pl.DataFrame) -> pl.DataFrame:
        """Every answer kept, in the order they arrived (``empty`` when there is none)."""
        if self.rows:
            self._frame_rows()
        return pl.concat(self.chunks + self.pending or [empty])


def without_cache(error: JudgeError) -> JudgeError:
    """``error`` as said when no cache is in use: it must not promise that answers were kept
    (its fixes carry ``cached: "no"`` for the command line's advice)."""
    fixes = [Fix(f.action, {**f.settings, "cached": "no"}) for f in error.fixes]
    detail = None if error.detail is None else error.detail.replace(CACHED, NOT_CACHED)
    return JudgeError(str(error).replace(CACHED, NOT_CACHED), detail=detail, fixes=fixes)


def lookup(
    store: ResultTable | None, requests: pl.DataFrame, schema: Mapping[str, pl.DataType]
) -> pl.DataFrame:
    """The cached results of these requests (none without a cache)."""
    if store is None or requests.is_empty():
        return pl.DataFrame(schema=dict(schema))
    return store.lookup(requests["key"].to_list())
