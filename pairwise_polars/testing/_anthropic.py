"""The test server's Anthropic dialect: ``POST /v1/messages``, answered like the chat endpoint
(the same hashed verdicts, the same seeded fault draw, the same latency and counters) in the
Messages API's shapes, and the Message Batches routes (``_anthropic_batches.py``).

Faults read as Anthropic sends them: ``429`` a ``rate_limit_error`` with ``retry-after``,
``529`` an ``overloaded_error``, ``500`` an ``api_error``, ``401`` an ``authentication_error``,
``404`` a ``not_found_error``, ``quota`` a 400 about the credit balance; ``malformed`` and
``off_rubric`` answers as text or as the forced tool's input.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from aiohttp import web

from . import _replies
from ._anthropic_batches import MessageBatches
from ._received import NOT_JSON

if TYPE_CHECKING:
    from ._server import TestServer

_ERRORS = {
    # fault: (status, type, message); {model} is filled in
    "401": (401, "authentication_error", "invalid x-api-key"),
    "404": (404, "not_found_error", "model: {model}"),
    "429": (429, "rate_limit_error", "Number of requests has exceeded your rate limit."),
    "quota": (400, "invalid_request_error",
              "Your credit balance is too low to access the Anthropic API."),
    "500": (500, "api_error", "Internal server error"),
    "529": (529, "overloaded_error", "Overloaded"),
}  # fmt: skip
RETRYABLE_TYPES = ("rate_limit_error", "api_error", "overloaded_error")


class MessagesDialect:
    """``/v1/messages`` and ``/v1/messages/batches`` of one :class:`TestServer`."""

    def __init__(self, server: TestServer) -> None:
        self.server = server
        self.batches = MessageBatches(server, self)

    def clear(self) -> None:
        self.batches.clear()

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/messages", self.server._tracked(self._answer, "x-api-key"))
        self.batches.add_routes(app)

    def authorised(self, request: web.Request) -> bool:
        expected = self.server._expected_auth
        return expected is None or f"Bearer {request.headers.get('x-api-key')}" == expected

    async def _answer(self, request: web.Request, body: Any) -> web.StreamResponse:
        server = self.server
        if body is NOT_JSON:
            return self._fail("400", "invalid_request_error", "The body is not valid JSON.")
        if not self.authorised(request):
            return self._fault("401", "")
        if not request.headers.get("anthropic-version"):
            return self._fail("400", "invalid_request_error", "anthropic-version: header required")
        problem = invalid_params(body)
        if problem is not None:
            return self._fail("400", "invalid_request_error", problem)
        model = body["model"]
        if server._models is not None and model not in server._models:
            return self._fault("404", model)
        faults = server.faults
        fault = faults.pick(server._rng)
        if fault in ("401", "404", "quota"):
            return self._fault(fault, model)
        if fault == "429":
            headers = {**faults.retry_headers(), **spent_headers(faults.retry_after)}
            return self._fault("429", model, headers=headers)
        if fault == "timeout":
            server._record("timeout")
            await asyncio.sleep(faults.timeout_delay)
        elif server.latency > 0:
            await asyncio.sleep(server.latency)
        if fault in ("500", "529"):
            return self._fault(fault, model)
        if fault == "connection_drop":
            server._record("connection_drop")
            if request.transport is not None:
                request.transport.abort()
            return web.Response(status=500)
        if fault != "timeout":
            server._record(fault or "ok")
        return _json(200, self.message(body, fault))

    def answer_params(self, params: object) -> dict[str, Any]:
        """One batch request's ``result``: the endpoint's answer at once (no latency), with the
        same validation and the same seeded fault draw."""
        server = self.server
        if isinstance(params, dict):
            server._count_body(params)
        problem = invalid_params(params)
        if problem is not None:
            return self._line("400", errored("invalid_request_error", problem))
        assert isinstance(params, dict)
        model = params["model"]
        if server._models is not None and model not in server._models:
            return self._line("404", errored(*_error_of("404", model)[1:]))
        fault = server.faults.pick(server._rng)
        if fault not in (None, "malformed", "off_rubric"):
            kind, message = _error_of(fault, model)[1:]
            return self._line(fault, errored(kind, message + server.echo_key()))
        answer = {"type": "succeeded", "message": self.message(params, fault)}
        return self._line(fault or "ok", answer)

    def message(self, body: dict[str, Any], fault: str | None) -> dict[str, Any]:
        """The Messages reply to a valid request: a verdict (as the forced tool's input when a
        tool is forced, else as text), a plain answer, or the fault's bad content."""
        server = self.server
        turns = body["messages"]
        texts = [_replies.message_text(m) for m in turns]
        system = body.get("system")
        if isinstance(system, str):
            texts.insert(0, system)
        tool = _forced_tool(body)
        scale = _replies.score_scale(
            {"response_format": {"json_schema": {"schema": tool.get("input_schema")}}}
            if tool
            else {}
        )
        answer: str | dict[str, Any] | None = None
        if fault == "malformed":
            answer = _replies.MALFORMED_CONTENT
        elif fault == "off_rubric":
            nth = server._next_off_rubric()
            answer = json.loads(_replies.off_rubric(scale, nth)) if tool else None
            answer = answer or _replies.off_rubric(scale, nth)
        elif server.reply is not None:
            answer = server.reply(body)
        if answer is None:
            if tool or _replies.wants_verdict({}, texts):
                labelled = [{"role": "system", "content": system}] if system else []
                score = _replies.hashed_score([*labelled, *turns], texts, scale)
                answer = json.loads(_replies.verdict(score, scale))
            else:
                answer = _replies.plain_answer(turns, texts[-len(turns) :])
        assert answer is not None
        return self._reply(body["model"], answer, tool, texts)

    def _reply(
        self, model: str, answer: str | dict[str, Any], tool: dict[str, Any] | None, texts: list
    ) -> dict[str, Any]:
        server = self.server
        seq = server._next_reply()
        if isinstance(answer, dict) and tool:
            block: dict[str, Any] = {"type": "tool_use", "id": f"toolu_test_{seq}",
                                     "name": tool["name"], "input": answer}  # fmt: skip
            stop = "tool_use"
        else:
            text = json.dumps(answer) if isinstance(answer, dict) else answer
            block, stop = {"type": "text", "text": text}, "end_turn"
        prompt = _replies.token_estimate(sum(map(len, texts)))
        usage: dict[str, Any] = {
            "input_tokens": prompt,
            "output_tokens": _replies.token_estimate(len(block.get("text") or json.dumps(answer))),
        }
        if server.cached_tokens is not None:
            cached = min(server.cached_tokens, prompt)
            usage.update(input_tokens=prompt - cached, cache_read_input_tokens=cached)
        return {
            "id": f"msg_test_{seq}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [block],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }

    def _line(self, outcome: str, result: dict[str, Any]) -> dict[str, Any]:
        with self.server._lock:
            self.server._batch_outcomes[outcome] += 1
        return result

    def _fault(self, fault: str, model: str, headers: dict[str, str] | None = None) -> web.Response:
        status, kind, message = _error_of(fault, model)
        self.server._record(fault)
        return _json(status, error_body(kind, message), headers)

    def _fail(self, outcome: str, kind: str, message: str) -> web.Response:
        self.server._record(outcome)
        return _json(400, error_body(kind, message))


def invalid_params(body: object) -> str | None:
    """What the Messages API would refuse in a request body, or None."""
    if not isinstance(body, dict):
        return "The request body must be a JSON object."
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: Field required"
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        return "max_tokens: Field required (a positive integer)"
    turns = body.get("messages")
    if not isinstance(turns, list) or not turns:
        return "messages: at least one message is required"
    for i, turn in enumerate(turns):
        if not isinstance(turn, dict) or turn.get("role") not in ("user", "assistant"):
            return f"messages.{i}.role: Input should be 'user' or 'assistant'"
    if body.get("stream"):
        return "stream: not supported by this test server"
    return None


def errored(kind: str, message: str) -> dict[str, Any]:
    """A batch result of type ``errored``."""
    return {"type": "errored", "error": error_body(kind, message)}


def error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _error_of(fault: str, model: str) -> tuple[int, str, str]:
    status, kind, message = _ERRORS.get(fault, _ERRORS["500"])
    return status, kind, message.format(model=model)


def _forced_tool(body: dict[str, Any]) -> dict[str, Any] | None:
    choice, tools = body.get("tool_choice"), body.get("tools")
    if not isinstance(choice, dict) or choice.get("type") != "tool" or not isinstance(tools, list):
        return None
    return next(
        (t for t in tools if isinstance(t, dict) and t.get("name") == choice.get("name")), None
    )


def _json(status: int, payload: dict[str, Any], headers: dict[str, str] | None = None):
    return web.Response(
        status=status,
        body=json.dumps(payload).encode(),
        headers={"Content-Type": "application/json", **(headers or {})},
    )


def spent_headers(seconds: float) -> dict[str, str]:
    """A 429's rate-limit headers as Anthropic sends them: the request budget spent, refilled
    ``seconds`` from now (an RFC 3339 time)."""
    reset = datetime.now(timezone.utc) + timedelta(seconds=seconds)
    return {
        "anthropic-ratelimit-requests-limit": "50",
        "anthropic-ratelimit-requests-remaining": "0",
        "anthropic-ratelimit-requests-reset": reset.isoformat(timespec="milliseconds"),
    }
