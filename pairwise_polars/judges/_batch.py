"""The OpenAI Batch API judge: requests as JSONL files, batches polled until done, answers
parsed exactly like the chat judge's (same parser, same error rows), at half the price."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar, TypeVar

import openai
import polars as pl

from pairwise_polars._errors import JudgeError, OptionError
from pairwise_polars._schemas import result_frame
from pairwise_polars.engine._cache import default_cache_path
from pairwise_polars.engine._endpoint import Endpoint, RunState, failure
from pairwise_polars.judges._batch_state import BatchRecord, BatchState
from pairwise_polars.judges._openai import OpenAIJudge
from pairwise_polars.judges._parse import ReplyError, parse_judgement
from pairwise_polars.judges._protocol import Judge, JudgeTraits

T = TypeVar("T")
ENDPOINT = "/v1/chat/completions"
_FINISHED = ("completed", "failed", "expired", "cancelled")
_RETRYABLE_STATUS = (408, 409, 429, 500, 502, 503, 504)
_LIST_PAGES = 20  # how far back to look for a batch created just before a crash


@dataclass(frozen=True, repr=False)
class OpenAIBatchJudge(Endpoint):
    """An LLM judge through the OpenAI Batch API: half the price, answers within 24 hours.

    The requests are written as JSONL (one line per unique request, ``custom_id`` = its key),
    split into files within the API's limits (``max_requests_per_batch``,
    ``max_bytes_per_file``), uploaded with ``purpose="batch"`` and run as batches on
    ``/v1/chat/completions`` with a 24h window. Batches are polled with backoff (from
    ``poll_interval`` up to ``max_poll_interval`` seconds) and their output and error files
    parsed like :class:`OpenAIJudge` answers: the same request body for the same settings (so
    either judge's cached answers serve the other), the same parser, the same error rows.

    Batch ids are kept in a table of ``state`` (a SQLite file; default: the judgement cache's
    file), so a process that dies with batches in flight polls the same batches when run
    again, instead of paying for them twice. Lines that failed with a retryable status (429,
    5xx) or were not processed before an expired batch closed are sent again in a new batch,
    up to ``max_resubmits`` times, then become error rows; a failed or cancelled batch's
    requests become error rows at once. Error rows are not cached: a rerun sends them again.

    >>> OpenAIBatchJudge("gpt-4o-mini", api_key="sk-secret")
    OpenAIBatchJudge(model='gpt-4o-mini', base_url=None, api_key='***', state=None)
    """

    _: KW_ONLY
    temperature: float = 0.0
    seed: int | None = None
    max_tokens: int = 300
    structured_output: bool = True
    reasoning: bool | None = None
    extra_body: Mapping[str, Any] | None = field(default=None, hash=False)
    state: str | os.PathLike[str] | None = None
    max_requests_per_batch: int = 50_000
    max_bytes_per_file: int = 190 * 2**20  # the API's limit is 200 MB
    poll_interval: float = 15.0
    max_poll_interval: float = 300.0
    max_resubmits: int = 2
    timeout: float = 600.0
    max_retries: int = 5
    progress: bool = True

    _repr_fields: ClassVar[tuple[str, ...]] = ("state",)

    def __post_init__(self) -> None:
        if self.max_requests_per_batch < 1 or self.max_bytes_per_file < 1:
            raise OptionError("max_requests_per_batch and max_bytes_per_file must be positive")
        if self.poll_interval <= 0 or self.max_poll_interval < self.poll_interval:
            raise OptionError("poll_interval must be positive and at most max_poll_interval")
        if self.max_resubmits < 0:
            raise OptionError("max_resubmits must not be negative")

    @property
    def name(self) -> str:
        return self.model

    @property
    def identity(self) -> dict[str, Any]:
        """The chat judge's identity for the same settings: the answers are the same model's."""
        return self._chat().identity

    @property
    def traits(self) -> JudgeTraits:
        return JudgeTraits(kind="batch", identity=self.identity)

    def _chat(self) -> OpenAIJudge:
        return OpenAIJudge(
            self.model,
            base_url=self._base_url(),
            temperature=self.temperature,
            seed=self.seed,
            max_tokens=self.max_tokens,
            structured_output=self.structured_output,
            reasoning=self.reasoning,
            extra_body=self.extra_body,
        )

    def _batch_client(self) -> openai.AsyncOpenAI:
        return self._client(timeout=self.timeout, max_retries=self.max_retries)

    async def judge(self, requests: pl.DataFrame) -> AsyncIterator[pl.DataFrame]:
        """Submit what no open batch holds yet, then yield each batch's results as it finishes."""
        async with _session(self, requests) as session:
            await session.submit_missing()
            async for frame in session.collect():
                yield frame

    def submitting(self) -> Judge:
        """A judge with the same identity that only submits batches and returns at once:
        :func:`score_parquet` submits every chunk with it first, then collects chunk by chunk,
        so the batches run side by side instead of one after another."""
        return _Submitter(self)


class _Submitter:
    """The batch judge in submit-only mode: same name and traits, so the same cache keys."""

    def __init__(self, judge: OpenAIBatchJudge) -> None:
        self.batch_judge = judge

    @property
    def name(self) -> str:
        return self.batch_judge.name

    @property
    def traits(self) -> JudgeTraits:
        return self.batch_judge.traits

    async def judge(self, requests: pl.DataFrame) -> AsyncIterator[pl.DataFrame]:
        async with _session(self.batch_judge, requests) as session:
            await session.submit_missing()
        return
        yield  # an async generator that yields nothing


class _Session:
    """One ``judge`` call: the requests, the client, the state and the batches being watched."""

    def __init__(
        self,
        judge: OpenAIBatchJudge,
        requests: pl.DataFrame,
        client: openai.AsyncOpenAI,
        state: BatchState,
    ) -> None:
        self.judge = judge
        self.requests = requests.select("key", "messages", "max_score")
        self.client = client
        self.state = state
        self.active: list[BatchRecord] = []
        self.body_state = RunState(structured=judge.structured_output, rpm=None, tpm=None)
        self.chat = judge._chat()

    # -- submitting ------------------------------------------------------------------------

    async def submit_missing(self) -> None:
        """Watch the open batches that hold these requests; submit the others."""
        keys = self.requests["key"].to_list()
        covered: set[str] = set()
        for record in self.state.open_batches(keys).values():
            covered |= set(self.state.requests_of(record.input_file_id))
            if record.batch_id is None:  # uploaded, then the process died: was it created?
                found = await self._find_batch(record)
                if found is None:
                    await self._create(record)
                else:
                    self.state.update(record, batch_id=found.id, status=found.status)
            self.active.append(record)
        todo = self.requests.filter(~pl.col("key").is_in(list(covered)))
        await self._submit(todo, round=0)

    async def _submit(self, todo: pl.DataFrame, round: int) -> None:
        lines: list[tuple[str, int, str]] = []
        for key, messages, max_score in todo.iter_rows():
            body = self.chat._body(json.loads(messages), max_score, self.body_state)
            line = (
                json.dumps(
                    {"custom_id": key, "method": "POST", "url": ENDPOINT, "body": body},
                    ensure_ascii=False,
                )
                + "\n"
            )
            lines.append((key, max_score, line))
        for part in _split(lines, self.judge.max_requests_per_batch, self.judge.max_bytes_per_file):
            data = "".join(line for _, _, line in part).encode()
            name = f"pairwise-polars-{int(time.time())}-{len(part)}.jsonl"
            uploaded = await self._call(
                "upload the batch input file",
                lambda d=data, n=name: self.client.files.create(file=(n, d), purpose="batch"),
            )
            record = self.state.record_upload(
                uploaded.id, self.judge.model, {key: m for key, m, _ in part}, round
            )
            await self._create(record)
            self.active.append(record)

    async def _create(self, record: BatchRecord) -> None:
        batch = await self._call(
            "create the batch",
            lambda: self.client.batches.create(
                input_file_id=record.input_file_id,
                endpoint=ENDPOINT,
                completion_window="24h",
                metadata={"created_by": "pairwise_polars", "judge_model": self.judge.model},
            ),
        )
        self.state.update(record, batch_id=batch.id, status=batch.status)
        self._say(f"submitted batch {batch.id} ({record.n_requests:,} requests)")

    async def _find_batch(self, record: BatchRecord) -> Any:
        pages = 0
        page = await self._call("list batches", lambda: self.client.batches.list(limit=100))
        while True:
            for batch in page.data:
                if batch.input_file_id == record.input_file_id:
                    return batch
                if batch.created_at < record.created - 3600:
                    return None
            pages += 1
            if not page.has_next_page() or pages >= _LIST_PAGES:
                return None
            page = await self._call("list batches", page.get_next_page)

    # -- collecting ------------------------------------------------------------------------

    async def collect(self) -> AsyncIterator[pl.DataFrame]:
        delay = self.judge.poll_interval
        while self.active:
            for record in list(self.active):
                batch = await self._retrieve(record)
                if batch is None:
                    continue
                if batch.status != record.status:
                    self.state.update(record, status=batch.status)
                if batch.status in _FINISHED:
                    counts = batch.request_counts
                    done = f" ({counts.completed:,} answered)" if counts else ""
                    self._say(f"batch {batch.id}: {batch.status}{done}")
                if batch.status in _FINISHED:
                    rows = await self._results(record, batch)
                    if rows:
                        yield result_frame(rows)
                    self.state.consume(record)  # after the caller stored the results
                    self.active.remove(record)
            if self.active:
                await asyncio.sleep(delay)
                delay = min(delay * 1.5, self.judge.max_poll_interval)

    async def _retrieve(self, record: BatchRecord) -> Any:
        assert record.batch_id is not None
        try:
            return await self.client.batches.retrieve(record.batch_id)
        except openai.NotFoundError:  # the provider no longer knows it: send its requests again
            self._say(f"batch {record.batch_id} is unknown to {self.judge._scope()}; resubmitting")
            expected = self.state.requests_of(record.input_file_id)
            self.state.consume(record)
            self.active.remove(record)
            await self._submit(self._requested(list(expected)), round=record.round)
            return None
        except (openai.APIConnectionError, openai.InternalServerError, openai.RateLimitError):
            return None  # the SDK's retries ran out: try again at the next poll

    async def _results(self, record: BatchRecord, batch: Any) -> list[dict[str, Any]]:
        expected = self.state.requests_of(record.input_file_id)
        attempts = record.round + 1
        ends = [getattr(batch, f"{s}_at", None) for s in _FINISHED]
        ended = next((t for t in ends if t), None) or time.time()
        latency = max(0.0, float(ended) - float(batch.created_at))
        model = self.judge.model
        rows: dict[str, dict[str, Any]] = {}
        again: dict[str, str] = {}  # key -> why it is to be sent again
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            content = await self._call(
                "download batch results", lambda f=file_id: self.client.files.content(f)
            )
            for raw in content.content.splitlines():
                line = json.loads(raw) if raw.strip() else {}
                key = line.get("custom_id")
                if key not in expected or key in rows:
                    continue
                row = self._row(key, line, expected[key], attempts, latency)
                if isinstance(row, str):
                    again[key] = row
                else:
                    rows[key] = row
        missing = [k for k in expected if k not in rows and k not in again]
        if batch.status in ("failed", "cancelled"):  # reported, not resubmitted
            if batch.status == "failed":
                errors = batch.errors.data if batch.errors and batch.errors.data else []
                why = "; ".join(str(e.message) for e in errors) or "no reason given"
                error = f"batch {batch.id} failed: {why}"
            else:
                error = f"batch {batch.id} was cancelled before this request was processed"
            for key in [*missing, *again]:
                rows[key] = failure(key, error, attempts, latency, judge_model=model)
            return list(rows.values())
        for key in missing:
            again[key] = f"missing from the output of batch {batch.id} ({batch.status})"
        wanted = self._requested(list(again))
        if wanted.is_empty():
            return list(rows.values())
        if record.round < self.judge.max_resubmits:
            self._say(f"batch {batch.id}: resubmitting {wanted.height:,} requests")
            await self._submit(wanted, round=record.round + 1)
        else:
            for key in wanted["key"]:
                error = f"{again[key]} (gave up after {attempts} batch{'es' * (attempts > 1)})"
                rows[key] = failure(key, error, attempts, latency, judge_model=model)
        return list(rows.values())

    def _row(
        self, key: str, line: dict[str, Any], max_score: int, attempts: int, latency: float
    ) -> dict[str, Any] | str:
        """One request's result row, or why it should be sent again (a string)."""
        model = self.judge.model
        response, error = line.get("response"), line.get("error") or {}
        if response is None:
            problem = f"{error.get('code')}: {error.get('message') or 'no response'}"
            if error.get("code") == "batch_expired":
                return problem
            return failure(key, problem, attempts, latency, judge_model=model)
        status = response.get("status_code")
        body = response.get("body") or {}
        if status != 200:
            problem = f"HTTP {status}: {str(_message(body))[:200]}"
            if status in _RETRYABLE_STATUS and _code(body) != "insufficient_quota":
                return problem
            return failure(key, problem, attempts, latency, judge_model=model)
        choices = body.get("choices") or [{}]
        content = (choices[0].get("message") or {}).get("content")
        usage = body.get("usage") or {}
        try:
            score, reason = parse_judgement(content, max_score)
        except ReplyError as problem:
            return failure(
                key,
                f"unparseable reply: {problem}",
                attempts,
                latency,
                raw_reply=content,
                judge_model=model,
            )
        return {
            "key": key,
            "raw_score": score,
            "reason": reason,
            "error": None,
            "attempts": attempts,
            "latency_s": latency,
            "input_tokens": usage.get("prompt_tokens"),
            "output_tokens": usage.get("completion_tokens"),
            "cached_tokens": (usage.get("prompt_tokens_details") or {}).get("cached_tokens"),
            "raw_reply": content,
            "judge_model": model,
        }

    def _requested(self, keys: list[str]) -> pl.DataFrame:
        return self.requests.filter(pl.col("key").is_in(keys))

    # -- plumbing --------------------------------------------------------------------------

    async def _call(self, what: str, call: Callable[[], Awaitable[T]]) -> T:
        """A control call (upload, create, list, download); failures the SDK's retries could
        not fix stop the run, with the batches submitted so far recorded for the rerun."""
        where = self.judge._scope()
        try:
            return await call()
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise JudgeError(
                f"The Batch API at {where} refused the API key ({exc.status_code}) when trying "
                "to " + what + ". Check OPENAI_API_KEY or api_key=...; batches already "
                "submitted are recorded and are picked up again on rerun."
            ) from None
        except openai.APIStatusError as exc:
            raise JudgeError(
                f"The Batch API at {where} answered {exc.status_code} when trying to {what}: "
                f"{str(_message(exc.body if isinstance(exc.body, dict) else {}) or exc)[:200]}. "
                "Batches already submitted are recorded; run again to resume them."
            ) from None
        except openai.APIConnectionError as exc:
            raise JudgeError(
                f"Cannot reach the Batch API at {where} to {what} ({exc}). Batches already "
                "submitted are recorded; run again to resume them."
            ) from None

    def _say(self, message: str) -> None:
        if self.judge.progress:
            print(f"[OpenAIBatchJudge] {message}", file=sys.stderr, flush=True)


@contextlib.asynccontextmanager
async def _session(judge: OpenAIBatchJudge, requests: pl.DataFrame) -> AsyncIterator[_Session]:
    client = judge._batch_client()  # a missing key fails here, before the state file is touched
    state = BatchState(judge.state or default_cache_path(), judge._scope())
    try:
        async with client:
            yield _Session(judge, requests, client, state)
    finally:
        state.close()


def _split(
    lines: list[tuple[str, int, str]], max_requests: int, max_bytes: int
) -> list[list[tuple[str, int, str]]]:
    parts: list[list[tuple[str, int, str]]] = []
    current: list[tuple[str, int, str]] = []
    size = 0
    for item in lines:
        length = len(item[2].encode())
        if current and (len(current) >= max_requests or size + length > max_bytes):
            parts.append(current)
            current, size = [], 0
        current.append(item)
        size += length
    if current:
        parts.append(current)
    return parts


def _message(body: dict[str, Any]) -> str:
    error = body.get("error", body)
    return error.get("message", "") if isinstance(error, dict) else str(error)


def _code(body: dict[str, Any]) -> str | None:
    error = body.get("error")
    return error.get("code") if isinstance(error, dict) else None
