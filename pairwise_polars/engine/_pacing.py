"""Pacing from a provider's rate-limit headers.

Anthropic's answers say how much of each budget is left and when it refills
(``anthropic-ratelimit-requests-remaining`` / ``-reset``, the same for ``tokens``,
``input-tokens`` and ``output-tokens``; the reset an RFC 3339 time). When an answer says a budget
is spent, every worker of the run waits until its reset before sending again, instead of each
request retrying on its own backoff into more 429s. ``retry-after`` still sets the retried
request's own wait (``_retries.retry_after``); the pause here holds back the others too. A
pause is never longer than ``max_retry_wait``.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Mapping
from datetime import datetime

PREFIX = "anthropic-ratelimit-"
BUDGETS = ("requests", "tokens", "input-tokens", "output-tokens")


def spent_for(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds until the latest reset of a budget the headers say is spent (remaining <= 0),
    or None when none is (or the headers say nothing readable).

    >>> spent_for({"anthropic-ratelimit-requests-remaining": "0",
    ...            "anthropic-ratelimit-requests-reset": "2026-01-01T00:00:02Z"},
    ...           now=datetime.fromisoformat("2026-01-01T00:00:00+00:00").timestamp())
    2.0
    >>> spent_for({"anthropic-ratelimit-requests-remaining": "3"}) is None
    True
    """
    now = time.time() if now is None else now
    longest: float | None = None
    for budget in BUDGETS:
        remaining = _number(headers.get(f"{PREFIX}{budget}-remaining"))
        reset = _moment(headers.get(f"{PREFIX}{budget}-reset"))
        if remaining is None or remaining > 0 or reset is None:
            continue
        wait = max(0.0, reset - now)
        longest = wait if longest is None else max(longest, wait)
    return longest


def _number(value: str | None) -> float | None:
    try:
        number = float(value) if value is not None else None
    except ValueError:
        return None
    return number if number is not None and math.isfinite(number) else None


def _moment(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class Pacer:
    """The run's shared pause: :meth:`observe` an answer's headers, :meth:`wait` before sending."""

    def __init__(self, max_wait: float) -> None:
        self.max_wait = max_wait
        self._until = 0.0  # monotonic time before which nothing is sent
        self.pauses = 0  # how many answers paused the run (for tests and progress)

    def observe(self, headers: Mapping[str, str] | None) -> None:
        wait = spent_for(headers) if headers else None
        if wait is None or wait <= 0:
            return
        until = time.monotonic() + min(wait, self.max_wait)
        if until > self._until:
            self._until = until
            self.pauses += 1

    def paused(self) -> bool:
        return self._until > time.monotonic()

    async def wait(self) -> None:
        while (delay := self._until - time.monotonic()) > 0:
            await asyncio.sleep(delay)
