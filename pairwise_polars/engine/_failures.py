"""What went wrong with one request, the same record on both transports.

The SDK's exceptions and the fast path's aiohttp responses both become a :class:`Failure`
(status, response headers, the server's error message, already redacted), so retry decisions,
the cap on ``Retry-After``, fail-fast and redaction hold on either transport by construction.
A failure never keeps the exception it came from: those hold the request, and its headers
hold the key.
"""

from __future__ import annotations

import asyncio
import errno
import json
import re
import socket
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import aiohttp

Transport = Literal["refused", "dns", "unreachable", "timeout", "dropped", "error"]
UNREACHABLE: tuple[Transport, ...] = ("refused", "dns", "unreachable")
"""Transport failures that say the server is not there at all (not a slow or flaky one)."""

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


class RequestFailed(Exception):
    """Raised by a transport for a failed attempt; carries only the neutral record."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.describe())
        self.failure = failure


# -- building the record ------------------------------------------------------------------------


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` without the given secrets and without anything that looks like a bearer token
    or an OpenAI-style key (``sk-...``).

    >>> redact('bad header "Bearer abc.def" for sk-proj-123456789', ["abc.def"])
    'bad header "Bearer ***" for sk-***'
    """
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return _TOKEN.sub(lambda m: f"{m.group(1)}***" if m.group(1) else "sk-***", text)


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
        "timeout": f"timeout (no answer within {timeout:g} s)",
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
