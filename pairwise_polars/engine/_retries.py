"""Retries of the chat engine: which failed attempts are retried (and after how long), which
fail the request, and which stop the whole run. Pure functions of the transport-neutral
:class:`~pairwise_polars.engine._failures.Failure`, so both transports decide alike."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

from pairwise_polars._errors import Fix
from pairwise_polars.engine._bounds import TOO_LARGE
from pairwise_polars.engine._failures import Failure

FAIL_FAST_AFTER = 20
"""A run whose first this-many attempts all failed on the wire (or asked for waits beyond the
cap), with no answer at all, stops: a judge that never answers is a configuration problem."""

SCHEMA_UNSUPPORTED = ("response_format", "json_schema", "structured")
CONTEXT_TOO_LONG = ("context_length", "maximum context", "too long", "too many tokens")


class Stop(Exception):
    """A failure no retry can fix: the whole run stops. ``detail`` and ``fixes`` (see
    :class:`~pairwise_polars._errors.JudgeError`) let the command line say the fix its way."""

    def __init__(self, message: str, *, detail: str | None = None, fixes: tuple[Fix, ...] = ()):
        super().__init__(message)
        self.detail = detail
        self.fixes = fixes


class RowError(Exception):
    """A failure of this request only (e.g. a prompt too long for the model)."""


@dataclass(frozen=True, slots=True)
class Retry:
    """How a failed attempt is retried."""

    wait: float | None = None
    """Seconds the server asked to wait; None: the engine's backoff."""
    plain_json: bool = False
    """The server lacks structured output: the request is sent again at once without it. That
    is a new request, not a retry of the old one: it costs no attempt and no backoff."""


BACKOFF = Retry()
PLAIN_JSON = Retry(wait=0.0, plain_json=True)


def classify(
    failure: Failure,
    *,
    where: str,
    model: str,
    structured: bool,
    max_retry_wait: float,
    key_env: str = "OPENAI_API_KEY",
) -> Retry:
    """How to retry (after the server's wait, the backoff, or at once without structured
    output); raises RowError for a failure of this request only and Stop when the run must
    stop."""
    if failure.code == TOO_LARGE:  # the same request would get the same answer
        raise RowError(failure.describe())
    if failure.transport is not None:
        return BACKOFF
    status, text = failure.status or 0, failure.text
    if status < 300:  # an answer that is not a chat completion (e.g. not JSON): retried
        return BACKOFF
    if status == 429:
        if failure.code == "insufficient_quota" or "quota" in text:
            raise Stop(
                f"The quota is exhausted (429 insufficient_quota) at {where}. "
                "Add credit or raise the limit, then rerun: results so far are "
                "cached."
            )
        return Retry(wait=capped_wait(failure, max_retry_wait))
    if status >= 500 or status in (408, 409):
        return Retry(wait=capped_wait(failure, max_retry_wait))
    if status == 400 and structured and any(w in text for w in SCHEMA_UNSUPPORTED):
        return PLAIN_JSON
    if status == 400 and any(w in text for w in CONTEXT_TOO_LONG):
        raise RowError(failure.describe())
    if status in (401, 403):
        raise Stop(
            f"The server at {where} refused the API key ({status}: "
            f"{failure.message}). Check {key_env} or api_key=...; results so far "
            "are cached."
        )
    if status == 404:
        raise Stop(
            f"The server at {where} does not know model {model!r} "
            f"(404: {failure.message}). Check the model name."
        )
    raise Stop(
        f"The server at {where} rejected a request ({status}: {failure.message}). "
        "Retrying cannot fix this; results so far are cached."
    )


class WaitTooLong(RowError):
    """The server asked for a wait longer than ``max_retry_wait``: not slept, an error row."""


def capped_wait(failure: Failure, max_retry_wait: float) -> float | None:
    """The server's ``Retry-After`` (None: our backoff); raises WaitTooLong beyond the cap."""
    wait = retry_after(failure.headers or {})
    if wait is not None and wait > max_retry_wait:
        asked = "forever" if math.isinf(wait) else f"{wait:g} s"
        raise WaitTooLong(
            f"{failure.describe()} (the server asked to wait {asked} before retrying, more "
            f"than max_retry_wait={max_retry_wait:g} s; not retried)"
        )
    return wait


def retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asks to wait (``retry-after-ms`` or ``retry-after``: seconds or an
    HTTP date), or None when it says nothing usable (absent, NaN, negative, unparseable)."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            seconds = _http_date(value)
            if seconds is None:
                continue
        if math.isnan(seconds) or seconds < 0:
            continue
        return max(0.001, seconds)
    return None


def _http_date(value: str) -> float | None:
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return when.timestamp() - time.time()


def backoff(retries: int, base: float, cap: float) -> float:
    """Exponential backoff with jitter: ``base * 2**(retries - 1)`` up to ``cap``, times 0.5-1.5."""
    return min(cap, base * 2 ** (retries - 1)) * random.uniform(0.5, 1.5)
