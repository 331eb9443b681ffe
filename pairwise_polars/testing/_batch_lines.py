"""A Batch API input file read line by line as OpenAI validates it, and the error a line that
met a fault carries in the output file."""

from __future__ import annotations

import json
from typing import Any

ENDPOINT = "/v1/chat/completions"
"""The only URL a batch line may POST to."""

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


def read_lines(data: bytes, *, max_bytes: int, max_requests: int) -> tuple[list[dict], list[dict]]:
    """The input file's requests, and the validation problems OpenAI would report."""
    problems: list[dict[str, Any]] = []
    lines: list[dict[str, Any]] = []
    seen: set[str] = set()
    if len(data) > max_bytes:
        problems.append(
            _problem(
                "file_too_large",
                f"The input file is {len(data)} bytes; the limit is {max_bytes}.",
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
    if len(lines) > max_requests:
        problems.append(
            _problem(
                "too_many_requests",
                f"The input file has {len(lines)} requests; the limit is {max_requests}.",
            )
        )
    if not lines and not problems:
        problems.append(_problem("empty_file", "The input file holds no requests."))
    return lines, problems


def _problem(code: str, message: str, line: int | None = None) -> dict[str, Any]:
    return {"code": code, "message": message, "param": None, "line": line}


def jsonl(records: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()
