"""One batch judge call, written once for every provider: submit what no open batch holds,
poll with backoff, resubmit what the provider failed, recover batches after a crash from the
state file, and turn result lines into result rows (the chat judge's parser and error rows).

The provider is a :class:`~pairwise_polars.judges._batch_client.BatchClient`; every text it
sends back is redacted before it is stored, raised or printed. A batch whose status cannot be
read ``max_poll_errors`` times in a row stops the call with a ``JudgeError`` naming it; it stays
in the state file, so the next run polls it again instead of paying for it twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from itertools import starmap
from typing import Any, TypeVar

import polars as pl

from pairwise_polars._errors import JudgeError
from pairwise_polars._schemas import result_frame
from pairwise_polars.engine._cache import default_cache_path
from pairwise_polars.engine._failures import failure_row, redact
from pairwise_polars.judges._batch_client import (
    FINISHED,
    BatchCallFailed,
    BatchClient,
    BatchInfo,
    Line,
)
from pairwise_polars.judges._batch_state import BatchRecord, BatchState
from pairwise_polars.judges._logprobs import expected_score
from pairwise_polars.judges._parse import ReplyError, parse_judgement
from pairwise_polars.judges._verdict import JudgeRequest

T = TypeVar("T")
Lines = list[tuple[str, dict[str, Any]]]


class Session:
    """The requests of one ``judge`` call, the provider's client, the state and the batches
    being watched. ``judge`` is a batch judge (``judges/_batch.py``)."""

    def __init__(self, judge: Any, requests: pl.DataFrame, client: BatchClient, state: BatchState):
        self.judge = judge
        self.requests = requests.select("key", "messages", "max_score")
        self.client = client
        self.state = state
        self.active: list[BatchRecord] = []
        self.poll_errors: dict[str, int] = {}
        self.secrets = (judge._key(),)

    # -- submitting ------------------------------------------------------------------------

    async def submit_missing(self) -> None:
        """Watch the open batches that hold these requests; submit the others."""
        covered: set[str] = set()
        for record in self.state.open_batches(self.requests["key"].to_list()).values():
            held = self.state.requests_of(record.input_file_id)
            covered |= set(held)
            if record.batch_id is None:  # staged, then the process died: was it created?
                found = await self._call(lambda r=record: self.client.find(r.input_file_id,
                                                                           r.created))  # fmt: skip
                if found is None:
                    await self._create(record, self._lines(self._requested(list(held))))
                else:
                    self.state.update(record, batch_id=found.id, status=found.status)
            self.active.append(record)
        await self._submit(self.requests.filter(~pl.col("key").is_in(list(covered))), round=0)

    def _lines(self, todo: pl.DataFrame) -> list[tuple[str, int, dict[str, Any]]]:
        requests = starmap(JudgeRequest, todo.select("key", "messages", "max_score").iter_rows())
        return [(r.key, r.max_score, self.judge._line_body(r)) for r in requests]

    async def _submit(self, todo: pl.DataFrame, round: int) -> None:
        judge = self.judge
        lines = self._lines(todo)
        for part in _split(lines, judge.max_requests_per_batch, judge.max_bytes_per_file):
            bodies = [(key, body) for key, _, body in part]
            handle = await self._call(lambda b=bodies: self.client.stage(b))
            record = self.state.record_upload(
                handle, judge.model, {key: m for key, m, _ in part}, round
            )
            await self._create(record, part)
            self.active.append(record)

    async def _create(self, record: BatchRecord, part: list[tuple[str, int, dict]]) -> None:
        bodies = [(key, body) for key, _, body in part]
        batch = await self._call(lambda: self.client.submit(record.input_file_id, bodies))
        self.state.update(record, batch_id=batch.id, status=batch.status)
        self._say(f"submitted batch {batch.id} ({record.n_requests:,} requests)")

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
                if batch.status in FINISHED:
                    done = "" if batch.answered is None else f" ({batch.answered:,} answered)"
                    self._say(f"batch {batch.id}: {batch.status}{done}")
                    rows = await self._results(record, batch)
                    if rows:
                        yield result_frame(rows)
                    self.state.consume(record)  # after the caller stored the results
                    self.active.remove(record)
            if self.active:
                await asyncio.sleep(delay)
                delay = min(delay * 1.5, self.judge.max_poll_interval)

    async def _retrieve(self, record: BatchRecord) -> BatchInfo | None:
        batch_id = record.batch_id
        assert batch_id is not None
        try:
            batch = await self.client.status(batch_id)
        except BatchCallFailed as failed:
            if failed.unknown:  # the provider no longer knows it: send its requests again
                self._say(f"batch {batch_id} is unknown to {self.client.where}; resubmitting")
                expected = self.state.requests_of(record.input_file_id)
                self.state.consume(record)
                self.active.remove(record)
                await self._submit(self._requested(list(expected)), round=record.round)
                return None
            if failed.refused:
                raise self._stop(failed, failed.what) from None
            errors = self.poll_errors[batch_id] = self.poll_errors.get(batch_id, 0) + 1
            if errors >= self.judge.max_poll_errors:
                raise JudgeError(
                    f"The status of batch {batch_id} could not be read {errors} times in a row "
                    f"at {self.client.where} (the last: {failed}). The batch is kept in the "
                    f"state file ({self.state.path}): run again to resume it, without paying "
                    "for it twice."
                ) from None
            return None  # try again at the next poll
        self.poll_errors.pop(batch_id, None)
        return batch

    async def _results(self, record: BatchRecord, batch: BatchInfo) -> list[dict[str, Any]]:
        expected = self.state.requests_of(record.input_file_id)
        attempts = record.round + 1
        latency = max(0.0, (batch.ended or time.time()) - batch.created)
        model = self.judge.model
        rows: dict[str, dict[str, Any]] = {}
        again: dict[str, str] = {}  # key -> why it is to be sent again
        for line in await self._call(lambda: self.client.results(batch)):
            if line.key not in expected or line.key in rows or line.key in again:
                continue
            if line.completion is not None:
                rows[line.key] = self._row(line, expected[line.key], attempts, latency)
            elif line.retry:
                again[line.key] = self._redact(line.problem or "no answer")
            else:
                problem = self._redact(line.problem or "no answer")
                rows[line.key] = failure_row(
                    line.key, problem, attempts, latency, judge_model=model
                )
        missing = [k for k in expected if k not in rows and k not in again]
        if batch.status in ("failed", "cancelled"):  # reported, not resubmitted
            if batch.status == "failed":
                error = f"batch {batch.id} failed: {self._redact(batch.reason or 'no reason')}"
            else:
                error = f"batch {batch.id} was cancelled before this request was processed"
            for key in [*missing, *again]:
                rows[key] = failure_row(key, error, attempts, latency, judge_model=model)
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
                rows[key] = failure_row(key, error, attempts, latency, judge_model=model)
        return list(rows.values())

    def _row(self, line: Line, max_score: int, attempts: int, latency: float) -> dict[str, Any]:
        reply = line.completion
        assert reply is not None
        content = reply.content and self._redact(reply.content)
        model = self.judge.model
        try:
            score, reason = parse_judgement(content, max_score)
        except ReplyError as problem:
            return failure_row(line.key, f"unparseable reply: {problem}", attempts, latency,
                           raw_reply=content, judge_model=model)  # fmt: skip
        return {
            "key": line.key,
            "raw_score": score,
            "reason": reason,
            "error": None,
            "attempts": attempts,
            "latency_s": latency,
            "input_tokens": reply.input_tokens,
            "output_tokens": reply.output_tokens,
            "cached_tokens": reply.cached_tokens,
            "raw_reply": content,
            "judge_model": model,
            **self._score_source(line, content, max_score),
        }

    def _score_source(self, line: Line, content: str | None, max_score: int) -> dict[str, Any]:
        """``score_from="logprobs"``: the rubric's expectation, or the fallback said aloud."""
        if getattr(self.judge, "score_from", "answer") != "logprobs":
            return {"score_source": "answer"}
        expected = expected_score(line.logprobs, content, max_score)
        source = "answer (no logprobs)" if expected is None else "logprobs"
        return {"expected_score": expected, "score_source": source}

    def _requested(self, keys: list[str]) -> pl.DataFrame:
        return self.requests.filter(pl.col("key").is_in(keys))

    # -- plumbing --------------------------------------------------------------------------

    def _redact(self, text: str) -> str:
        return redact(text, self.secrets)

    async def _call(self, call: Callable[[], Awaitable[T]]) -> T:
        """A control call; a failure the client's retries could not fix stops the run, with
        the batches submitted so far recorded for the rerun."""
        try:
            return await call()
        except BatchCallFailed as failed:
            raise self._stop(failed, failed.what) from None

    def _stop(self, failed: BatchCallFailed, what: str) -> JudgeError:
        where, text = self.client.where, self._redact(str(failed))
        if failed.refused:
            return JudgeError(
                f"{where} refused the API key ({failed.status}) when trying to {what}. Check "
                f"{self.judge._key_env} or api_key=...; batches already submitted are recorded "
                "and are picked up again on rerun."
            )
        return JudgeError(
            f"{where} failed when trying to {what}: {text}. Batches already submitted are "
            "recorded; run again to resume them."
        )

    def _say(self, message: str) -> None:
        if self.judge.progress:
            print(f"[{type(self.judge).__name__}] {message}", file=sys.stderr, flush=True)


@contextlib.asynccontextmanager
async def session(judge: Any, requests: pl.DataFrame) -> AsyncIterator[Session]:
    client = judge._batch_client()  # a missing key fails here, before the state file is touched
    state = BatchState(judge.state or default_cache_path(), judge._scope())
    try:
        yield Session(judge, requests, client, state)
    finally:
        state.close()
        await client.aclose()


def _split(
    lines: list[tuple[str, int, dict[str, Any]]], max_requests: int, max_bytes: int
) -> list[list[tuple[str, int, dict[str, Any]]]]:
    parts: list[list[tuple[str, int, dict[str, Any]]]] = []
    current: list[tuple[str, int, dict[str, Any]]] = []
    size = 0
    for item in lines:
        length = len(json.dumps(item[2], ensure_ascii=False).encode()) + 200  # with its frame
        if current and (len(current) >= max_requests or size + length > max_bytes):
            parts.append(current)
            current, size = [], 0
        current.append(item)
        size += length
    if current:
        parts.append(current)
    return parts
