"""The test server's Message Batches: ``/v1/messages/batches`` (create, retrieve, results as
JSONL, cancel), in memory, worked out when next looked at, like the OpenAI batches.

A batch ends ``delay`` seconds after creation (its ``BatchSettings`` as the server had them
then): every request answered as ``/v1/messages`` would answer it (same seeded fault draw per
request; a fault becomes an ``errored`` result), or, for ``outcome="expired"``, the first
``expire_fraction`` answered and the others ``expired``; ``outcome="failed"`` errors every
request with an ``api_error``. ``retrieve_status`` set: every retrieve answers that status.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from aiohttp import web

from ._batches import BatchSettings, add_guarded_routes

if TYPE_CHECKING:
    from ._anthropic import MessagesDialect
    from ._server import TestServer

_CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_COUNTS = ("processing", "succeeded", "errored", "canceled", "expired")


@dataclass
class _Work:
    requests: list[dict[str, Any]]
    settings: BatchSettings
    started: float  # monotonic
    cancel_requested: float | None = None
    results: list[dict[str, Any]] | None = None


class MessageBatches:
    """Message batches of one :class:`TestServer`: ``objects`` maps a batch id to its batch
    object as last shown."""

    def __init__(self, server: TestServer, dialect: MessagesDialect) -> None:
        self.server = server
        self.dialect = dialect
        self.objects: dict[str, dict[str, Any]] = {}
        self._work: dict[str, _Work] = {}

    def clear(self) -> None:
        self.objects.clear()
        self._work.clear()

    def add_routes(self, app: web.Application) -> None:
        batch = "/v1/messages/batches/{batch_id}"
        add_guarded_routes(app, self._refuse, (
            ("POST", "/v1/messages/batches", "messages.batches.create", self._create),
            ("GET", batch, "messages.batches.retrieve", self._retrieve),
            ("GET", f"{batch}/results", "messages.batches.results", self._results),
            ("POST", f"{batch}/cancel", "messages.batches.cancel", self._cancel),
        ))  # fmt: skip

    async def _create(self, request: web.Request) -> web.Response:
        try:
            body = json.loads(await request.read())
        except ValueError:
            return _error(400, "The body is not valid JSON.")
        requests = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(requests, list) or not requests:
            return _error(400, "requests: at least one request is required")
        settings = self.server.batch
        if len(requests) > settings.max_requests:
            return _error(400, f"requests: at most {settings.max_requests} requests per batch")
        seen: set[str] = set()
        for i, item in enumerate(requests):
            custom_id = item.get("custom_id") if isinstance(item, dict) else None
            if not isinstance(custom_id, str) or not _CUSTOM_ID.match(custom_id):
                return _error(400, f"requests.{i}.custom_id: must match {_CUSTOM_ID.pattern}")
            if custom_id in seen:
                return _error(400, f"requests.{i}.custom_id: {custom_id!r} is not unique")
            seen.add(custom_id)
        batch_id = f"msgbatch_{uuid.uuid4().hex[:24]}"
        now = _stamp()
        self.objects[batch_id] = {
            "id": batch_id,
            "type": "message_batch",
            "processing_status": "in_progress",
            "request_counts": dict.fromkeys(_COUNTS, 0) | {"processing": len(requests)},
            "ended_at": None,
            "created_at": now,
            "expires_at": now,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": None,
        }
        self._work[batch_id] = _Work(requests, settings, time.monotonic())
        return _json(200, self.objects[batch_id])

    async def _retrieve(self, request: web.Request) -> web.Response:
        batch_id = request.match_info["batch_id"]
        status = self.server.batch.retrieve_status
        if status is not None:
            return _error(status, "Internal server error", kind="api_error")
        return _json(200, self._advance(batch_id))

    async def _results(self, request: web.Request) -> web.Response:
        batch_id = request.match_info["batch_id"]
        work = self._work[batch_id]
        self._advance(batch_id)
        if work.results is None:
            return _error(400, f"Batch {batch_id} is still processing; results come at its end.")
        data = "".join(json.dumps(line) + "\n" for line in work.results).encode()
        return web.Response(body=data, content_type="application/x-jsonl")

    async def _cancel(self, request: web.Request) -> web.Response:
        batch_id = request.match_info["batch_id"]
        batch = self._advance(batch_id)
        if batch["processing_status"] == "in_progress":
            self._work[batch_id].cancel_requested = time.monotonic()
            batch.update(processing_status="canceling", cancel_initiated_at=_stamp())
        return _json(200, batch)

    def _advance(self, batch_id: str) -> dict[str, Any]:
        batch, work = self.objects[batch_id], self._work[batch_id]
        if batch["processing_status"] == "ended":
            return batch
        delay = work.settings.delay
        if work.cancel_requested is not None:
            share = min(1.0, (work.cancel_requested - work.started) / delay) if delay else 0.0
            self._end(batch, work, int(len(work.requests) * share), "canceled")
        elif time.monotonic() - work.started >= delay:
            fraction = work.settings.expire_fraction if work.settings.outcome == "expired" else 1
            self._end(batch, work, int(len(work.requests) * fraction), "expired")
        return batch

    def _end(self, batch: dict[str, Any], work: _Work, n_done: int, rest: str) -> None:
        results = []
        for item in work.requests[:n_done]:
            if work.settings.outcome == "failed":
                result = {"type": "errored", "error": {"type": "error", "error": {
                    "type": "api_error", "message": "The batch failed (the test server's "
                    "failure mode)." + self.server.echo_key()}}}  # fmt: skip
            else:
                result = self.dialect.answer_params(item.get("params"))
            results.append({"custom_id": item["custom_id"], "result": result})
        results += [
            {"custom_id": item["custom_id"], "result": {"type": rest}}
            for item in work.requests[n_done:]
        ]
        work.results = results
        counts = dict.fromkeys(_COUNTS, 0)
        for line in results:
            counts[line["result"]["type"]] += 1
        base = self.server.base_url
        batch.update(
            processing_status="ended",
            ended_at=_stamp(),
            request_counts=counts,
            results_url=f"{base}/messages/batches/{batch['id']}/results",
        )

    def _refuse(self, request: web.Request, route: str) -> web.Response | None:
        self.server._count_batch_call(route)
        self.server._remember(request, None)
        if not self.dialect.authorised(request):
            sent = request.headers.get("x-api-key")
            echo = f" (request had x-api-key: {sent})" if self.server.faults.echo_auth else ""
            return _error(401, "invalid x-api-key" + echo, kind="authentication_error")
        batch_id = request.match_info.get("batch_id")
        if batch_id is not None and batch_id not in self.objects:
            return _error(404, f"No such batch: {batch_id}", kind="not_found_error")
        return None


def _stamp() -> str:
    return datetime.now(timezone.utc).isoformat().replace("+00:00", "Z")


def _json(status: int, payload: dict[str, Any]) -> web.Response:
    return web.Response(
        status=status, body=json.dumps(payload).encode(), content_type="application/json"
    )


def _error(status: int, message: str, *, kind: str = "invalid_request_error") -> web.Response:
    return _json(status, {"type": "error", "error": {"type": kind, "message": message}})
