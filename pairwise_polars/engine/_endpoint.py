"""The async chat engine shared by the judge and by response collection.

A pool of ``max_concurrency`` worker coroutines (no task per row) sends chat requests over a
transport (the fast aiohttp path, or the ``openai`` SDK: ``engine/_wire.py``), within optional
request/token rate limits, retrying 429/5xx/timeouts/dropped connections with backoff that
honours ``Retry-After`` up to ``max_retry_wait``, and stopping the whole run on errors no retry
can fix, on a server that is not there, and on a run whose first attempts all fail on the wire.
What a request's body is and what counts as a good reply (the decoded JSON chat completion) are
the caller's: subclasses implement ``_body`` and ``_accept``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from collections.abc import AsyncGenerator, Iterable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar, cast

import openai

from pairwise_polars._errors import Fix, JudgeError, OptionError
from pairwise_polars.engine._base_url import (
    OPENAI_API,
    endpoint_id,
    needs_key,
    resolve_base_url,
    shown_url,
    split_query,
    url_secrets,
)
from pairwise_polars.engine._bounds import (
    CONNECT_TIMEOUT,
    MAX_RESPONSE_BYTES,
    check_bounds,
    within,
)
from pairwise_polars.engine._failures import UNREACHABLE, Failure, RequestFailed, redact, scrub_row
from pairwise_polars.engine._limits import SHARED_LIMITS, RateLimiter, Slots
from pairwise_polars.engine._pacing import Pacer
from pairwise_polars.engine._retries import (
    FAIL_FAST_AFTER,
    RowError,
    Stop,
    WaitTooLong,
    backoff,
    classify,
)
from pairwise_polars.engine._run_state import RunState
from pairwise_polars.engine._wire import (
    TRANSPORTS,
    SdkTransport,
    Timeout,
    Transport,
    TransportName,
    WireTransport,
    wire_headers,
)


def failure(key: str, error: str, attempts: int, latency: float, **extra: Any) -> dict[str, Any]:
    """A result row for a request that failed: the error set, no answer."""
    return {"key": key, "error": error, "attempts": attempts, "latency_s": latency, **extra}


@dataclass(frozen=True, repr=False)
class Endpoint:
    """An OpenAI-compatible API: the model, where it is, and the key. Holds the key and client
    code every judge and target shares: the base URL from ``base_url`` or ``OPENAI_BASE_URL``,
    the key from ``api_key`` or ``OPENAI_API_KEY`` (required for OpenAI's own API only), a
    clear error when it is missing, and a repr that never shows it."""

    model: str
    _: KW_ONLY
    base_url: str | None = None
    api_key: str | None = field(default=None, compare=False)
    organization: str | None = None
    """Sent as ``OpenAI-Organization`` (default: ``OPENAI_ORG_ID``)."""
    project: str | None = None
    """Sent as ``OpenAI-Project`` (default: ``OPENAI_PROJECT_ID``)."""
    default_headers: Mapping[str, str] | None = field(default=None, compare=False, hash=False)
    """Headers sent with every request, after (so overriding) the auth and organization ones;
    never shown in a repr nor part of a cache key (they may carry credentials)."""

    _repr_fields: ClassVar[tuple[str, ...]] = ()
    """Settings shown in the repr after the model, the URL and the masked key."""
    _key_env: ClassVar[str] = "OPENAI_API_KEY"
    """The environment variable the key comes from (another provider's judge names its own)."""
    _url_env: ClassVar[str] = "OPENAI_BASE_URL"

    def __repr__(self) -> str:
        key = None if self._key() is None else "'***'"
        base_url = None if self.base_url is None else shown_url(self.base_url)
        shown = "".join(f", {name}={_shown(getattr(self, name))}" for name in self._repr_fields)
        return (
            f"{type(self).__name__}(model={self.model!r}, base_url={base_url!r}, "
            f"api_key={key}{shown})"
        )

    def _key(self) -> str | None:
        return self.api_key or os.environ.get(self._key_env)

    def _where(self) -> str:
        """The endpoint as messages name it (credentials in its URL masked)."""
        url = self._base_url()
        return "the OpenAI API" if url == OPENAI_API else shown_url(url)

    def _secrets(self) -> tuple[str, ...]:
        """What must never be written anywhere: the key and the credentials in the URL."""
        key = self._key()
        return (*((key,) if key else ()), *url_secrets(self._base_url()))

    def _base_url(self) -> str:
        """The base URL requests go to, without a trailing slash: ``base_url``, else
        ``OPENAI_BASE_URL``, else OpenAI's API."""
        return resolve_base_url(self.base_url)

    def _headers(self) -> dict[str, str]:
        """The headers every request carries besides the SDK's own: ``Authorization: Bearer
        KEY`` when there is a key (no auth header without one: local servers accept that),
        ``OpenAI-Organization`` / ``OpenAI-Project`` when set, then ``default_headers``."""
        key = self._key()
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        organization = self.organization or os.environ.get("OPENAI_ORG_ID")
        project = self.project or os.environ.get("OPENAI_PROJECT_ID")
        if organization:
            headers["OpenAI-Organization"] = organization
        if project:
            headers["OpenAI-Project"] = project
        extra = dict(self.default_headers or {})
        overridden = {name.lower() for name in extra}
        return {n: v for n, v in headers.items() if n.lower() not in overridden} | extra

    def _scope(self) -> str:
        """The endpoint's URL: what identifies state kept about it (e.g. batch ids)."""
        return self._base_url()

    def _endpoint_id(self) -> str:
        """The endpoint in cache keys: scheme, host, port and path (never a key or a query)."""
        return endpoint_id(self._base_url())

    def _check_key(self) -> None:
        """A key is needed for OpenAI's API only; other servers decide for themselves."""
        if self._key() is not None or not needs_key(self._base_url()):
            return
        name = type(self).__name__
        raise JudgeError(
            f"No API key for {name}: set the {self._key_env} environment variable or pass "
            f"{name}(model, api_key=...). For a local server (vLLM, Ollama, llama.cpp) pass "
            f"base_url=... or set {self._url_env}; no key is needed then.",
            detail=f"No API key for the model {self.model!r}.",
            fixes=[Fix("api_key", {"api_key": self._key_env, "base_url": "URL"})],
        )

    def _sdk_headers(self) -> dict[str, str]:
        """The headers the SDK sends with a request to this endpoint (auth when there is a key,
        content type, its User-Agent and ``X-Stainless-*``/``OpenAI-*`` headers, then
        :meth:`_headers`), read off an SDK client built from the same settings, so both
        transports send the same; built once per process and settings (a client costs ~0.1 s).
        """
        settings = json.dumps([type(self).__qualname__, self._base_url(), self._headers()])
        digest = hashlib.sha256(settings.encode()).hexdigest()  # the key is not kept as such
        if digest not in _SDK_HEADERS:
            client = self._client()
            sent = {**client.auth_headers, **client.default_headers}
            _SDK_HEADERS[digest] = {
                name: value
                for name, value in sent.items()
                if isinstance(value, str)
                and not (name == "Authorization" and value == _NO_KEY_AUTH)
            }
        return dict(_SDK_HEADERS[digest])

    def _client(self, **options: Any) -> openai.AsyncOpenAI:
        """An SDK client for this endpoint, built from :meth:`_base_url` and :meth:`_headers`;
        ``options`` go to ``openai.AsyncOpenAI``. Without a key none is sent: the SDK insists
        on one, so it gets a placeholder that its HTTP client removes from every request."""
        self._check_key()
        headers = self._headers()
        key = self._key()
        if key is None:
            http_client = options.pop("http_client", None) or openai.DefaultAsyncHttpxClient()
            hooks = http_client.event_hooks
            http_client.event_hooks = {**hooks, "request": [*hooks["request"], _drop_placeholder]}
            options["http_client"] = http_client
        base_url, query = split_query(self._base_url())
        if query:  # the SDK would glue the path after the query
            options["default_query"] = {**query, **options.get("default_query", {})}
        return openai.AsyncOpenAI(
            api_key=key or _NO_KEY,
            base_url=base_url,
            default_headers=headers,
            **options,
        )


_SDK_HEADERS: dict[str, dict[str, str]] = {}
_NO_KEY = "pairwise-polars-no-key"
_NO_KEY_AUTH = f"Bearer {_NO_KEY}"


async def _drop_placeholder(request: Any) -> None:
    """An HTTP client hook: no ``Authorization`` header rather than a made-up key."""
    if request.headers.get("Authorization") == _NO_KEY_AUTH:
        del request.headers["Authorization"]


def _shown(value: Any) -> str:
    return repr(value if value is None or isinstance(value, (int, float)) else str(value))


@dataclass(frozen=True, repr=False)
class ChatEndpoint(Endpoint):
    """An endpoint called through the chat engine: concurrency, rate limits and retries."""

    _: KW_ONLY
    max_concurrency: int = 32
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    max_retries: int = 6
    timeout: float = 60.0
    max_tokens: int = 300
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    max_retry_wait: float = 60.0
    transport: TransportName = "fast"
    connect_timeout: float = CONNECT_TIMEOUT
    max_response_bytes: int = MAX_RESPONSE_BYTES

    _repr_fields: ClassVar[tuple[str, ...]] = ("max_concurrency",)
    _lazy_chat: ClassVar[bool] = False
    """True: ``_accept`` may be given the chat still JSON-encoded (a str) and decodes it only
    when it needs it (a re-ask), so a good reply costs no decode of the request."""

    def __post_init__(self) -> None:
        check_bounds(
            max_concurrency=self.max_concurrency,
            connect_timeout=self.connect_timeout,
            max_response_bytes=self.max_response_bytes,
        )
        if not self.max_retry_wait >= 0:  # NaN too
            raise OptionError(
                f"max_retry_wait must be a number of seconds >= 0, got {self.max_retry_wait!r}."
            )
        if self.transport not in TRANSPORTS:
            raise OptionError(
                f"transport must be one of {', '.join(map(repr, TRANSPORTS))}, got "
                f"{self.transport!r}: 'fast' (the default) posts over aiohttp directly, 'sdk' "
                "through the openai SDK."
            )

    # -- hooks ------------------------------------------------------------------------------
    def _body(self, chat: list[dict[str, str]], extra: Any, state: RunState) -> dict[str, Any]:
        raise NotImplementedError

    def _accept(
        self, key: str, response: Any, chat: list[dict[str, str]], extra: Any, attempt: int
    ) -> dict[str, Any] | list[dict[str, str]]:
        """A result row, or a new chat to send instead (a re-ask)."""
        raise NotImplementedError

    def _encoded(self, messages: str, extra: Any, state: RunState) -> bytes | None:
        """The first attempt's body as the fast transport posts it, built without decoding
        ``messages``; None: build it from the decoded chat with :meth:`_body`."""
        return None

    # -- the engine -------------------------------------------------------------------------
    def _transport(self) -> Transport:
        secrets = self._secrets()
        if self.transport == "sdk":
            client = self._client(
                max_retries=0,  # retries are ours: we classify errors and count attempts
                timeout=Timeout(self.timeout, connect=self.connect_timeout),
                http_client=SdkTransport.http_client(
                    self.max_concurrency, self.timeout, self.connect_timeout
                ),
            )
            return SdkTransport(
                client, timeout=self.timeout, secrets=secrets, max_bytes=self.max_response_bytes
            )
        headers = wire_headers(self._sdk_headers(), self.timeout)
        return WireTransport(
            self._base_url(),
            headers,
            timeout=self.timeout,
            limit=self.max_concurrency,
            secrets=secrets,
            connect_timeout=self.connect_timeout,
            max_bytes=self.max_response_bytes,
        )

    async def _stream(
        self, items: Iterable[tuple[str, str, Any]], *, structured: bool = False
    ) -> AsyncGenerator[list[dict[str, Any]], None]:
        """Send ``(key, chat_json, extra)`` items; yield lists of result rows as they finish.

        Everything finished is yielded before a fatal error is raised as JudgeError. A slot is
        freed only when the caller has taken a result (and stored it), so requests sent but not
        yet stored never exceed ``max_concurrency``: after a crash, at most that many repeat."""
        rows = iter(items)
        slots = Slots(self.max_concurrency)
        done: asyncio.Queue[dict[str, Any] | BaseException] = asyncio.Queue()
        shared = SHARED_LIMITS.get()
        state = RunState(
            structured=structured,
            rpm=RateLimiter(self.requests_per_minute) if self.requests_per_minute else None,
            tpm=RateLimiter(self.tokens_per_minute) if self.tokens_per_minute else None,
            secrets=self._secrets(),
            pacer=Pacer(self.max_retry_wait),
        )
        if shared is not None:  # a runner's limits, shared with its other workers
            state.rpm, state.tpm = shared
        client = self._transport()
        try:

            async def worker() -> None:
                while True:
                    await slots.acquire()
                    item = None if state.stopped else next(rows, None)
                    if item is None:
                        slots.release()
                        return
                    key, messages, extra = item
                    try:
                        done.put_nowait(await self._one(client, state, key, messages, extra))
                    except Stop as stop:
                        state.stopped = True
                        done.put_nowait(JudgeError(str(stop), detail=stop.detail, fixes=stop.fixes))
                        return
                    except Exception as exc:  # a bug must not lose the other rows
                        error = redact(f"{type(exc).__name__}: {exc}", state.secrets)
                        done.put_nowait(failure(key, error, 1, 0.0))

            workers = [asyncio.create_task(worker()) for _ in range(self.max_concurrency)]
            finished = asyncio.ensure_future(asyncio.gather(*workers))
            try:
                fatal: BaseException | None = None
                while not (finished.done() and done.empty()):
                    getter = asyncio.ensure_future(done.get())
                    await asyncio.wait({getter, finished}, return_when=asyncio.FIRST_COMPLETED)
                    if not getter.done():
                        getter.cancel()
                        continue
                    batch = [getter.result()]
                    while not done.empty():  # drain: one batch for everything that is ready
                        batch.append(done.get_nowait())
                    fatal = fatal or next((b for b in batch if isinstance(b, BaseException)), None)
                    results = [b for b in batch if not isinstance(b, BaseException)]
                    if results:
                        yield results
                    for _ in batch:  # taken (and stored) by the caller: their slots are free
                        slots.release()
                if fatal is not None:
                    raise fatal
            finally:
                for task in workers:
                    task.cancel()
                await asyncio.gather(finished, return_exceptions=True)
        finally:
            await client.aclose()

    async def _one(
        self, client: Transport, state: RunState, key: str, messages: str, extra: Any
    ) -> dict[str, Any]:
        chat: list[dict[str, str]] | None = None  # decoded only when a body needs it
        fast = isinstance(client, WireTransport)
        started = time.perf_counter()
        attempts = retries = 0
        while True:
            attempts += 1
            await state.throttle(len(messages) // 4 + self.max_tokens)
            data = self._encoded(messages, extra, state) if fast and chat is None else None
            if data is None:
                decoded: list[dict[str, str]] = json.loads(messages) if chat is None else chat
                body = self._body(decoded, extra, state)
                chat = decoded
                structured = "response_format" in body
                sending = client.post(body)
            else:  # an encoded string holds no bare quote: only the body's own key matches
                structured = b'"response_format":' in data
                sending = cast(WireTransport, client).post_bytes(data)
            try:
                reply = await within(sending, self.timeout)
            except RequestFailed as failed:
                if state.pacer is not None:
                    state.pacer.observe(failed.failure.headers)
                try:
                    delay = self._decide(failed.failure, state, structured=structured)
                except RowError as row:
                    return failure(
                        key,
                        str(row),
                        attempts,
                        time.perf_counter() - started,
                        judge_model=self.model,
                    )
                if delay == 0.0 and structured:
                    state.structured = False  # plain JSON prompting from now on
                last_error = failed.failure.describe()
            else:
                state.answered += 1
                if chat is None and not self._lazy_chat:
                    chat = json.loads(messages)
                outcome = self._accept(key, reply, cast(Any, chat or messages), extra, attempts)
                if isinstance(outcome, list):  # re-ask with this chat
                    chat = outcome
                    continue
                outcome["latency_s"] = time.perf_counter() - started
                scrub_row(outcome, state.secrets)
                return outcome
            if delay == 0.0:  # a fallback that changes the request: retry at once, for free
                attempts -= 1
                continue
            retries += 1
            if retries > self.max_retries:
                return failure(
                    key,
                    f"{last_error} (gave up after {attempts} attempts)",
                    attempts,
                    time.perf_counter() - started,
                    judge_model=self.model,
                )
            pause = (
                backoff(retries, self.backoff_base, self.backoff_max) if delay is None else delay
            )
            await asyncio.sleep(pause)

    def _decide(self, problem: Failure, state: RunState, *, structured: bool) -> float | None:
        """``classify`` plus failing fast: before any reply, a server that is not there stops
        the run at once, and so do FAIL_FAST_AFTER attempts lost on the wire or to waits
        beyond ``max_retry_wait``."""
        url = shown_url(self._base_url())
        if problem.transport in UNREACHABLE and not state.answered:
            raise Stop(
                f"Cannot reach the server at {url}: {problem.message}. Check that it is "
                f"running and that base_url (or {self._url_env}) names it, host and port; "
                "results so far are cached.",
                detail=f"Cannot reach the server at {url}: {problem.message}.",
                fixes=(Fix("base_url", {"base_url": url, "env": self._url_env}),),
            )
        try:
            delay = classify(
                problem,
                where=self._where(),
                model=self.model,
                structured=structured,
                max_retry_wait=self.max_retry_wait,
                key_env=self._key_env,
            )
        except WaitTooLong as wait:
            self._count_unusable(state, url, str(wait))
            raise
        if problem.transport is not None:
            self._count_unusable(state, url, problem.describe())
        return delay

    def _count_unusable(self, state: RunState, url: str, what: str) -> None:
        if state.answered:
            return
        state.unusable += 1
        if state.unusable >= FAIL_FAST_AFTER:
            raise Stop(
                f"The first {FAIL_FAST_AFTER} attempts at {url} all failed and none was "
                f"answered (the last: {what}). Check that the server at {url} is up and "
                f"answers chat completions, the timeout ({self.timeout:g} s) and "
                "max_retry_wait; results so far are cached."
            )
