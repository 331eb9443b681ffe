"""Request- and token-rate limits: token buckets that wait, with no polling loop."""

from __future__ import annotations

import asyncio
import time
from contextvars import ContextVar
from typing import Protocol


class RateLimiter:
    """A token bucket refilled at ``per_minute / 60`` per second, holding up to one second's
    worth (at least one request), so bursts stay within the provider's per-minute budget.
    ``burst`` sets what the bucket holds instead: ``burst=1`` spaces requests evenly, so no
    window of ``t`` seconds holds more than ``1 + t * per_minute / 60`` of them."""

    def __init__(self, per_minute: float, *, burst: float | None = None) -> None:
        if per_minute <= 0:
            raise ValueError(f"a rate limit must be positive, got {per_minute}")
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate) if burst is None else max(1.0, burst)
        self._tokens = self.capacity
        self._updated = time.monotonic()
        self._lock = asyncio.Lock()

    async def acquire(self, amount: float = 1.0) -> None:
        amount = min(amount, self.capacity)  # a request larger than the bucket still goes
        async with self._lock:  # first come, first served
            while True:
                now = time.monotonic()
                self._tokens = min(self.capacity, self._tokens + (now - self._updated) * self.rate)
                self._updated = now
                if self._tokens >= amount:
                    self._tokens -= amount
                    return
                await asyncio.sleep((amount - self._tokens) / self.rate)


class Limiter(Protocol):
    """Anything that waits until ``amount`` may be spent: a :class:`RateLimiter`, or a runner's
    limiter shared by several processes (the Ray runner's token-bucket actor)."""

    async def acquire(self, amount: float = 1.0) -> None: ...


SHARED_LIMITS: ContextVar[tuple[Limiter | None, Limiter | None] | None] = ContextVar(
    "pairwise_polars_shared_limits", default=None
)
"""(requests, tokens) limiters that a distributed runner sets around a judge call: when set,
the chat engine waits on them instead of building the call's own buckets, so one limit holds
across every worker of a run."""
