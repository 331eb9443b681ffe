"""Anthropic's Message Batches as a :class:`~pairwise_polars.judges._batch_client.BatchClient`:
requests posted inline to ``/v1/messages/batches`` (no files), polled by id, results read from
the batch's JSONL results, over one aiohttp session with the package's retries.

Anthropic lists batches without anything that ties one to its requests, so a process killed
between creating a batch and recording its id cannot find it again: that batch is created once
more (the window is one HTTP round trip).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import datetime
from typing import Any

import aiohttp

from pairwise_polars.engine._failures import FailureError, status_failure, transport_failure
from pairwise_polars.engine._messages import messages_url, read_message
from pairwise_polars.engine._retries import backoff, retry_after
from pairwise_polars.judges._batch_client import BatchCallFailed, BatchInfo, Line

_RETRY_STATUS = (408, 409, 429, 500, 502, 503, 504, 529)
_RETRY_TYPES = ("rate_limit_error", "api_error", "overloaded_error")


class AnthropicBatches:
    """Message batches over aiohttp: control calls retried ``max_retries`` times on 429, 5xx,
    529 and lost connections, with backoff that honours ``retry-after``."""

    def __init__(
        self,
        base_url: str,
        headers: dict[str, str],
        *,
        timeout: float,
        max_retries: int,
        secret: str | None,
    ) -> None:
        self.url = messages_url(base_url) + "/batches"
        self.where = f"the Message Batches API at {base_url}"
        self.max_retries = max_retries
        self.timeout = timeout
        self.secrets = (secret,)
        self._session = aiohttp.ClientSession(
            headers=headers,
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=timeout, sock_read=timeout),
            skip_auto_headers=("User-Agent",),
        )

    async def stage(self, lines: list[tuple[str, dict[str, Any]]]) -> str:
        return f"local-{uuid.uuid4().hex}"  # no upload: the requests travel with the batch

    async def submit(self, handle: str, lines: list[tuple[str, dict[str, Any]]]) -> BatchInfo:
        requests = [{"custom_id": key, "params": body} for key, body in lines]
        batch = await self._request("create the batch", "POST", self.url, {"requests": requests})
        return _info(batch)

    async def find(self, handle: str, since: float) -> BatchInfo | None:
        return None

    async def status(self, batch_id: str) -> BatchInfo:
        what = f"read the status of batch {batch_id}"
        return _info(await self._request(what, "GET", f"{self.url}/{batch_id}"))

    async def results(self, batch: BatchInfo) -> list[Line]:
        url = batch.raw.get("results_url") or f"{self.url}/{batch.id}/results"
        raw = await self._request("download batch results", "GET", url, text=True)
        lines = []
        for text in raw.splitlines():
            record = json.loads(text) if text.strip() else {}
            if isinstance(record.get("custom_id"), str):
                lines.append(_line(record))
        return lines

    async def cancel(self, batch_id: str) -> None:
        await self._request(f"cancel batch {batch_id}", "POST", f"{self.url}/{batch_id}/cancel")

    async def aclose(self) -> None:
        await self._session.close()

    async def _request(
        self, what: str, method: str, url: str, body: Any = None, *, text: bool = False
    ) -> Any:
        """One control call with retries; a redacted BatchCallFailed when they run out."""
        retries = 0
        while True:
            try:
                return await self._send(method, url, body, text=text)
            except FailureError as failed:
                problem = failed.failure
            retryable = problem.status is None or problem.status in _RETRY_STATUS
            if not retryable or retries >= self.max_retries:
                raise BatchCallFailed(problem.describe(), what=what, status=problem.status)
            retries += 1
            wait = retry_after(problem.headers or {})
            await asyncio.sleep(min(wait if wait is not None else backoff(retries, 0.5, 30), 60))

    async def _send(self, method: str, url: str, body: Any, *, text: bool) -> Any:
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode()
        try:
            async with self._session.request(method, url, data=data) as response:
                raw = await response.read()
                status, headers = response.status, response.headers
        except Exception as exc:  # aiohttp's errors and timeouts: no HTTP answer
            raise FailureError(transport_failure(exc, self.timeout)) from None
        if status >= 300:
            raise FailureError(status_failure(status, headers, raw, self.secrets))
        if text:
            return raw.decode("utf-8", "replace")
        try:
            return json.loads(raw)
        except ValueError:
            raise FailureError(status_failure(200, {}, "the reply is not JSON", ())) from None


def _info(batch: Any) -> BatchInfo:
    batch = batch if isinstance(batch, dict) else {}
    counts = batch.get("request_counts") or {}
    ended = batch.get("processing_status") == "ended"
    status = "in_progress"
    if ended:
        status = "cancelled" if batch.get("cancel_initiated_at") else "completed"
    return BatchInfo(
        id=str(batch.get("id")),
        status=status,
        created=_seconds(batch.get("created_at")) or 0.0,
        ended=_seconds(batch.get("ended_at")),
        answered=counts.get("succeeded"),
        raw=batch,
    )


def _line(record: dict[str, Any]) -> Line:
    key, result = record["custom_id"], record.get("result") or {}
    kind = result.get("type")
    if kind == "succeeded":
        return Line(key, completion=read_message(result.get("message")))
    if kind == "errored":
        outer = result.get("error") or {}
        error = outer.get("error", outer) if isinstance(outer, dict) else {}
        kind = error.get("type") if isinstance(error, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        return Line(key, problem=f"{kind}: {message or 'no message'}", retry=kind in _RETRY_TYPES)
    if kind == "expired":
        return Line(key, problem="expired: the batch ended before this request ran", retry=True)
    return Line(key, problem=f"{kind or 'no result'}: the batch was cancelled before this "
                "request was processed")  # fmt: skip


def _seconds(stamp: Any) -> float | None:
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
