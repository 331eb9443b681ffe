"""The async chat engine shared by the judge and by response collection.

A pool of ``max_concurrency`` worker coroutines (no task per row) sends chat requests over a
transport (the fast aiohttp path, or the ``openai`` SDK: ``engine/_wire.py``), within optional
request/token rate limits, retrying 429/5xx/timeouts/dropped connections with backoff that
honours ``Retry-After`` up to ``max_retry_wait``, and stopping the whole run on errors no retry
can fix, on a server that is not there, and on a run whose first attempts all fail on the wire.
What a request carries (its :class:`~pairwise_polars.engine._request.Request` type), what its
body is and what counts as a good reply (the decoded JSON chat completion) are the caller's:
subclasses implement ``_body`` and ``_accept``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncGenerator, Awaitable, Iterable, Iterator
from dataclasses import KW_ONLY, dataclass
from typing import Any, ClassVar, Generic, TypeVar, cast

from pairwise_polars._errors import Fix, JudgeError, OptionError
from pairwise_polars.engine._api import Endpoint
from pairwise_polars.engine._base_url import has_credentials, shown_url
from pairwise_polars.engine._bounds import (
    CONNECT_TIMEOUT,
    MAX_RESPONSE_BYTES,
    check_bounds,
    within,
)
from pairwise_polars.engine._failures import (
    UNREACHABLE,
    Failure,
    FailureError,
    failure_row,
    redact,
    scrub_row,
)
from pairwise_polars.engine._heap import settled_heap
from pairwise_polars.engine._limits import SHARED_LIMITS, Handoff, RateLimiter, Slots
from pairwise_polars.engine._pacing import Pacer
from pairwise_polars.engine._request import Request
from pairwise_polars.engine._retries import (
    FAIL_FAST_AFTER,
    Retry,
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

__all__ = ["ChatEndpoint", "Endpoint", "Request", "RunState", "failure_row"]

R = TypeVar("R", bound=Request)
Done = dict[str, Any] | BaseException
"""What a worker hands back: a result row, or the error that stops the run."""


@dataclass(frozen=True, repr=False)
class ChatEndpoint(Endpoint, Generic[R]):
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
    def _body(self, chat: list[dict[str, str]], request: R, state: RunState) -> dict[str, Any]:
        raise NotImplementedError

    def _accept(
        self, request: R, response: Any, chat: list[dict[str, str]], attempt: int
    ) -> dict[str, Any] | list[dict[str, str]]:
        """A result row, or a new chat to send instead (a re-ask)."""
        raise NotImplementedError

    def _encoded(self, request: R, state: RunState) -> bytes | None:
        """The first attempt's body as the fast transport posts it, built without decoding
        ``request.messages``; None: build it from the decoded chat with :meth:`_body`."""
        return None

    # -- the engine -------------------------------------------------------------------------
    def _transport(self) -> Transport:
        self._check_url_credentials()
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

    def _check_url_credentials(self) -> None:
        """Refuse a base URL's user name and password where they cannot be sent: beside the
        key's ``Authorization`` header (HTTP carries one), or on the SDK transport, which does
        not send them. Either way every request would fail as a misleading connection error."""
        url = self._base_url()
        if not has_credentials(url) or not (self.transport == "sdk" or self._key()):
            return
        why = (
            "the 'sdk' transport does not send"
            if self.transport == "sdk"
            else "cannot be sent beside the key's Authorization header (a request carries one)"
        )
        raise OptionError(
            f"base_url {shown_url(url)} carries a user name and password, which {why}. Drop "
            "them from the URL and pass the key as api_key (or its environment variable); a "
            "gateway's own key can go in the URL's query (?api-key=...) or in default_headers."
        )

    def _run_state(self, structured: bool) -> RunState:
        state = RunState(
            structured=structured,
            rpm=RateLimiter(self.requests_per_minute) if self.requests_per_minute else None,
            tpm=RateLimiter(self.tokens_per_minute) if self.tokens_per_minute else None,
            secrets=self._secrets(),
            pacer=Pacer(self.max_retry_wait),
        )
        shared = SHARED_LIMITS.get()
        if shared is not None:  # a runner's limits, shared with its other workers
            state.rpm, state.tpm = shared
        return state

    async def _stream(
        self, items: Iterable[R], *, structured: bool = False
    ) -> AsyncGenerator[list[dict[str, Any]], None]:
        """Send the requests; yield lists of result rows as they finish.

        Everything finished is yielded before a fatal error is raised as JudgeError. A slot is
        freed only when the caller has taken a result (and stored it), so requests sent but not
        yet stored never exceed ``max_concurrency``: after a crash, at most that many repeat."""
        requests = iter(items)
        slots = Slots(self.max_concurrency)
        handoff: Handoff[Done] = Handoff()
        state = self._run_state(structured)
        client = self._transport()
        try:
            workers = [
                asyncio.create_task(self._work(client, state, requests, slots, handoff))
                for _ in range(self.max_concurrency)
            ]
            finished = asyncio.ensure_future(asyncio.gather(*workers))
            finished.add_done_callback(lambda _: handoff.close())
            try:
                with settled_heap():
                    fatal: BaseException | None = None
                    while batch := await handoff.take():
                        fatal = fatal or next(
                            (b for b in batch if isinstance(b, BaseException)), None
                        )
                        results = [b for b in batch if not isinstance(b, BaseException)]
                        if results:
                            yield results
                        for _ in batch:  # taken (and stored) by the caller: slots are free
                            slots.release()
                    if fatal is not None:
                        raise fatal
            finally:
                for task in workers:
                    task.cancel()
                await asyncio.gather(finished, return_exceptions=True)
        finally:
            await client.aclose()

    async def _work(
        self,
        client: Transport,
        state: RunState,
        requests: Iterator[R],
        slots: Slots,
        handoff: Handoff[Done],
    ) -> None:
        """One worker: take a slot, send the next request, hand its row over; until none is
        left or the run stopped."""
        while True:
            await slots.acquire()
            request = None if state.stopped else next(requests, None)
            if request is None:
                slots.release()
                return
            try:
                handoff.put(await self._one(client, state, request))
            except Stop as stop:
                state.stopped = True
                handoff.put(JudgeError(str(stop), detail=stop.detail, fixes=stop.fixes))
                return
            except Exception as exc:  # a bug must not lose the other rows
                error = redact(f"{type(exc).__name__}: {exc}", state.secrets)
                handoff.put(failure_row(request.key, error, 1, 0.0))

    async def _one(self, client: Transport, state: RunState, request: R) -> dict[str, Any]:
        """Send one request until it is answered, fails for good, or stops the run. A re-ask
        and a retry are attempts; resending without structured output is the same attempt."""
        chat: list[dict[str, str]] | None = None  # decoded only when a body needs it
        started = time.perf_counter()
        attempts, retries = 1, 0
        while True:
            if state.limited():  # a coroutine less per attempt when nothing limits the run
                await state.throttle(len(request.messages) // 4 + self.max_tokens)
            sending, structured, chat = self._sending(client, state, request, chat)
            try:
                reply = await sending
            except FailureError as failed:
                if state.pacer is not None:  # a provider's spent budget pauses every worker
                    state.pacer.observe(failed.failure.headers)
                try:
                    retry = self._decide(failed.failure, state, structured=structured)
                except RowError as row:
                    return self._failed(request, str(row), attempts, started)
                if retry.plain_json:
                    state.structured = False  # plain JSON prompting from now on
                    continue
                retries += 1
                if retries > self.max_retries:
                    error = f"{failed.failure.describe()} (gave up after {attempts} attempts)"
                    return self._failed(request, error, attempts, started)
                wait = retry.wait
                await asyncio.sleep(
                    backoff(retries, self.backoff_base, self.backoff_max) if wait is None else wait
                )
                attempts += 1
                continue
            state.answered += 1
            if chat is None and not self._lazy_chat:
                chat = json.loads(request.messages)
            outcome = self._accept(request, reply, cast(Any, chat or request.messages), attempts)
            if isinstance(outcome, list):  # re-ask with this chat
                chat = outcome
                attempts += 1
                continue
            outcome["latency_s"] = time.perf_counter() - started
            scrub_row(outcome, state.secrets)
            return outcome

    def _sending(
        self,
        client: Transport,
        state: RunState,
        request: R,
        chat: list[dict[str, str]] | None,
    ) -> tuple[Awaitable[Any], bool, list[dict[str, str]] | None]:
        """The attempt's post (not yet awaited), whether it asks for structured output, and the
        chat (decoded now if the body needed it). The fast transport's own total timeout bounds
        its post; the SDK's is bounded here."""
        if isinstance(client, WireTransport):
            data = self._encoded(request, state) if chat is None else None
            if data is not None:  # an encoded string holds no bare quote: only the body's key
                # Searched from the end, where the key follows the messages: 1.2 -> 0.16 us on
                # the bench's ~3.6 KB bodies (a body without it is read through either way).
                return client.post_bytes(data), data.rfind(b'"response_format":') >= 0, None
        decoded: list[dict[str, str]] = json.loads(request.messages) if chat is None else chat
        body = self._body(decoded, request, state)
        sending = client.post(body)
        if not isinstance(client, WireTransport):
            sending = within(sending, self.timeout)
        return sending, "response_format" in body, decoded

    def _failed(self, request: R, error: str, attempts: int, started: float) -> dict[str, Any]:
        latency = time.perf_counter() - started
        return failure_row(request.key, error, attempts, latency, judge_model=self.model)

    def _decide(self, problem: Failure, state: RunState, *, structured: bool) -> Retry:
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
