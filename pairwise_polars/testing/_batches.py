"""The test server's Batch API: ``/v1/files`` and ``/v1/batches``, in memory.

A batch is worked out when it is next looked at: once ``delay`` seconds have passed since its
creation, every line is answered as the chat endpoint would answer it (same validation, same
seeded fault draw per line), or the whole batch fails or expires when the settings say so. No
background task, so a test controls timing with ``delay`` alone.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from aiohttp import web

from ._batch_lines import ENDPOINT, jsonl, read_lines

if TYPE_CHECKING:
    from ._server import TestServer

Handler = Callable[[web.Request], Awaitable[web.Response]]
_ACTIVE = ("validating", "in_progress", "finalizing", "cancelling")
_EXPIRED_MESSAGE = "This request could not be executed before the completion window expired."


@dataclass(frozen=True, kw_only=True)
class BatchSettings:
    """How the test server processes batches (read when a batch is created).

    - ``delay``: seconds from creation until the batch is finished (``in_progress`` before).
    - ``outcome``: ``"completed"`` (every line answered; per-line errors come from the server's
      ``faults``), ``"failed"`` (the whole batch fails, with an error message and no output),
      or ``"expired"`` (the first ``expire_fraction`` of the lines are answered, the others
      land in the error file with code ``batch_expired``).
    - ``max_requests`` / ``max_bytes``: the limits of one input file; a larger one fails
      validation, as OpenAI's does (50,000 requests, 200 MB).
    - ``retrieve_status``: every retrieve of a batch answers this HTTP status (e.g. 500), as a
      provider in trouble does, for as long as the server's settings say so (read at each
      retrieve, not at creation); None (the default): answered normally.

    Example:
        >>> from pairwise_polars.testing._batches import BatchSettings
        >>> BatchSettings(delay=0.5, outcome="expired").expire_fraction
        0.5
    """

    delay: float = 0.0
    outcome: Literal["completed", "failed", "expired"] = "completed"
    expire_fraction: float = 0.5
    max_requests: int = 50_000
    max_bytes: int = 200 * 2**20
    retrieve_status: int | None = None

    def __post_init__(self) -> None:
        if self.delay < 0:
            raise ValueError(f"delay must not be negative, got {self.delay!r}.")
        if self.outcome not in ("completed", "failed", "expired"):
            raise ValueError(
                f"outcome must be 'completed', 'failed' or 'expired', got {self.outcome!r}."
            )
        if not 0.0 <= self.expire_fraction <= 1.0:
            raise ValueError(f"expire_fraction must be within [0, 1], got {self.expire_fraction}.")


@dataclass
class _Batch:
    body: dict[str, Any]
    settings: BatchSettings
    lines: list[dict[str, Any]]
    problems: list[dict[str, Any]]
    started: float  # monotonic
    cancel_requested: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


class BatchBackend:
    """Files and batches of one :class:`TestServer`. ``files`` maps a file id to its metadata
    and bytes (``data``); ``objects`` maps a batch id to its OpenAI batch object (as last
    shown); ``calls`` lists the Batch API calls in the order they came (route names)."""

    def __init__(self, server: TestServer) -> None:
        self.server = server
        self.files: dict[str, dict[str, Any]] = {}
        self.objects: dict[str, dict[str, Any]] = {}
        self.calls: list[str] = []
        self._work: dict[str, _Batch] = {}

    def clear(self) -> None:
        self.files.clear()
        self.objects.clear()
        self.calls.clear()
        self._work.clear()

    def add_routes(self, app: web.Application) -> None:
        add_guarded_routes(app, self._refuse, (
            ("POST", "/v1/files", "files.create", self._create_file),
            ("GET", "/v1/files/{file_id}", "files.retrieve", self._retrieve_file),
            ("GET", "/v1/files/{file_id}/content", "files.content", self._file_content),
            ("POST", "/v1/batches", "batches.create", self._create_batch),
            ("GET", "/v1/batches", "batches.list", self._list_batches),
            ("GET", "/v1/batches/{batch_id}", "batches.retrieve", self._retrieve_batch),
            ("POST", "/v1/batches/{batch_id}/cancel", "batches.cancel", self._cancel_batch),
        ))  # fmt: skip

    # -- files -----------------------------------------------------------------------------

    async def _create_file(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload, purpose = form.get("file"), form.get("purpose")
        if not isinstance(upload, web.FileField):
            return _error(400, "A 'file' part is required (multipart/form-data).", param="file")
        if purpose not in ("batch", "fine-tune", "assistants", "user_data", "evals"):
            return _error(400, f"Invalid purpose {purpose!r}.", param="purpose")
        data = upload.file.read()
        file = self._add_file(data, upload.filename or "upload.jsonl", str(purpose))
        return _json(200, file)

    def _add_file(self, data: bytes, filename: str, purpose: str) -> dict[str, Any]:
        file_id = f"file-{uuid.uuid4().hex[:24]}"
        meta = {
            "id": file_id,
            "object": "file",
            "bytes": len(data),
            "created_at": int(time.time()),
            "filename": filename,
            "purpose": purpose,
            "status": "processed",
        }
        self.files[file_id] = {**meta, "data": data}
        return meta

    async def _retrieve_file(self, request: web.Request) -> web.Response:
        file = self.files[request.match_info["file_id"]]
        return _json(200, {k: v for k, v in file.items() if k != "data"})

    async def _file_content(self, request: web.Request) -> web.Response:
        file = self.files[request.match_info["file_id"]]
        return web.Response(body=file["data"], content_type="application/octet-stream")

    # -- batches ---------------------------------------------------------------------------

    async def _create_batch(self, request: web.Request) -> web.Response:
        try:
            body = json.loads(await request.read())
        except ValueError:
            return _error(400, "We could not parse the JSON body of your request.")
        if not isinstance(body, dict):
            return _error(400, "The request body must be a JSON object.")
        if body.get("endpoint") != ENDPOINT:
            return _error(
                400,
                f"This test server runs batches on {ENDPOINT} only, got {body.get('endpoint')!r}.",
                param="endpoint",
            )
        if body.get("completion_window") != "24h":
            return _error(400, "completion_window must be '24h'.", param="completion_window")
        file = self.files.get(str(body.get("input_file_id")))
        if file is None:
            return _error(
                400, f"Input file {body.get('input_file_id')!r} not found.", param="input_file_id"
            )
        if file["purpose"] != "batch":
            return _error(
                400, "The input file must be uploaded with purpose 'batch'.", param="input_file_id"
            )
        settings = self.server.batch
        lines, problems = read_lines(
            file["data"], max_bytes=settings.max_bytes, max_requests=settings.max_requests
        )
        batch_id = f"batch_{uuid.uuid4().hex[:24]}"
        now = int(time.time())
        self.objects[batch_id] = {
            "id": batch_id,
            "object": "batch",
            "endpoint": ENDPOINT,
            "errors": None,
            "input_file_id": file["id"],
            "completion_window": "24h",
            "status": "validating",
            "output_file_id": None,
            "error_file_id": None,
            "created_at": now,
            "in_progress_at": None,
            "expires_at": now + 86400,
            "finalizing_at": None,
            "completed_at": None,
            "failed_at": None,
            "expired_at": None,
            "cancelling_at": None,
            "cancelled_at": None,
            "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
            "metadata": body.get("metadata") or None,
        }
        self._work[batch_id] = _Batch(body, settings, lines, problems, time.monotonic())
        return _json(200, self.objects[batch_id])

    async def _retrieve_batch(self, request: web.Request) -> web.Response:
        batch_id = request.match_info["batch_id"]
        status = self.server.batch.retrieve_status
        if status is not None:
            return _error(status, "The server had an error while processing your request.")
        return _json(200, self._advance(batch_id))

    async def _list_batches(self, request: web.Request) -> web.Response:
        ids = list(reversed(self.objects))  # newest first, as OpenAI lists them
        after = request.query.get("after")
        if after in ids:
            ids = ids[ids.index(after) + 1 :]
        limit = max(1, min(100, int(request.query.get("limit", "20"))))
        page = [self._advance(i) for i in ids[:limit]]
        return _json(
            200,
            {
                "object": "list",
                "data": page,
                "first_id": page[0]["id"] if page else None,
                "last_id": page[-1]["id"] if page else None,
                "has_more": len(ids) > limit,
            },
        )

    async def _cancel_batch(self, request: web.Request) -> web.Response:
        batch_id = request.match_info["batch_id"]
        batch = self._advance(batch_id)
        if batch["status"] not in ("validating", "in_progress"):
            return _error(409, f"Cannot cancel a batch with status {batch['status']!r}.")
        self._work[batch_id].cancel_requested = time.monotonic()
        batch.update(status="cancelling", cancelling_at=int(time.time()))
        return _json(200, batch)

    # -- processing ------------------------------------------------------------------------

    def _advance(self, batch_id: str) -> dict[str, Any]:
        """Move the batch along its life as far as the clock allows; return its object."""
        batch, work = self.objects[batch_id], self._work[batch_id]
        if batch["status"] not in _ACTIVE:
            return batch
        now = int(time.time())
        if batch["status"] == "validating":
            if work.problems:
                batch.update(
                    status="failed", failed_at=now, errors={"object": "list", "data": work.problems}
                )
                return batch
            batch.update(status="in_progress", in_progress_at=now)
        elapsed = time.monotonic() - work.started
        delay = work.settings.delay
        if work.cancel_requested is not None:
            share = min(1.0, (work.cancel_requested - work.started) / delay) if delay else 0.0
            self._finish(batch, work, int(len(work.lines) * share), "cancelled", expired=False)
        elif elapsed >= delay:
            outcome = work.settings.outcome
            if outcome == "failed":
                batch.update(
                    status="failed",
                    failed_at=now,
                    errors={
                        "object": "list",
                        "data": [
                            {
                                "code": "server_error",
                                "message": "The batch failed (the test server's failure mode)."
                                + self.server.echo_key(),
                                "param": None,
                                "line": None,
                            }
                        ],
                    },
                )
            elif outcome == "expired":
                n_done = int(len(work.lines) * work.settings.expire_fraction)
                self._finish(batch, work, n_done, "expired", expired=True)
            else:
                self._finish(batch, work, len(work.lines), "completed", expired=False)
        return batch

    def _finish(
        self, batch: dict[str, Any], work: _Batch, n_done: int, status: str, *, expired: bool
    ) -> None:
        outputs, errors = [], []
        for line in work.lines[:n_done]:
            code, body = self.server.answer_line(line["body"])
            record = {
                "id": f"batch_req_{uuid.uuid4().hex[:24]}",
                "custom_id": line["custom_id"],
                "response": {
                    "status_code": code,
                    "request_id": f"req_{uuid.uuid4().hex}",
                    "body": body,
                },
                "error": None,
            }
            (outputs if code == 200 else errors).append(record)
        if expired:
            for line in work.lines[n_done:]:
                errors.append(
                    {
                        "id": f"batch_req_{uuid.uuid4().hex[:24]}",
                        "custom_id": line["custom_id"],
                        "response": None,
                        "error": {"code": "batch_expired", "message": _EXPIRED_MESSAGE},
                    }
                )
        now = int(time.time())
        if outputs:
            batch["output_file_id"] = self._add_file(
                jsonl(outputs), "batch_output.jsonl", "batch_output"
            )["id"]
        if errors:
            batch["error_file_id"] = self._add_file(
                jsonl(errors), "batch_errors.jsonl", "batch_output"
            )["id"]
        batch["status"] = status
        batch[f"{status}_at"] = now
        batch["finalizing_at"] = now
        batch["request_counts"] = {
            "total": len(work.lines),
            "completed": len(outputs),
            "failed": len(errors),
        }

    def _refuse(self, request: web.Request, route: str) -> web.Response | None:
        self.server._count_batch_call(route)
        self.server._remember(request, None)
        self.calls.append(route)
        expected = self.server._expected_auth
        sent = request.headers.get("Authorization")
        if expected is not None and sent != expected:
            echo = f" (request had Authorization: {sent})" if self.server.faults.echo_auth else ""
            return _error(401, "Incorrect API key provided." + echo, code="invalid_api_key")
        for kind, known in (("file", self.files), ("batch", self.objects)):
            ident = request.match_info.get(f"{kind}_id")
            if ident is not None and ident not in known:
                return _no_such(kind, ident)
        return None


def add_guarded_routes(
    app: web.Application,
    refuse: Callable[[web.Request, str], web.Response | None],
    routes: Sequence[tuple[str, str, str, Handler]],
) -> None:
    """Add ``routes`` (method, path, route name, handler), each behind what every Batch API
    route checks first: ``refuse`` counts the call under its route name and answers a bad key
    or an id in the path that names nothing."""
    for method, path, route, handler in routes:
        add = app.router.add_get if method == "GET" else app.router.add_post
        add(path, _guarded(refuse, route, handler))


def _guarded(
    refuse: Callable[[web.Request, str], web.Response | None], route: str, handler: Handler
) -> Handler:
    async def checked(request: web.Request) -> web.Response:
        refused = refuse(request, route)
        return refused if refused is not None else await handler(request)

    return checked


def _json(status: int, payload: dict[str, Any]) -> web.Response:
    return web.Response(
        status=status, body=json.dumps(payload).encode(), content_type="application/json"
    )


def _error(
    status: int, message: str, *, param: str | None = None, code: str | None = None
) -> web.Response:
    return _json(
        status,
        {
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": param,
                "code": code,
            }
        },
    )


def _no_such(kind: str, ident: str) -> web.Response:
    return _error(404, f"No such {kind}: {ident!r}.", code="not_found")
