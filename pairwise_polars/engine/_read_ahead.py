"""Requests made while earlier ones are sent: the source of a streamed map.

The chunks of requests come from an iterator that renders each one when asked (the scoring
map's ``Rendering.chunks``). The first is made before anything is sent; the chat engine's
workers then take requests one by one (``next``), and a background task makes the next chunks
in the event loop's idle moments: while the first requests wait on the wire. A worker that
finds nothing made yet makes the next chunk itself, so the stream never waits on the task.
Each chunk is looked up in the cache as it is made; only its misses are sent.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator

import polars as pl

POLL = 0.002
"""How often (seconds) the background task looks for an idle moment."""
LATE = 0.0005
"""A poll woken later than this (seconds) finds the event loop busy (answers to take, requests
to send): the chunk waits for the next poll, or for a worker that needs it."""


class ReadAhead:
    """The misses of ``chunks`` (each looked up with ``find``, the cache's rows of a chunk),
    as an iterable of frames for a sender; ``on_hits`` is told how many of a chunk's requests
    the cache answered."""

    def __init__(
        self,
        chunks: Iterator[pl.DataFrame],
        find: Callable[[pl.DataFrame], pl.DataFrame],
        on_hits: Callable[[int], None],
    ) -> None:
        self._chunks, self._find, self._on_hits = chunks, find, on_hits
        self._ready: deque[pl.DataFrame] = deque()
        self.over = False
        """Every chunk made (or making one failed)."""
        self.keys: list[pl.Series] = []
        """Every request's key, chunk by chunk, as made."""
        self.hits: list[pl.DataFrame] = []
        """The cache's rows, chunk by chunk."""
        self.error: Exception | None = None
        """What stopped making a chunk (raised by :meth:`check` once the sending is over)."""

    @property
    def n_requests(self) -> int:
        return sum(keys.len() for keys in self.keys)

    def has_misses(self) -> bool:
        """Whether anything is to be sent: chunks made until one has a miss (kept first)."""
        if not self._ready:
            frame = self._make()
            if frame is not None:
                self._ready.append(frame)
        return bool(self._ready)

    def __iter__(self) -> Iterator[pl.DataFrame]:
        """The misses, a frame a chunk, in the chunks' order: made ahead, or made now."""
        while True:
            frame = self._ready.popleft() if self._ready else self._make()
            if frame is None:
                return
            yield frame

    def check(self) -> None:
        """Raise what stopped making the chunks, if anything did."""
        if self.error is not None:
            raise self.error

    @contextlib.asynccontextmanager
    async def filling(self) -> AsyncIterator[None]:
        """Make the chunks ahead in a background task while the block runs."""
        task = asyncio.get_running_loop().create_task(self._fill())
        try:
            yield
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _fill(self) -> None:
        """One chunk at a time, each when a poll of the event loop finds it idle (a timer,
        not a busy loop: an idle loop sleeps between polls)."""
        loop = asyncio.get_running_loop()
        while not self.over:
            due = loop.time() + POLL
            await asyncio.sleep(POLL)
            if loop.time() - due < LATE:
                frame = self._make()
                if frame is not None:
                    self._ready.append(frame)

    def _make(self) -> pl.DataFrame | None:
        """The next chunk's misses; None when no chunk is left (or making one failed)."""
        while not self.over:
            try:
                chunk = next(self._chunks)
            except StopIteration:
                self.over = True
                break
            except Exception as exc:  # raised by check() after the requests in flight
                self.error, self.over = exc, True
                break
            self.keys.append(chunk["key"])
            hits = self._find(chunk)
            if hits.is_empty():
                misses = chunk
            else:
                self.hits.append(hits)
                self._on_hits(hits.height)
                misses = chunk.join(hits.select("key"), on="key", how="anti", maintain_order="left")
            if not misses.is_empty():
                return misses
        return None
