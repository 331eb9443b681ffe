"""The async chat engine shared by the judge and by response collection.

A pool of ``max_concurrency`` worker coroutines (no task per row) sends chat requests through the
``openai`` SDK on its aiohttp transport, within optional request/token rate limits, retrying
429/5xx/timeouts/dropped connections with backoff that honours ``Retry-After``, and stopping the
whole run on errors no retry can fix. What a request's body is and what counts as a good reply
are the caller's: subclasses implement ``_body`` and ``_accept``.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar

import openai
from openai.types.chat import ChatCompletion

from pairwise_polars._errors import Fix, JudgeError, OptionError
from pairwise_polars.engine._limits import SHARED_LIMITS, Limiter, RateLimiter
from pairwise_polars.engine._retries import RowError, Stop, backoff, classify, describe

try:  # the SDK's own HTTP library (httpx2 in openai 3.x, httpx before)
    from httpx2 import Limits
except ImportError:  # pragma: no cover - older SDKs
    from httpx import Limits  # type: ignore[no-redef]


@dataclass
class RunState:
    """What one run's workers share: rate limiters, the structured-output switch, the stop flag."""

    structured: bool
    rpm: Limiter | None
    tpm: Limiter | None
    stopped: bool = False

    async def throttle(self, tokens: int) -> None:
        if self.rpm is not None:
            await self.rpm.acquire()
        if self.tpm is not None:
            await self.tpm.acquire(tokens)


def failure(key: str, error: str, attempts: int, latency: float, **extra: Any) -> dict[str, Any]:
    """A result row for a request that failed: the error set, no answer."""
    return {"key": key, "error": error, "attempts": attempts, "latency_s": latency, **extra}


@dataclass(frozen=True, repr=False)
class Endpoint:
    """An OpenAI-compatible API: the model, where it is, and the key. Holds the key and client
    code every judge and target shares: the key from ``api_key`` or ``OPENAI_API_KEY``, a clear
    error when it is missing, and a repr that never shows it."""

    model: str
    _: KW_ONLY
    base_url: str | None = None
    api_key: str | None = field(default=None, compare=False)

    _repr_fields: ClassVar[tuple[str, ...]] = ()
    """Settings shown in the repr after the model, the URL and the masked key."""

    def __repr__(self) -> str:
        key = None if self._key() is None else "'***'"
        shown = "".join(f", {name}={_shown(getattr(self, name))}" for name in self._repr_fields)
        return (
            f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r}, "
            f"api_key={key}{shown})"
        )

    def _key(self) -> str | None:
        return self.api_key or os.environ.get("OPENAI_API_KEY")

    def _where(self) -> str:
        """The endpoint as messages name it."""
        return self.base_url or "the OpenAI API"

    def _scope(self) -> str:
        """The endpoint's URL: what identifies state kept about it (e.g. batch ids)."""
        return self.base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"

    def _client(self, **options: Any) -> openai.AsyncOpenAI:
        """An SDK client for this endpoint; ``options`` go to ``openai.AsyncOpenAI``."""
        key = self._key()
        if key is None:
            if self.base_url is None:
                name = type(self).__name__
                raise JudgeError(
                    f"No API key for {name}: set the OPENAI_API_KEY environment variable or "
                    f"pass {name}(model, api_key=...). For a local server (vLLM, Ollama, "
                    "llama.cpp) pass base_url=...; no key is needed then.",
                    detail=f"No API key for the model {self.model!r}.",
                    fixes=[Fix("api_key", {"api_key": "OPENAI_API_KEY", "base_url": "URL"})],
                )
            key = "not-needed"  # local servers ignore it, the SDK requires a string
        return openai.AsyncOpenAI(api_key=key, base_url=self.base_url, **options)


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

    _repr_fields: ClassVar[tuple[str, ...]] = ("max_concurrency",)

    def __post_init__(self) -> None:
        if self.max_concurrency < 1:
            raise OptionError(f"max_concurrency must be at least 1, got {self.max_concurrency}.")

    # -- hooks ------------------------------------------------------------------------------
    def _body(self, chat: list[dict[str, str]], extra: Any, state: RunState) -> dict[str, Any]:
        raise NotImplementedError

    def _accept(
        self, key: str, response: Any, chat: list[dict[str, str]], extra: Any, attempt: int
    ) -> dict[str, Any] | list[dict[str, str]]:
        """A result row, or a new chat to send instead (a re-ask)."""
        raise NotImplementedError

    # -- the engine -------------------------------------------------------------------------
    def _chat_client(self) -> openai.AsyncOpenAI:
        # The aiohttp transport measured ~2x the default transport's throughput at high
        # concurrency; keep a connection alive per concurrent request.
        limits = Limits(
            max_connections=self.max_concurrency, max_keepalive_connections=self.max_concurrency
        )
        return self._client(
            max_retries=0,  # retries are ours: we classify errors and count attempts
            timeout=self.timeout,
            http_client=openai.DefaultAioHttpClient(limits=limits, timeout=self.timeout),
        )

    async def _stream(
        self, items: Iterable[tuple[str, str, Any]], *, structured: bool = False
    ) -> AsyncIterator[list[dict[str, Any]]]:
        """Send ``(key, chat_json, extra)`` items; yield lists of result rows as they finish.

        Everything finished is yielded before a fatal error is raised as JudgeError. A slot is
        freed only when the caller has taken a result (and stored it), so requests sent but not
        yet stored never exceed ``max_concurrency``: after a crash, at most that many repeat."""
        rows = iter(items)
        slots = asyncio.Semaphore(self.max_concurrency)
        done: asyncio.Queue[dict[str, Any] | BaseException] = asyncio.Queue()
        shared = SHARED_LIMITS.get()
        state = RunState(
            structured=structured,
            rpm=RateLimiter(self.requests_per_minute) if self.requests_per_minute else None,
            tpm=RateLimiter(self.tokens_per_minute) if self.tokens_per_minute else None,
        )
        if shared is not None:  # a runner's limits, shared with its other workers
            state.rpm, state.tpm = shared
        async with self._chat_client() as client:

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
                        done.put_nowait(JudgeError(str(stop)))
                        return
                    except Exception as exc:  # a bug must not lose the other rows
                        done.put_nowait(failure(key, f"{type(exc).__name__}: {exc}", 1, 0.0))

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

    async def _one(
        self, client: openai.AsyncOpenAI, state: RunState, key: str, messages: str, extra: Any
    ) -> dict[str, Any]:
        chat = json.loads(messages)
        started = time.perf_counter()
        attempts = retries = 0
        last_error = "no attempt made"
        while True:
            attempts += 1
            await state.throttle(len(messages) // 4 + self.max_tokens)
            body = self._body(chat, extra, state)
            try:
                # The documented low-level call with the body we built: the typed helper
                # (chat.completions.create) re-walks every message's type annotations per
                # request, about 0.55 ms of CPU each (benchmarks/RESULTS.md).
                response = await client.post("/chat/completions", body=body, cast_to=ChatCompletion)
            except openai.APIStatusError as exc:
                structured = "response_format" in body
                try:
                    delay = classify(
                        exc, where=self._where(), model=self.model, structured=structured
                    )
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
                last_error = describe(exc)
            except openai.APIConnectionError as exc:  # includes timeouts and dropped connections
                delay = None
                # the aiohttp transport reports refused and dropped connections as timeouts too
                last_error = (
                    "timeout or dropped connection"
                    if isinstance(exc, openai.APITimeoutError)
                    else (f"connection error: {exc}")
                )
            else:
                outcome = self._accept(key, response, chat, extra, attempts)
                if isinstance(outcome, list):  # re-ask with this chat
                    chat = outcome
                    continue
                outcome["latency_s"] = time.perf_counter() - started
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
