"""The unique requests of a prepared call, rendered and keyed when they are needed.

A plan, a cache lookup or a judge that reads frames asks for all of them at once
(:meth:`Rendering.requests`). A run that sends them one by one through the chat engine takes
them in chunks (:meth:`Rendering.chunks`): the first requests go out while the others are still
being rendered. Either way each distinct request is rendered once, and the requests, their keys
and their order are the same.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import polars as pl

from pairwise_polars._schemas import REQUEST_SCHEMA
from pairwise_polars.metrics import Metric
from pairwise_polars.metrics._compiled import compiles
from pairwise_polars.metrics._sandbox import MAX_TEXT
from pairwise_polars.scoring._requests import (
    ROW,
    TEXT,
    UNDER_TEST,
    attach_keys,
    distinct_rows,
    render_requests,
)
from pairwise_polars.scoring._views import VIEW

KEYED_SCHEMA = {
    ROW: pl.UInt32,
    "metric": pl.String,
    VIEW: pl.String,
    "max_score": pl.Int64,
    "key": pl.String,
}
FIRST_CHUNK = 256
"""Requests rendered before the first is sent, at least (a judge's ``max_concurrency`` if
more): a render has a fixed cost of a few milliseconds, so the first chunk is small and fast,
and the ones after it larger."""
CHUNK = 2048
"""Requests rendered at a time after the first chunk."""
_GROWTH = 4
"""A rendered prompt is at most this many times its template's text and its variables' text
per use (a filter such as ``upper`` may lengthen a text): a bound that says, before anything is
rendered, that no prompt can pass the size limit, so a chunk rendered mid-run cannot fail."""


class Rendering:
    """The requests of ``rows`` (:func:`~pairwise_polars.scoring._requests.request_rows`),
    rendered and keyed on demand, each distinct one once."""

    def __init__(
        self,
        rows: pl.DataFrame,
        metrics: Sequence[Metric],
        *,
        identity: dict[str, Any],
        uses_messages: bool,
    ) -> None:
        self._rows = rows
        self._distinct = rows if rows.is_empty() else distinct_rows(rows)
        self._metrics = tuple(metrics)
        self._identity = identity
        self._uses_messages = uses_messages
        self._keys: list[pl.DataFrame] = []  # each chunk's dedupe hash -> request key
        self._requests: list[pl.DataFrame] = []  # each chunk's new unique requests
        self._seen: set[str] | None = None  # the keys of the chunks so far, once there are two
        self._done = 0  # distinct rows rendered
        self._all: tuple[pl.DataFrame, pl.DataFrame] | None = None

    @property
    def expected(self) -> int:
        """How many unique requests there are at most (fewer when two distinct sets of
        variables render to the same messages)."""
        return self._distinct.height

    @property
    def n_chunks(self) -> int:
        """How many chunks were rendered so far (one when all at once)."""
        return len(self._requests)

    def streams(self, first: int) -> bool:
        """Whether sending in chunks can start before everything is rendered: nothing is
        rendered yet, there is more than a ``first`` chunk, and rendering the rest cannot fail
        (shipped templates, compiled, and no prompt near the size limit)."""
        if not self._uses_messages or self._done or self.expected <= first:
            return False
        if not all(compiles(metric) for metric in self._metrics):
            return False
        per_use = self._distinct.select(
            pl.sum_horizontal(pl.col(*TEXT, UNDER_TEST).str.len_chars().fill_null(4)).max()
        ).item()
        template = max(len(m.system) + len(m.user) for m in self._metrics)
        uses = max((m.system + m.user).count("{{") for m in self._metrics)
        return _GROWTH * (template + uses * (per_use or 0)) < MAX_TEXT

    def chunks(self, first: int, size: int | None = None) -> Iterator[pl.DataFrame]:
        """The unique requests in chunks (the ones already rendered, then ``first`` distinct
        rows, then ``size`` at a time, :data:`CHUNK` by default), each rendered when it is
        asked for. Their keys are unique across the chunks."""
        size = CHUNK if size is None else size
        if first < 1 or size < 1:
            raise ValueError(f"chunk sizes must be positive, got first={first}, size={size}.")
        yield from list(self._requests)
        step = first if not self._done else size
        while self._done < self._distinct.height:
            yield self._render(step)
            step = size

    def requests(self) -> pl.DataFrame:
        """Every unique request (REQUEST_SCHEMA), rendered now if not yet."""
        return self._complete()[1]

    def keyed(self) -> pl.DataFrame:
        """One row per judgeable (pair, metric, view): its row id, ``view`` and request key."""
        return self._complete()[0]

    def _complete(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        if self._all is None:
            if self._distinct.is_empty():
                self._all = (pl.DataFrame(schema=KEYED_SCHEMA), pl.DataFrame(schema=REQUEST_SCHEMA))
                return self._all
            if self._done < self._distinct.height:
                self._render(self._distinct.height - self._done)
            keys = self._keys[0] if len(self._keys) == 1 else pl.concat(self._keys)
            requests = self._requests[0] if len(self._requests) == 1 else pl.concat(self._requests)
            self._all = (attach_keys(self._rows, keys), requests)
        return self._all

    def _render(self, size: int) -> pl.DataFrame:
        """Render the next ``size`` distinct rows: their requests not in an earlier chunk."""
        part = self._distinct.slice(self._done, size)
        keys, requests = render_requests(
            part, self._metrics, identity=self._identity, uses_messages=self._uses_messages
        )
        self._done += part.height
        more = self._done < self._distinct.height
        if self._seen is not None or more:  # two sets of variables may render alike: dedupe
            requests = self._unseen(requests, remember=more)
        self._keys.append(keys)
        self._requests.append(requests)
        return requests

    def _unseen(self, requests: pl.DataFrame, *, remember: bool) -> pl.DataFrame:
        """``requests`` without the keys of earlier chunks; their keys remembered if more
        chunks follow (the set is dropped after the last)."""
        seen = self._seen if self._seen is not None else set()
        keys = requests["key"].to_list()
        new = [key not in seen for key in keys]
        if not all(new):
            requests = requests.filter(pl.Series(new, dtype=pl.Boolean))
            keys = requests["key"].to_list()
        seen.update(keys)
        self._seen = seen if remember else None
        return requests


def first_chunk(concurrency: int) -> int:
    """The first chunk for a judge with ``concurrency`` requests in flight."""
    return max(FIRST_CHUNK, concurrency)
