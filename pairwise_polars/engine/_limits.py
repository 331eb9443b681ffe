"""Request- and token-rate limits (token buckets that wait, with no polling loop), the
engine's slots of concurrent requests, and the hand-off of its workers' results."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from contextvars import ContextVar
from typing import Generic, Protocol, TypeVar

T = TypeVar("T")


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


class Slots:
    """A counting semaphore whose release hands the slot to the longest waiter in O(1).

    ``asyncio.Semaphore`` (3.10-3.12) rescans woken-but-not-yet-running waiters on every
    release, so releasing a batch of k slots costs O(k^2): at 256 in flight that was the
    engine's largest own cost in a profile."""

    def __init__(self, n: int) -> None:
        self._free = n
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self) -> None:
        if self._free > 0 and not self._waiters:
            self._free -= 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        await waiter  # the releaser handed its slot over: nothing to count here

    def release(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():  # a cancelled waiter holds no slot
                waiter.set_result(None)
                return
        self._free += 1


class Handoff(Generic[T]):
    """What many workers hand to one consumer: :meth:`put` never waits; :meth:`take` waits
    until there is something and takes all of it as one batch. One future per wait, none per
    item: an ``asyncio.Queue`` read in batches cost a task and an ``asyncio.wait`` per batch."""

    def __init__(self) -> None:
        self._items: list[T] = []
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False

    def put(self, item: T) -> None:
        self._items.append(item)
        self._wake()

    def close(self) -> None:
        """Nothing more will be put: a :meth:`take` on nothing returns ``[]`` from now on."""
        self._closed = True
        self._wake()

    async def take(self) -> list[T]:
        """Everything put since the last take, once there is something; ``[]`` once closed."""
        while not self._items and not self._closed:
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        items, self._items = self._items, []
        return items

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


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
