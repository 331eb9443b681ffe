"""What went wrong with one request, the same record on both transports, and the engine's one
word for it: a :class:`Failure` is one failed attempt, a transport raises it as a
:class:`FailureError`, and a request that failed for good becomes a :func:`failure_row`.

The SDK's exceptions and the fast path's aiohttp responses both become a :class:`Failure`
(status, response headers, the server's error message, already redacted), so retry decisions,
the cap on ``Retry-After``, fail-fast and redaction hold on either transport by construction.
A failure never keeps the exception it came from: those hold the request, and its headers
hold the key.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import json
import re
import socket
import ssl
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import aiohttp

Transport = Literal[
    "refused", "dns", "unreachable", "connect_timeout", "tls", "timeout", "dropped", "error"
]
UNREACHABLE: tuple[Transport, ...] = ("refused", "dns", "unreachable", "connect_timeout", "tls")
"""Transport failures that say the server is not there at all, or not as named (not a slow or
flaky one): before any answer, they stop the run at once."""

_CONNECT_TIMEOUT: Any = getattr(aiohttp, "ConnectionTimeoutError", ())  # aiohttp >= 3.10
_TOKEN = re.compile(r"(?i)(bearer\s+)[^\s\"',;}\]]+|\bsk-[A-Za-z0-9_\-]{6,}")


@dataclass(frozen=True)
class Failure:
    """One failed attempt: an HTTP error answer (``status`` set) or a transport failure
    (``transport`` set). ``message`` is the server's own text, redacted and short."""

    status: int | None = None
    headers: Mapping[str, str] | None = None
    message: str = ""
    code: str | None = None
    kind: str | None = None
    param: str | None = None
    transport: Transport | None = None

    def describe(self) -> str:
        if self.transport is not None:
            return self.message
        return f"HTTP {self.status}: {self.message}"

    @property
    def text(self) -> str:
        """Everything the server said about the failure, lower case, to look for words in."""
        return " ".join(str(v) for v in (self.message, self.code, self.kind, self.param)).lower()


class FailureError(Exception):
    """A :class:`Failure` raised by a transport for a failed attempt; carries only the record."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.describe())
        self.failure = failure


def failure_row(
    key: str, error: str, attempts: int, latency: float, **columns: Any
) -> dict[str, Any]:
    """The result row of a request that failed for good: ``error`` set, no answer; ``columns``
    are the caller's own (e.g. ``judge_model``)."""
    return {"key": key, "error": error, "attempts": attempts, "latency_s": latency, **columns}


# -- building the record ------------------------------------------------------------------------


SHORT_KEY = 8
"""Keys shorter than this are redacted only as whole tokens after an auth word: a run of a few
characters is no secret worth corrupting the text around it for."""
_AUTH_WORD = r"(?:bearer|authorization|api[-_ ]?key|access[-_ ]?token|token|key|password)"


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` without the given secrets and without anything that looks like a bearer token
    or an OpenAI-style key (``sk-...``).

    A secret of 8 characters or more is removed wherever any 8 consecutive characters of it
    appear (a server may echo a key cut short); a shorter one only as a whole token after an
    auth word (``Bearer x``, ``api_key=x``), so ``api_key="test"`` leaves the word "latest"
    alone.

    >>> redact('bad header "Bearer abc.def" for sk-proj-123456789', ["abc.def"])
    'bad header "Bearer ***" for sk-***'
    >>> redact("Incorrect API key provided: canaryTOKENzq81DE...", ["canaryTOKENzq81DEfg77"])
    'Incorrect API key provided: ***...'
    >>> redact("the latest test; api_key=test", ["test"])
    'the latest test; api_key=***'
    """
    text = redact_secrets(text, secrets)
    return _TOKEN.sub(lambda m: f"{m.group(1)}***" if m.group(1) else "sk-***", text)


def redact_secrets(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` without the given secrets only (as :func:`redact` removes them), for text that
    may rightly hold other tokens: a model's answer."""
    for secret in secrets:
        if not secret:
            continue
        if len(secret) >= SHORT_KEY:
            if _quads_of(secret).search(text):
                text = _without_runs(text, secret)
        elif text.isascii() and secret.isascii() and secret.lower() not in text.lower():
            continue  # the pattern below matches the secret itself, case aside: not there
        else:
            token = re.compile(
                rf"(?i)(\b{_AUTH_WORD}[\"']?\s*[:=]?\s*[\"']?){re.escape(secret)}(?![\w.~+/-])"
            )
            text = token.sub(lambda m: f"{m.group(1)}***", text)
    return text


@functools.lru_cache(maxsize=64)
def _quads_of(secret: str) -> re.Pattern[str]:
    """Where the secret's 4-character pieces at offsets 0, 4, 8, ... occur: any SHORT_KEY
    consecutive characters of it hold one of them, so a text with none has no run to redact
    (this search measured ~10x faster than the runs' pattern, tried at every position)."""
    quads = {secret[i : i + 4] for i in range(0, len(secret) - 3, 4)}
    return re.compile("|".join(map(re.escape, sorted(quads))))


@functools.lru_cache(maxsize=64)
def _runs_of(secret: str) -> re.Pattern[str]:
    """Where any SHORT_KEY consecutive characters of ``secret`` start (compiled once a key)."""
    grams = sorted({secret[i : i + SHORT_KEY] for i in range(len(secret) - SHORT_KEY + 1)})
    return re.compile("(?=(?:" + "|".join(map(re.escape, grams)) + "))")


_SERVER_TEXT = ("output", "reason", "raw_reply", "error")


def scrub_row(row: dict[str, Any], secrets: tuple[str | None, ...]) -> None:
    """The key out of the texts of a result row that the server sent (a proxy may echo it)."""
    for name in _SERVER_TEXT:
        value = row.get(name)
        if secrets and isinstance(value, str):
            row[name] = redact_secrets(value, secrets)


def _without_runs(text: str, secret: str) -> str:
    """``text`` with every run of SHORT_KEY or more characters of ``secret`` made ``***``."""
    if secret in text:
        text = text.replace(secret, "***")
    spans: list[list[int]] = []
    for match in _runs_of(secret).finditer(text):
        begin, end = match.start(), match.start() + SHORT_KEY
        if spans and begin <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([begin, end])
    for begin, end in reversed(spans):
        text = f"{text[:begin]}***{text[end:]}"
    return text


def status_failure(
    status: int, headers: Mapping[str, str], body: bytes | str, secrets: Iterable[str | None]
) -> Failure:
    """The record of an HTTP error answer from its status, headers and raw body; the message is
    what the openai SDK would report (the error object's ``message``, else the body)."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    text = text.strip()
    try:
        parsed: Any = json.loads(text)
    except ValueError:
        parsed = None
    message = text or f"Error code: {status}"
    code = kind = param = None
    if isinstance(parsed, dict):
        inner = parsed.get("error", parsed)
        inner = inner if isinstance(inner, dict) else parsed
        message = str(inner.get("message") or f"Error code: {status} - {parsed}")
        code, kind, param = (_text(inner.get(name)) for name in ("code", "type", "param"))
    secrets = tuple(secrets)
    return Failure(
        status=status,
        headers={name.lower(): value for name, value in headers.items()},
        message=redact(message, secrets)[:200],
        code=code,
        kind=kind,
        param=param and redact(param, secrets),
    )


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def transport_failure(exc: BaseException, timeout: float) -> Failure:
    """The record of an attempt that got no HTTP answer, from the exception and its causes
    (the SDK's aiohttp transport reports a refused connection as a timeout: the cause says)."""
    kind = transport_kind(exc)
    messages: dict[Transport, str] = {
        "refused": "connection refused",
        "dns": "the host name does not resolve (DNS failure)",
        "unreachable": "host unreachable",
        "connect_timeout": "no connection within connect_timeout (the host accepts none)",
        "tls": "the TLS handshake failed (does the port speak plain HTTP? then use http://)",
        "timeout": f"timeout (no complete answer within {timeout:g} s)",
        "dropped": "connection dropped before an answer",
        "error": "connection error",
    }
    return Failure(transport=kind, message=messages[kind])


def transport_kind(exc: BaseException) -> Transport:
    chain = list(_causes(exc))
    for cause in chain:
        if isinstance(cause, (socket.gaierror, aiohttp.ClientConnectorDNSError)):
            return "dns"
        if isinstance(cause, ConnectionRefusedError):
            return "refused"
        if isinstance(cause, OSError) and cause.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH):
            return "unreachable"
        if isinstance(cause, ssl.SSLError):
            return "tls"
        if isinstance(cause, _CONNECT_TIMEOUT):  # aiohttp's, under both transports
            return "connect_timeout"
    for cause in chain:
        if isinstance(
            cause,
            (
                aiohttp.ServerDisconnectedError,
                aiohttp.ClientPayloadError,
                aiohttp.ClientOSError,
                ConnectionResetError,
            ),
        ):
            return "dropped"
    for cause in chain:
        if isinstance(cause, (asyncio.TimeoutError, TimeoutError)):
            return "timeout"
    names = " ".join(type(cause).__name__ for cause in chain)
    return "timeout" if "Timeout" in names else "error"


def _causes(exc: BaseException) -> Iterable[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__
