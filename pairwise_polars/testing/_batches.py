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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from aiohttp import web

if TYPE_CHECKING:
    from ._server import TestServer

ENDPOINT = "/v1/chat/completions"
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
        app.router.add_post("/v1/files", self._create_file)
        app.router.add_get("/v1/files/{file_id}", self._retrieve_file)
        app.router.add_get("/v1/files/{file_id}/content", self._file_content)
        app.router.add_post("/v1/batches", self._create_batch)
        app.router.add_get("/v1/batches", self._list_batches)
        app.router.add_get("/v1/batches/{batch_id}", self._retrieve_batch)
        app.router.add_post("/v1/batches/{batch_id}/cancel", self._cancel_batch)

    # -- files -----------------------------------------------------------------------------

    async def _create_file(self, request: web.Request) -> web.Response:
        if (refused := self._refuse(request, "files.create")) is not None:
            return refused
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
        if (refused := self._refuse(request, "files.retrieve")) is not None:
            return refused
        file = self.files.get(request.match_info["file_id"])
        if file is None:
            return _no_such("file", request.match_info["file_id"])
        return _json(200, {k: v for k, v in file.items() if k != "data"})

    async def _file_content(self, request: web.Request) -> web.Response:
        if (refused := self._refuse(request, "files.content")) is not None:
            return refused
        file = self.files.get(request.match_info["file_id"])
        if file is None:
            return _no_such("file", request.match_info["file_id"])
        return web.Response(body=file["data"], content_type="application/octet-stream")

    # -- batches ---------------------------------------------------------------------------

    async def _create_batch(self, request: web.Request) -> web.Response:
        if (refused := self._refuse(request, "batches.create")) is not None:
            return refused
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
        lines, problems = _read_lines(file["data"], settings)
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
        if (refused := self._refuse(request, "batches.retrieve")) is not None:
            return refused
        batch_id = request.match_info["batch_id"]
        if batch_id not in self.objects:
            return _no_such("batch", batch_id)
        status = self.server.batch.retrieve_status
        if status is not None:
            return _error(status, "The server had an error while processing your request.")
        return _json(200, self._advance(batch_id))

    async def _list_batches(self, request: web.Request) -> web.Response:
        if (refused := self._refuse(request, "batches.list")) is not None:
            return refused
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
        if (refused := self._refuse(request, "batches.cancel")) is not None:
            return refused
        batch_id = request.match_info["batch_id"]
        if batch_id not in self.objects:
            return _no_such("batch", batch_id)
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
                                "message": "The batch failed (the test server's failure mode).",
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
                _jsonl(outputs), "batch_output.jsonl", "batch_output"
            )["id"]
        if errors:
            batch["error_file_id"] = self._add_file(
                _jsonl(errors), "batch_errors.jsonl", "batch_output"
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
        return None


_LINE_ERRORS = {
    # fault: (status, type, code, message); {model} is filled in
    "401": (401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    "404": (404, "invalid_request_error", "model_not_found",
            "The model `{model}` does not exist or you do not have access to it."),
    "429": (429, "requests", "rate_limit_exceeded", "Rate limit reached for requests."),
    "quota": (429, "insufficient_quota", "insufficient_quota",
              "You exceeded your current quota, please check your plan and billing details."),
    "500": (500, "server_error", None,
            "The server had an error while processing your request. Sorry about that!"),
}  # fmt: skip


def line_error(fault: str, model: str) -> tuple[int, dict[str, Any]]:
    """The status and error body of a batch line that met ``fault`` (a timeout or a dropped
    connection on the chat endpoint is a 500 inside a batch)."""
    status, kind, code, message = _LINE_ERRORS.get(fault, _LINE_ERRORS["500"])
    error = {"message": message.format(model=model), "type": kind, "param": None, "code": code}
    return status, {"error": error}


def _read_lines(data: bytes, settings: BatchSettings) -> tuple[list[dict], list[dict]]:
    """The input file's requests, and the validation problems OpenAI would report."""
    problems: list[dict[str, Any]] = []
    lines: list[dict[str, Any]] = []
    seen: set[str] = set()
    if len(data) > settings.max_bytes:
        problems.append(
            _problem(
                "file_too_large",
                f"The input file is {len(data)} bytes; the limit is {settings.max_bytes}.",
            )
        )
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
        except ValueError:
            problems.append(_problem("invalid_json_line", "This line is not valid JSON.", number))
            continue
        custom_id = line.get("custom_id") if isinstance(line, dict) else None
        if not isinstance(custom_id, str) or not custom_id:
            problems.append(_problem("missing_custom_id", "Each line needs a custom_id.", number))
        elif custom_id in seen:
            problems.append(
                _problem(
                    "duplicate_custom_id", f"The custom_id {custom_id!r} is not unique.", number
                )
            )
        elif line.get("method") != "POST" or line.get("url") != ENDPOINT:
            problems.append(_problem("invalid_url", f"Each line must POST to {ENDPOINT}.", number))
        elif not isinstance(line.get("body"), dict):
            problems.append(_problem("invalid_body", "Each line needs a JSON object body.", number))
        else:
            seen.add(custom_id)
            lines.append(line)
    if len(lines) > settings.max_requests:
        problems.append(
            _problem(
                "too_many_requests",
                f"The input file has {len(lines)} requests; the limit is {settings.max_requests}.",
            )
        )
    if not lines and not problems:
        problems.append(_problem("empty_file", "The input file holds no requests."))
    return lines, problems


def _problem(code: str, message: str, line: int | None = None) -> dict[str, Any]:
    return {"code": code, "message": message, "param": None, "line": line}


def _jsonl(records: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


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
