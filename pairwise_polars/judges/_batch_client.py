"""What a batch session asks of a provider's batch API: one small protocol (stage, submit,
find, status, results, cancel) and the neutral records it answers in, so the session (submit,
poll, resubmit, recover after a crash) is written once for every provider.

Everything a provider says goes through the package's key redaction before it reaches a
record: a batch's failure reason, a line's error, a control call's error message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pairwise_polars.engine._completion import Completion

Status = Literal["in_progress", "completed", "failed", "expired", "cancelled"]
FINISHED: tuple[Status, ...] = ("completed", "failed", "expired", "cancelled")


@dataclass(frozen=True)
class BatchInfo:
    """A batch as the provider last described it, in neutral words.

    ``status``: ``in_progress`` until it is finished; ``completed`` (every request has a result
    line, answered or not), ``expired`` (the window closed first: unprocessed requests have no
    line or an expired one), ``failed`` (as a whole, ``reason`` says why) or ``cancelled``.
    ``raw`` is the provider's own object, for its adapter only."""

    id: str
    status: Status
    created: float
    ended: float | None = None
    answered: int | None = None
    reason: str | None = None
    raw: Any = None


@dataclass(frozen=True)
class Line:
    """One request's result line: an answer (``completion``) or a ``problem``; ``retry``: the
    problem is the provider's (rate limit, overload, server error, expiry), so sending the
    request again may succeed."""

    key: str
    completion: Completion | None = None
    problem: str | None = None
    retry: bool = False
    logprobs: Any = None
    """The first choice's ``logprobs`` (OpenAI's shape) when the request asked for them."""


class BatchCallFailed(Exception):
    """A control call (upload, create, retrieve, download, cancel) failed after the client's
    own retries; the message is already redacted. ``what`` the call was trying to do (``upload
    the batch input file``); ``status`` None: no HTTP answer."""

    def __init__(self, message: str, *, what: str, status: int | None = None) -> None:
        super().__init__(message)
        self.what = what
        self.status = status

    @property
    def refused(self) -> bool:
        return self.status in (401, 403)

    @property
    def unknown(self) -> bool:
        return self.status == 404


class BatchClient(Protocol):
    """A provider's batch API, as the session uses it. ``lines`` are ``(key, body)`` pairs:
    the request bodies, keyed by request key (the provider's ``custom_id``)."""

    where: str
    """The API as messages name it (e.g. ``the Batch API at https://api.openai.com/v1``)."""

    async def stage(self, lines: list[tuple[str, dict[str, Any]]]) -> str:
        """A handle naming these requests before the batch exists (OpenAI: the uploaded input
        file's id; a provider without files: a local id), recorded before ``submit``."""
        ...

    async def submit(self, handle: str, lines: list[tuple[str, dict[str, Any]]]) -> BatchInfo:
        """Create the batch of a staged handle."""
        ...

    async def find(self, handle: str, since: float) -> BatchInfo | None:
        """The batch created from ``handle`` at or after ``since`` (a crash between submit and
        recording its id), or None when none is found (or the provider cannot say)."""
        ...

    async def status(self, batch_id: str) -> BatchInfo:
        """The batch now; raises BatchCallFailed (``unknown`` when the provider has no such
        batch)."""
        ...

    async def results(self, batch: BatchInfo) -> list[Line]:
        """The result lines of a finished batch."""
        ...

    async def cancel(self, batch_id: str) -> None: ...

    async def aclose(self) -> None: ...
