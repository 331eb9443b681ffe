"""What one run's workers share: its rate limiters, the provider's pause, the structured-output
switch, the stop flag and the counts that decide failing fast."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pairwise_polars.engine._limits import Limiter
from pairwise_polars.engine._pacing import Pacer


@dataclass
class RunState:
    """What one run's workers share: rate limiters, the structured-output switch, the stop flag."""

    structured: bool
    rpm: Limiter | None
    tpm: Limiter | None
    stopped: bool = False
    answered: int = 0  # replies that came back (2xx)
    secrets: tuple[str | None, ...] = ()  # the key (and the URL's): redacted from replies
    unusable: int = 0  # before the first reply: attempts lost on the wire or to too long waits
    pacer: Pacer | None = None  # the provider's rate-limit headers: a pause shared by all workers
    encoded: dict[Any, tuple[bytes, bytes]] = field(default_factory=dict)
    """A body's encoded bytes before and after its messages, by (structured, rubric)."""

    def limited(self) -> bool:
        """Whether :meth:`throttle` may wait: a rate limit, or the provider's pause now."""
        return (
            self.rpm is not None
            or self.tpm is not None
            or (self.pacer is not None and self.pacer.paused())
        )

    async def throttle(self, tokens: int) -> None:
        if self.pacer is not None:
            await self.pacer.wait()
        if self.rpm is not None:
            await self.rpm.acquire()
        if self.tpm is not None:
            await self.tpm.acquire(tokens)
