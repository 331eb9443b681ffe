"""Which failure, if any, the test server plays for a request."""

from __future__ import annotations

import random
from dataclasses import dataclass, fields
from typing import Literal, get_args

FaultName = Literal[
    "401",
    "404",
    "429",
    "quota",
    "500",
    "timeout",
    "malformed",
    "off_rubric",
    "connection_drop",
    "529",
]

# The order rates are laid out on [0, 1) for the single draw per request. Changing it changes
# which requests fail for a given seed, so append, never reorder.
_RATED: tuple[tuple[str, FaultName], ...] = (
    ("rate_429", "429"),
    ("rate_500", "500"),
    ("rate_timeout", "timeout"),
    ("rate_malformed", "malformed"),
    ("rate_off_rubric", "off_rubric"),
    ("rate_connection_drop", "connection_drop"),
    ("rate_529", "529"),
)
FAULT_NAMES: tuple[FaultName, ...] = get_args(FaultName)  # in the order the type lists them


@dataclass(frozen=True, kw_only=True)
class Faults:
    """Failures the test server injects, each at a per-request rate.

    One seeded draw per valid request picks at most one fault, so a given seed and request order
    always fail the same requests. ``always`` forces one fault on every request instead.

    - ``429``: ``Retry-After: <retry_after>`` and ``retry-after-ms`` headers, a rate-limit body.
      ``retry_after_header`` / ``retry_after_ms_header`` send those raw values instead (e.g.
      ``"1000000000"``, ``"inf"``, ``"nan"``, ``"-5"``, an HTTP date): once either is set, only
      the headers set are sent.
    - ``500``: an OpenAI server-error body (after the server's latency).
    - ``timeout``: waits ``timeout_delay`` seconds before a normal answer; the client times out.
    - ``malformed``: a 200 whose message content is truncated JSON.
    - ``off_rubric``: a 200 with valid JSON off the rubric: alternately a score three above the
      maximum, then no ``score`` key at all.
    - ``connection_drop``: the connection is closed with no response at all.
    - ``529``: an ``overloaded_error`` answer with status 529, as Anthropic's API sends when it
      is overloaded (after the server's latency).
    - ``echo_auth``: every error answer's message ends with the request's ``Authorization``
      (or ``x-api-key``) header, as some proxies do (a key leak the client must redact).
    - ``always`` only: ``"401"`` (bad key), ``"404"`` (unknown model), ``"quota"`` (429 with code
      ``insufficient_quota`` and no Retry-After: retrying cannot help).

    Example:
        >>> from pairwise_polars.testing import Faults
        >>> Faults(rate_429=0.1, rate_malformed=0.02)
        Faults(rate_429=0.1, retry_after=0.05, rate_500=0.0, rate_timeout=0.0, timeout_delay=30.0, rate_malformed=0.02, rate_off_rubric=0.0, rate_connection_drop=0.0, always=None, retry_after_header=None, retry_after_ms_header=None, echo_auth=False, rate_529=0.0)
        >>> Faults(always="quota").always
        'quota'
    """  # noqa: E501

    rate_429: float = 0.0
    retry_after: float = 0.05
    rate_500: float = 0.0
    rate_timeout: float = 0.0
    timeout_delay: float = 30.0
    rate_malformed: float = 0.0
    rate_off_rubric: float = 0.0
    rate_connection_drop: float = 0.0
    always: FaultName | None = None
    retry_after_header: str | None = None
    retry_after_ms_header: str | None = None
    echo_auth: bool = False
    rate_529: float = 0.0

    def __post_init__(self) -> None:
        problems = []
        for field in fields(self):
            value = getattr(self, field.name)
            if field.name.startswith("rate_") and not 0.0 <= value <= 1.0:
                problems.append(f"{field.name}={value!r} is not within [0, 1]")
        total = sum(getattr(self, attr) for attr, _ in _RATED)
        if total > 1.0 + 1e-9:
            problems.append(f"the rates add up to {total:g}, more than 1")
        if self.retry_after < 0 or self.timeout_delay < 0:
            problems.append("retry_after and timeout_delay must not be negative")
        if self.always is not None and self.always not in FAULT_NAMES:
            problems.append(f"always={self.always!r} is not one of {', '.join(FAULT_NAMES)}")
        if problems:
            raise ValueError("Invalid Faults: " + "; ".join(problems) + ".")

    def retry_headers(self) -> dict[str, str]:
        """The headers of a 429: ``Retry-After`` and ``retry-after-ms``, or the raw values set."""
        if self.retry_after_header is None and self.retry_after_ms_header is None:
            return {
                "Retry-After": f"{self.retry_after:g}",
                "retry-after-ms": str(round(self.retry_after * 1000)),
            }
        raw = {"Retry-After": self.retry_after_header, "retry-after-ms": self.retry_after_ms_header}
        return {name: value for name, value in raw.items() if value is not None}

    def pick(self, rng: random.Random) -> FaultName | None:
        """The fault for the next request, or None; consumes exactly one draw of ``rng``."""
        # Draw even under `always`, so switching `always` off mid-run keeps the rated sequence.
        x = rng.random()
        if self.always is not None:
            return self.always
        edge = 0.0
        for attr, name in _RATED:
            edge += getattr(self, attr)
            if x < edge:
                return name
        return None
