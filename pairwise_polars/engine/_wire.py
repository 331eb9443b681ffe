"""The two ways a chat request travels: the fast path (the body posted over one long-lived
aiohttp session) and the openai SDK's ``client.post``.

Both send the same bytes (compact JSON, UTF-8), to the same URL, with the same headers and
timeouts, and both turn every failed attempt into the same
:class:`~pairwise_polars.engine._failures.Failure` (raised as ``FailureError``), so the engine's
retry decisions cannot tell them apart. The fast path skips the SDK's per-request work (its
request-options model, URL handling, auth and retry wrappers), which measured ~75% of the
client's CPU at high concurrency (benchmarks/RESULTS.md); the SDK stays as ``transport="sdk"``
for endpoints that need its behaviour.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

import aiohttp
import openai
from aiohttp import ClientRequest
from aiohttp.typedefs import LooseHeaders

from pairwise_polars.engine._base_url import api_url
from pairwise_polars.engine._bounds import CONNECT_TIMEOUT, MAX_RESPONSE_BYTES, read_capped
from pairwise_polars.engine._failures import (
    FailureError,
    status_failure,
    transport_failure,
)

TransportName = Literal["fast", "sdk"]
TRANSPORTS: tuple[TransportName, ...] = ("fast", "sdk")
NOT_JSON = "the reply is not JSON"
KEEPALIVE_S = 5.0  # the SDK's (httpx's) keep-alive expiry

try:  # the SDK's own HTTP library (httpx2 in openai 3.x, httpx before)
    import httpx2 as httpx
except ImportError:  # pragma: no cover - older SDKs
    import httpx  # type: ignore[no-redef]

Timeout = httpx.Timeout


class Transport(Protocol):
    """Posts one chat-completion body; returns the decoded JSON reply or raises FailureError."""

    async def post(self, body: dict[str, Any]) -> Any: ...

    async def aclose(self) -> None: ...


def wire_headers(headers: Mapping[str, str], timeout: float) -> dict[str, str]:
    """The SDK's headers as its HTTP layer puts them on the wire, in the same order and case:
    its transport's ``Accept-Encoding`` and ``Connection`` first, ``x-stainless-*`` in lower
    case, then what it adds per request (its retry count: 0, our retries are new requests)."""
    sent = {"Accept-Encoding": "gzip, deflate", "Connection": "keep-alive"}
    for name, value in headers.items():
        sent[name.lower() if name.lower().startswith("x-stainless-") else name] = value
    sent["x-stainless-retry-count"] = "0"
    sent["x-stainless-read-timeout"] = str(timeout)
    return sent


def unsent_http_client() -> openai.DefaultAsyncHttpxClient:
    """An HTTP client for an SDK client that is only read (its headers), never used to send:
    its transport cannot send, so no connection pool, SSL context or HTTP library is set up."""
    return openai.DefaultAsyncHttpxClient(transport=httpx.AsyncBaseTransport())


def env_proxy(url: str) -> str | None:
    """The proxy the environment names for ``url`` (``HTTPS_PROXY``/``HTTP_PROXY``, unless
    ``NO_PROXY`` covers its host), or None."""
    parts = urlsplit(url)
    if parts.hostname is None or proxy_bypass(parts.hostname):
        return None
    return getproxies().get(parts.scheme)


def encode(body: dict[str, Any]) -> bytes:
    """The body as the SDK puts it on the wire: compact JSON, non-ASCII kept as UTF-8."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


_SPACED = (b'"}, {"role": "', b'{"role": "', b'", "content": "')
_COMPACT = (b'"},{"role":"', b'{"role":"', b'","content":"')


def compact_chat(messages: str | bytes) -> bytes | None:
    """Chat messages as a rendered metric stores them (``json.dumps`` of ``[{"role": ...,
    "content": ...}]``, default separators; the text or its UTF-8 bytes) in the compact form
    :func:`encode` writes, as UTF-8, without decoding them; None when they are not of that
    shape.

    Exact because a ``"`` inside an encoded string is always escaped (a backslash before it),
    so the spaced separators, each holding a ``"`` after a space or a brace, occur only between
    values. Worked on the UTF-8 bytes: their searches and replacements measured faster than
    the string's, encoding included. Each separator is split on and joined compact, one pass
    each; the parts count the separators: one turn opens the chat, each further turn follows
    a turn's end, and every turn has its content.

    >>> compact_chat('[{"role": "user", "content": "Hi, there: you"}]')
    b'[{"role":"user","content":"Hi, there: you"}]'
    """
    data = messages if isinstance(messages, bytes) else messages.encode()
    if not (data.startswith(b'[{"role": "') and data.endswith(b'"}]')):
        return None
    between = data.split(_SPACED[0])  # the turns' ends followed by another turn
    first = _COMPACT[0].join(between).split(_SPACED[1])  # the turn that opens the chat
    contents = _COMPACT[1].join(first).split(_SPACED[2])
    if len(first) != 2 or len(contents) != len(between) + 1:
        return None
    return _COMPACT[2].join(contents)


@lru_cache(maxsize=8)
def _ssl_context(_cert_file: str | None, _cert_dir: str | None) -> Any:
    # Loading the certificates measured ~30 ms: once per process (and certificate settings).
    return httpx.create_ssl_context()


def ssl_for(url: str, proxy: str | None) -> Any:
    """The SDK's SSL context (its certificates, ``SSL_CERT_FILE``/``SSL_CERT_DIR``), built once
    per process; none is built for a plain ``http://`` endpoint without an HTTPS proxy."""
    if not url.startswith("https:") and not (proxy or "").startswith("https:"):
        return True  # aiohttp's own default, built at import: nothing to load here
    return _ssl_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


class WireTransport:
    """The fast path: one aiohttp session, ``limit`` connections kept alive, posting to
    ``url + path`` (another API's path, e.g. Anthropic's Messages, in ``path``)."""

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str],
        *,
        timeout: float,
        limit: int,
        secrets: tuple[str | None, ...],
        connect_timeout: float = CONNECT_TIMEOUT,
        max_bytes: int = MAX_RESPONSE_BYTES,
        path: str = "/chat/completions",
    ) -> None:
        self._url = api_url(url, path)
        self._max_bytes = max_bytes
        # HTTP(S)_PROXY and NO_PROXY, as the SDK honours them, read once: aiohttp's trust_env
        # would read them (and ~/.netrc) on a worker thread for every request.
        self._proxy = env_proxy(self._url)
        self._timeout = timeout
        self._secrets = secrets
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(
                limit=limit,
                keepalive_timeout=KEEPALIVE_S,
                ssl=ssl_for(self._url, self._proxy),
            ),
            # total: connect to last byte (a dripping server is cut off, not waited on per read);
            # it bounds the whole attempt, so the engine adds no timer (nor task) of its own.
            # No per-read or pool timer: equal to total, they could never fire first, and each
            # costs a timer per request (re-armed on every chunk read).
            timeout=aiohttp.ClientTimeout(total=timeout, sock_connect=connect_timeout),
            # Session headers: aiohttp copies them per request in one step (per-request headers
            # are merged one by one). They hold the SDK's User-Agent, so aiohttp adds none of its
            # own; telling it to skip one anyway costs three header copies a request.
            headers=dict(headers),
            skip_auto_headers=None if _has(headers, "user-agent") else ("User-Agent",),
            request_class=ClientRequest if _has(headers, "host") else _HeadersAtOnce,
        )

    async def post(self, body: dict[str, Any]) -> Any:
        return await self.post_bytes(encode(body))

    async def post_bytes(self, data: bytes) -> Any:
        """Post a body already encoded (:func:`encode`'s bytes); the decoded JSON reply."""
        try:
            async with self._session.post(
                self._url, data=data, allow_redirects=False, proxy=self._proxy
            ) as response:
                status, headers = response.status, response.headers
                declared = None if "Content-Encoding" in headers else headers.get("Content-Length")
                if declared is not None and declared.isdigit() and int(declared) <= self._max_bytes:
                    raw = await response.read()  # aiohttp reads exactly the declared length
                else:
                    raw = await read_capped(
                        response.content.iter_chunked(2**16), self._max_bytes, declared
                    )
        except FailureError:
            raise
        except Exception as exc:  # aiohttp's errors and timeouts: no HTTP answer
            raise FailureError(transport_failure(exc, self._timeout)) from None
        if status >= 300:
            raise FailureError(status_failure(status, headers, raw, self._secrets))
        return _json(raw, 200, {}, self._secrets)

    async def aclose(self) -> None:
        await self._session.close()


def _has(headers: Mapping[str, str], name: str) -> bool:
    return any(given.lower() == name for given in headers)


class _HeadersAtOnce(ClientRequest):
    """aiohttp's request, with the session's headers (the SDK's 15) put after its ``Host`` in
    one step: aiohttp adds them one by one per request (~12 us a request in a sampled profile
    of the map at 64 in flight, against ~3 us of the bare loop's 2). The same headers in the
    same order, hence the same bytes; only for headers without a ``Host`` of their own, which
    aiohttp would put in its place instead."""

    def update_headers(self, headers: LooseHeaders | None) -> None:
        super().update_headers(None)  # the Host header alone
        if headers:
            self.headers.extend(headers)


class SdkTransport:
    """The openai SDK's ``client.post`` on its aiohttp transport (no SDK retries: ours count)."""

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        *,
        timeout: float,
        secrets: tuple[str | None, ...],
        max_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        self._client = client
        self._timeout = timeout
        self._secrets = secrets
        self._max_bytes = max_bytes

    @staticmethod
    def http_client(
        limit: int, timeout: float, connect_timeout: float = CONNECT_TIMEOUT
    ) -> openai.DefaultAioHttpClient:
        # The aiohttp transport measured ~2x the default transport's throughput at high
        # concurrency; keep a connection alive per concurrent request.
        limits = httpx.Limits(max_connections=limit, max_keepalive_connections=limit)
        return openai.DefaultAioHttpClient(
            limits=limits, timeout=Timeout(timeout, connect=connect_timeout)
        )

    async def post(self, body: dict[str, Any]) -> Any:
        try:
            # The documented low-level call with the body we built: the typed helper
            # (chat.completions.create) re-walks every message's type annotations per request.
            # Streamed: the body is read here, within max_response_bytes.
            streamed = await self._client.post(
                "/chat/completions", body=body, cast_to=httpx.Response, stream=True
            )
            try:
                encoded = "content-encoding" in streamed.headers
                declared = None if encoded else streamed.headers.get("Content-Length")
                raw = await read_capped(streamed.aiter_bytes(), self._max_bytes, declared)
            finally:
                await streamed.aclose()
            return json.loads(raw)
        except FailureError as exc:
            failure = exc.failure
        except openai.APIStatusError as exc:
            response = exc.response
            failure = status_failure(
                response.status_code, response.headers, response.content, self._secrets
            )
        # timeouts, dropped and refused connections
        except (openai.APIConnectionError, httpx.TransportError) as exc:
            failure = transport_failure(exc, self._timeout)
        except ValueError:  # a 2xx whose body is not JSON
            failure = status_failure(200, {}, NOT_JSON, self._secrets)
        # Raised outside the handler: the SDK's exception (which holds the request and its
        # headers, hence the key) is neither kept nor chained.
        raise FailureError(failure)

    async def aclose(self) -> None:
        await self._client.close()


def _json(
    raw: bytes, status: int, headers: Mapping[str, str], secrets: tuple[str | None, ...]
) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        pass
    raise FailureError(status_failure(status, headers, NOT_JSON, secrets))
