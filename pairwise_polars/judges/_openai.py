"""The OpenAI-compatible chat judge: bounded concurrency, rate limits, retries, strict parsing."""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from collections.abc import AsyncIterator
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

import openai
import polars as pl

from pairwise_polars._errors import JudgeError
from pairwise_polars.judges._limits import RateLimiter
from pairwise_polars.judges._parse import ReplyError, parse_judgement
from pairwise_polars.judges._protocol import result_frame

try:  # the SDK's own HTTP library (httpx2 in openai 3.x, httpx before)
    from httpx2 import Limits
except ImportError:  # pragma: no cover - older SDKs
    from httpx import Limits  # type: ignore[no-redef]

_REASK = (
    "Your previous reply was not a valid answer ({problem}). Reply again with a JSON object only: "
    '{{"score": <integer 0-{max_score}>, "reason": "<one or two sentences>"}}'
)
_SCHEMA_UNSUPPORTED = ("response_format", "json_schema", "structured")
_CONTEXT_TOO_LONG = ("context_length", "maximum context", "too long", "too many tokens")


class _Stop(Exception):
    """A failure no retry can fix: the whole run stops."""


@dataclass(frozen=True, repr=False)
class OpenAIJudge:
    """An LLM judge over any OpenAI-compatible chat endpoint (OpenAI, Azure, vLLM, Ollama, ...).

    Requests run ``max_concurrency`` at a time, within optional request/token rate limits.
    429, 5xx, timeouts and dropped connections are retried with exponential backoff and jitter,
    honouring ``Retry-After``; a bad key, a forbidden or unknown model, a bad request or an
    exhausted quota stop the run at once (results so far stay in the cache). An answer that is
    not valid JSON on the rubric is re-asked once, then becomes an error row: never a score.

    >>> judge = OpenAIJudge("gpt-4o-mini", api_key="sk-secret")
    >>> judge
    OpenAIJudge(model='gpt-4o-mini', base_url=None, api_key='***', max_concurrency=32)
    """

    model: str
    _: KW_ONLY
    base_url: str | None = None
    api_key: str | None = field(default=None, compare=False)
    max_concurrency: int = 32
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    max_retries: int = 6
    timeout: float = 60.0
    temperature: float = 0.0
    seed: int | None = None
    max_tokens: int = 300
    structured_output: bool = True
    reask: bool = True
    backoff_base: float = 0.5
    backoff_max: float = 30.0

    def __post_init__(self) -> None:
        if self.max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")

    def __repr__(self) -> str:
        key = None if self._key() is None else "'***'"
        return (
            f"OpenAIJudge(model={self.model!r}, base_url={self.base_url!r}, api_key={key}, "
            f"max_concurrency={self.max_concurrency})"
        )

    @property
    def name(self) -> str:
        return self.model

    @property
    def identity(self) -> dict[str, Any]:
        """What changes answers, hence part of the cache key (never the key or the URL)."""
        return {"model": self.model, "temperature": self.temperature, "seed": self.seed,
                "max_tokens": self.max_tokens}  # fmt: skip

    def _key(self) -> str | None:
        return self.api_key or os.environ.get("OPENAI_API_KEY")

    def _client(self) -> openai.AsyncOpenAI:
        key = self._key()
        if key is None:
            if self.base_url is None:
                raise JudgeError(
                    "No API key for OpenAIJudge: set the OPENAI_API_KEY environment variable or "
                    "pass OpenAIJudge(model, api_key=...). For a local server (vLLM, Ollama, "
                    "llama.cpp) pass base_url=...; no key is needed then."
                )
            key = "not-needed"  # local servers ignore it, the SDK requires a string
        # The aiohttp transport measured ~2x the default transport's throughput at high
        # concurrency; keep a connection alive per concurrent request.
        limits = Limits(max_connections=self.max_concurrency,
                        max_keepalive_connections=self.max_concurrency)  # fmt: skip
        return openai.AsyncOpenAI(
            api_key=key,
            base_url=self.base_url,
            max_retries=0,  # retries are ours: we classify errors and count attempts
            timeout=self.timeout,
            http_client=openai.DefaultAioHttpClient(limits=limits, timeout=self.timeout),
        )

    async def judge(self, requests: pl.DataFrame) -> AsyncIterator[pl.DataFrame]:
        """Judge every request; yield result frames as answers arrive (see the Judge protocol)."""
        rows = iter(requests.select("key", "messages", "max_score").iter_rows())
        done: asyncio.Queue[dict[str, Any] | BaseException] = asyncio.Queue()
        state = _RunState(
            structured=self.structured_output,
            rpm=RateLimiter(self.requests_per_minute) if self.requests_per_minute else None,
            tpm=RateLimiter(self.tokens_per_minute) if self.tokens_per_minute else None,
        )
        async with self._client() as client:

            async def worker() -> None:
                for key, messages, max_score in rows:
                    if state.stopped:
                        return
                    try:
                        done.put_nowait(await self._one(client, state, key, messages, max_score))
                    except _Stop as stop:
                        state.stopped = True
                        done.put_nowait(JudgeError(str(stop)))
                        return
                    except Exception as exc:  # a bug must not lose the other rows
                        done.put_nowait(_failure(key, f"{type(exc).__name__}: {exc}", 1, 0.0))

            workers = [asyncio.create_task(worker()) for _ in range(self.max_concurrency)]
            finished = asyncio.ensure_future(asyncio.gather(*workers))
            try:
                failure: BaseException | None = None
                while not (finished.done() and done.empty()):
                    getter = asyncio.ensure_future(done.get())
                    await asyncio.wait({getter, finished}, return_when=asyncio.FIRST_COMPLETED)
                    if not getter.done():
                        getter.cancel()
                        continue
                    batch = [getter.result()]
                    while not done.empty():  # drain: one frame for everything that is ready
                        batch.append(done.get_nowait())
                    failure = failure or next(
                        (b for b in batch if isinstance(b, BaseException)), None
                    )
                    results = [b for b in batch if not isinstance(b, BaseException)]
                    if results:
                        yield result_frame(results)
                if failure is not None:
                    raise failure
            finally:
                for task in workers:
                    task.cancel()
                await asyncio.gather(finished, return_exceptions=True)

    async def _one(
        self, client: openai.AsyncOpenAI, state: _RunState, key: str, messages: str, max_score: int
    ) -> dict[str, Any]:
        chat = json.loads(messages)
        started = time.perf_counter()
        attempts = 0
        reasked = False
        retries = 0
        last_error = "no attempt made"
        while True:
            attempts += 1
            await state.throttle(len(messages) // 4 + self.max_tokens)
            body = self._body(chat, max_score, state)
            try:
                response = await client.chat.completions.create(**body)
            except openai.APIStatusError as exc:
                try:
                    delay = self._classify(exc, state, "response_format" in body)
                except _RowError as row:
                    return _failure(key, str(row), attempts, time.perf_counter() - started,
                                    judge_model=self.model)  # fmt: skip
                last_error = _describe(exc)
            except openai.APIConnectionError as exc:  # includes timeouts and dropped connections
                delay = None
                last_error = (
                    "timeout"
                    if isinstance(exc, openai.APITimeoutError)
                    else (f"connection error: {exc}")
                )
            else:
                content = response.choices[0].message.content if response.choices else None
                usage = response.usage
                try:
                    score, reason = parse_judgement(content, max_score)
                except ReplyError as problem:
                    if self.reask and not reasked:
                        reasked = True
                        chat = [*chat, {"role": "assistant", "content": content or ""},
                                {"role": "user", "content": _REASK.format(
                                    problem=problem, max_score=max_score)}]  # fmt: skip
                        continue
                    return _failure(key, f"unparseable reply: {problem}", attempts,
                                    time.perf_counter() - started, raw_reply=content,
                                    judge_model=self.model)  # fmt: skip
                return {
                    "key": key, "raw_score": score, "reason": reason, "error": None,
                    "attempts": attempts, "latency_s": time.perf_counter() - started,
                    "input_tokens": usage.prompt_tokens if usage else None,
                    "output_tokens": usage.completion_tokens if usage else None,
                    "raw_reply": content, "judge_model": self.model,
                }  # fmt: skip
            if delay == 0.0:  # a fallback that changes the request: retry at once, for free
                attempts -= 1
                continue
            retries += 1
            if retries > self.max_retries:
                return _failure(key, f"{last_error} (gave up after {attempts} attempts)",
                                attempts, time.perf_counter() - started,
                                judge_model=self.model)  # fmt: skip
            await asyncio.sleep(delay if delay is not None else self._backoff(retries))

    def _body(self, chat: list[dict[str, str]], max_score: int, state: _RunState) -> dict:
        body: dict[str, Any] = {
            "model": self.model, "messages": chat, "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }  # fmt: skip
        if self.seed is not None:
            body["seed"] = self.seed
        if state.structured:
            schema = {
                "type": "object",
                "properties": {"score": {"type": "integer", "enum": list(range(max_score + 1))},
                               "reason": {"type": "string"}},
                "required": ["score", "reason"],
                "additionalProperties": False,
            }  # fmt: skip
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "judgement", "strict": True, "schema": schema},
            }
        return body

    def _classify(
        self, exc: openai.APIStatusError, state: _RunState, structured: bool
    ) -> float | None:
        """The delay before retrying (None: backoff, 0.0: at once); raises _Stop when fatal."""
        status, code, message = exc.status_code, _code(exc), str(exc).lower()
        if status == 429:
            if code == "insufficient_quota" or "quota" in message:
                raise _Stop(f"The judge's quota is exhausted (429 insufficient_quota) at "
                            f"{self._where()}. Add credit or raise the limit, then rerun: "
                            "results so far are cached.")  # fmt: skip
            return _retry_after(exc)
        if status >= 500 or status in (408, 409):
            return _retry_after(exc)
        if status == 400 and structured and any(w in message for w in _SCHEMA_UNSUPPORTED):
            state.structured = False  # the server lacks structured output: plain JSON prompting
            return 0.0
        if status == 400 and any(w in message for w in _CONTEXT_TOO_LONG):
            raise _RowError(_describe(exc))
        if status in (401, 403):
            raise _Stop(f"The judge at {self._where()} refused the API key ({status}: "
                        f"{_short(exc)}). Check OPENAI_API_KEY or api_key=...; results so far "
                        "are cached.")  # fmt: skip
        if status == 404:
            raise _Stop(f"The judge at {self._where()} does not know model {self.model!r} "
                        f"(404: {_short(exc)}). Check the model name.")  # fmt: skip
        raise _Stop(f"The judge at {self._where()} rejected a request ({status}: {_short(exc)}). "
                    "Retrying cannot fix this; results so far are cached.")  # fmt: skip

    def _backoff(self, retries: int) -> float:
        return min(self.backoff_max, self.backoff_base * 2 ** (retries - 1)) * random.uniform(
            0.5, 1.5
        )

    def _where(self) -> str:
        return self.base_url or "the OpenAI API"


class _RowError(Exception):
    """A failure of this request only (e.g. a prompt too long for the model)."""


@dataclass
class _RunState:
    structured: bool
    rpm: RateLimiter | None
    tpm: RateLimiter | None
    stopped: bool = False

    async def throttle(self, tokens: int) -> None:
        if self.rpm is not None:
            await self.rpm.acquire()
        if self.tpm is not None:
            await self.tpm.acquire(tokens)


def _failure(key: str, error: str, attempts: int, latency: float, **extra: Any) -> dict[str, Any]:
    return {"key": key, "error": error, "attempts": attempts, "latency_s": latency, **extra}


def _code(exc: openai.APIStatusError) -> str | None:
    body = exc.body if isinstance(exc.body, dict) else {}
    inner = body.get("error", body) if isinstance(body.get("error", body), dict) else body
    return inner.get("code") or getattr(exc, "code", None)


def _retry_after(exc: openai.APIStatusError) -> float | None:
    headers = exc.response.headers if exc.response is not None else {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.001, float(value) * scale)
        except ValueError:
            continue  # an HTTP date: fall back to our backoff
    return None


def _short(exc: openai.APIStatusError) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error", body)
    message = error.get("message") if isinstance(error, dict) else None
    return str(message or exc.message)[:200]


def _describe(exc: openai.APIStatusError) -> str:
    return f"HTTP {exc.status_code}: {_short(exc)}"
