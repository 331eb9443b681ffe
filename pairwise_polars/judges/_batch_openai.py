"""The OpenAI Batch API as a :class:`~pairwise_polars.judges._batch_client.BatchClient`: JSONL
input files uploaded with ``purpose="batch"``, batches on ``/v1/chat/completions`` with a 24h
window, output and error files read back into neutral result lines."""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import openai

from pairwise_polars.engine._completion import read_completion
from pairwise_polars.engine._failures import redact
from pairwise_polars.judges._batch_client import BatchCallFailed, BatchInfo, Line
from pairwise_polars.judges._logprobs import logprobs_of

T = TypeVar("T")
ENDPOINT = "/v1/chat/completions"
_RETRYABLE_STATUS = (408, 409, 429, 500, 502, 503, 504)
_LIST_PAGES = 20  # how far back to look for a batch created just before a crash


class OpenAIBatches:
    """Batches through the openai SDK (its own retries of transient failures)."""

    def __init__(self, client: openai.AsyncOpenAI, *, model: str, where: str, secret: str | None):
        self.client = client
        self.model = model
        self.where = f"the Batch API at {where}"
        self.secrets = (secret,)

    async def stage(self, lines: list[tuple[str, dict[str, Any]]]) -> str:
        data = "".join(
            json.dumps({"custom_id": key, "method": "POST", "url": ENDPOINT, "body": body},
                       ensure_ascii=False) + "\n"
            for key, body in lines
        ).encode()  # fmt: skip
        name = f"pairwise-polars-{int(time.time())}-{len(lines)}.jsonl"
        uploaded = await self._call(
            "upload the batch input file",
            lambda: self.client.files.create(file=(name, data), purpose="batch"),
        )
        return uploaded.id

    async def submit(self, handle: str, lines: list[tuple[str, dict[str, Any]]]) -> BatchInfo:
        batch = await self._call(
            "create the batch",
            lambda: self.client.batches.create(
                input_file_id=handle,
                endpoint=ENDPOINT,
                completion_window="24h",
                metadata={"created_by": "pairwise_polars", "judge_model": self.model},
            ),
        )
        return self._info(batch)

    async def find(self, handle: str, since: float) -> BatchInfo | None:
        pages = 0
        page = await self._call("list batches", lambda: self.client.batches.list(limit=100))
        while True:
            for batch in page.data:
                if batch.input_file_id == handle:
                    return self._info(batch)
                if batch.created_at < since - 3600:
                    return None
            pages += 1
            if not page.has_next_page() or pages >= _LIST_PAGES:
                return None
            page = await self._call("list batches", page.get_next_page)

    async def status(self, batch_id: str) -> BatchInfo:
        batch = await self._call(
            f"read the status of batch {batch_id}",
            lambda: self.client.batches.retrieve(batch_id),
        )
        return self._info(batch)

    async def results(self, batch: BatchInfo) -> list[Line]:
        lines: list[Line] = []
        for file_id in (batch.raw.output_file_id, batch.raw.error_file_id):
            if not file_id:
                continue
            content = await self._call(
                "download batch results", lambda f=file_id: self.client.files.content(f)
            )
            for raw in content.content.splitlines():
                record = json.loads(raw) if raw.strip() else {}
                if isinstance(record.get("custom_id"), str):
                    lines.append(_line(record))
        return lines

    async def cancel(self, batch_id: str) -> None:
        await self._call(f"cancel batch {batch_id}", lambda: self.client.batches.cancel(batch_id))

    async def aclose(self) -> None:
        await self.client.close()

    def _info(self, batch: Any) -> BatchInfo:
        ends = [getattr(batch, f"{s}_at", None) for s in ("completed", "failed", "expired",
                                                          "cancelled")]  # fmt: skip
        ended = next((float(t) for t in ends if t), None)
        errors = batch.errors.data if batch.errors and batch.errors.data else []
        reason = "; ".join(str(e.message) for e in errors) or None
        counts = batch.request_counts
        status = batch.status if batch.status in ("completed", "failed", "expired",
                                                  "cancelled") else "in_progress"  # fmt: skip
        return BatchInfo(
            id=batch.id,
            status=status,
            created=float(batch.created_at),
            ended=ended,
            answered=counts.completed if counts else None,
            reason=reason and redact(reason, self.secrets),
            raw=batch,
        )

    async def _call(self, what: str, call: Callable[[], Awaitable[T]]) -> T:
        """One SDK call; its failures (after the SDK's retries) as a redacted BatchCallFailed.
        The SDK's exception (which holds the request, hence the key) is not kept."""
        try:
            return await call()
        except openai.APIStatusError as exc:
            body = exc.body if isinstance(exc.body, dict) else {}
            status = exc.status_code
            text = f"HTTP {status}: {str(_message(body) or exc)[:200]}"
        except openai.APIConnectionError as exc:
            text, status = f"cannot reach it ({exc})", None
        raise BatchCallFailed(redact(text, self.secrets), what=what, status=status)


def _line(record: dict[str, Any]) -> Line:
    key = record["custom_id"]
    response, error = record.get("response"), record.get("error") or {}
    if response is None:
        problem = f"{error.get('code')}: {error.get('message') or 'no response'}"
        return Line(key, problem=problem, retry=error.get("code") == "batch_expired")
    status = response.get("status_code")
    body = response.get("body") or {}
    if status != 200:
        problem = f"HTTP {status}: {str(_message(body))[:200]}"
        retry = status in _RETRYABLE_STATUS and _code(body) != "insufficient_quota"
        return Line(key, problem=problem, retry=retry)
    return Line(key, completion=read_completion(body), logprobs=logprobs_of(body))


def _message(body: dict[str, Any]) -> str:
    error = body.get("error", body)
    return error.get("message", "") if isinstance(error, dict) else str(error)


def _code(body: dict[str, Any]) -> str | None:
    error = body.get("error")
    return error.get("code") if isinstance(error, dict) else None
