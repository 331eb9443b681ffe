"""What one request may cost the client, whatever the server does: the bounds every transport
shares (both chat dialects read their answers through here).

- ``timeout`` covers a whole attempt, connect to last byte: a server that drips its headers or
  its body one byte a second is cut off, not waited on read by read.
- ``connect_timeout`` (default 10 s) is the connect's own: a host that never accepts is known in
  seconds, and before any answer it stops the run (the fail-fast rule of the first attempts).
- ``max_response_bytes`` (default 4 MiB) caps an answer as it is read, after decompression (a
  gzip bomb stops at the cap too): an oversize answer is an error row, never retried.
- ``max_concurrency`` is at most :data:`MAX_CONCURRENCY`: every slot holds a connection and a
  task.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable
from typing import Any, TypeVar

from pairwise_polars._errors import OptionError
from pairwise_polars.engine._failures import Failure, FailureError

MAX_CONCURRENCY = 4096
"""The most requests in flight one run may ask for."""
CONNECT_TIMEOUT = 10.0
"""Seconds to open a connection (``connect_timeout``)."""
MAX_RESPONSE_BYTES = 4 * 2**20
"""The largest answer read (``max_response_bytes``): judgements and responses are far smaller."""
TOO_LARGE = "answer_too_large"
"""The ``code`` of the failure an oversize answer becomes (an error row, never retried)."""

T = TypeVar("T")


def check_bounds(*, max_concurrency: int, connect_timeout: float, max_response_bytes: int) -> None:
    """Raise OptionError for a bound out of its range, naming the setting and the fix."""
    if not 1 <= max_concurrency <= MAX_CONCURRENCY:
        raise OptionError(
            f"max_concurrency must be from 1 to {MAX_CONCURRENCY}, got {max_concurrency}: each "
            "slot keeps a connection and a task. Use several processes (or runner='ray') for "
            "more."
        )
    if not connect_timeout > 0:  # NaN too
        raise OptionError(
            f"connect_timeout must be a number of seconds > 0, got {connect_timeout!r}."
        )
    if isinstance(max_response_bytes, bool) or not max_response_bytes >= 1024:
        raise OptionError(
            f"max_response_bytes must be at least 1024, got {max_response_bytes!r} (default "
            f"{MAX_RESPONSE_BYTES:,})."
        )


async def within(attempt: Awaitable[T], timeout: float) -> T:
    """``attempt`` (one post, connect to last byte) or a timeout failure after ``timeout`` s."""
    try:
        return await asyncio.wait_for(attempt, timeout)
    except (TimeoutError, asyncio.TimeoutError):
        message = f"timeout (no complete answer within {timeout:g} s)"
        raise FailureError(Failure(transport="timeout", message=message)) from None


def too_large(limit: int) -> FailureError:
    """The failure of an answer over ``limit`` bytes."""
    return FailureError(
        Failure(
            status=200,
            message=f"the answer is larger than max_response_bytes ({limit:,} bytes); not read",
            code=TOO_LARGE,
        )
    )


async def read_capped(chunks: AsyncIterator[bytes], limit: int, declared: Any = None) -> bytes:
    """The whole body from ``chunks`` (decoded: after gzip), or ``too_large`` past ``limit``
    bytes; ``declared`` (a Content-Length) over the limit fails before reading anything."""
    try:
        if declared is not None and int(declared) > limit:
            raise too_large(limit)
    except ValueError:
        pass
    parts: list[bytes] = []
    size = 0
    async for chunk in chunks:
        size += len(chunk)
        if size > limit:
            raise too_large(limit)
        parts.append(chunk)
    return b"".join(parts)
