"""The test server's OpenAI dialect: ``POST /v1/chat/completions`` and ``GET /v1/models``,
with the refusals a real endpoint gives (key, body, model, reasoning-model fields, an
unsupported ``response_format``) and the seeded faults, in OpenAI's error shapes.

Batch lines are answered here too (:meth:`ChatDialect.answer_line`), at once and with the same
validation and fault draw, so a batch and the chat endpoint disagree in nothing but latency.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING, Any

from aiohttp import web

from . import _replies
from ._batch_lines import line_error
from ._faults import Faults
from ._received import NOT_JSON

if TYPE_CHECKING:
    from ._server import TestServer

JSON_HEADERS = {"Content-Type": "application/json"}


class ChatDialect:
    """``/v1/chat/completions`` and ``/v1/models`` of one :class:`TestServer`."""

    def __init__(self, server: TestServer) -> None:
        self.server = server

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post(
            "/v1/chat/completions", self.server._tracked(self._answer, "Authorization")
        )
        app.router.add_get("/v1/models", self._list_models)

    async def _answer(self, request: web.Request, body: Any) -> web.StreamResponse:
        server = self.server
        if body is NOT_JSON:
            return self._fail(400, "We could not parse the JSON body of your request.", param=None)
        refused = self._refused(request, body)
        if refused is not None:
            return refused
        faults = server.faults  # one read: a concurrent reassignment cannot split a request
        return await self._faulted(request, body, faults, faults.pick(server._rng))

    def _refused(self, request: web.Request, body: Any) -> web.Response | None:
        """The 4xx a real endpoint gives this request (key, body, model, fields), or None."""
        server = self.server
        if (
            server._expected_auth is not None
            and request.headers.get("Authorization") != server._expected_auth
        ):
            return self._auth_error()
        problem = _invalid_body(body)
        if problem is not None:
            return self._fail(400, problem[1], param=problem[0])
        model = body["model"]
        if server._models is not None and model not in server._models:
            return self._model_error(model)
        if model in server._reasoning_models:
            refused = _reasoning_refusal(body)
            if refused is not None:
                return self._fail(400, refused[1], param=refused[0], code="unsupported_parameter")
        response_format = body.get("response_format")
        if (
            not server.supports_json_schema
            and isinstance(response_format, dict)
            and response_format.get("type") == "json_schema"
        ):
            return self._fail(
                400,
                "response_format json_schema is not supported by this server; "
                "use json_object or plain prompting.",
                param="response_format",
                code="unsupported_parameter",
            )
        return None

    async def _faulted(
        self, request: web.Request, body: dict[str, Any], faults: Faults, fault: str | None
    ) -> web.StreamResponse:
        """The answer with the drawn ``fault`` (None: a plain answer), after the latency."""
        server, model = self.server, body["model"]
        if fault == "401":
            return self._auth_error()
        if fault == "404":
            return self._model_error(model)
        if fault == "429":
            return self._rate_limited(faults)
        if fault == "quota":
            return self._fail(
                429,
                "You exceeded your current quota, please check your plan and billing details.",
                kind="insufficient_quota",
                code="insufficient_quota",
                outcome="quota",
            )
        if fault == "timeout":
            server._record("timeout")
            await asyncio.sleep(faults.timeout_delay)
        elif server.latency > 0:
            await asyncio.sleep(server.latency)
        if fault == "529":
            return self._fail(529, "Overloaded", kind="overloaded_error")
        if fault == "500":
            return self._fail(
                500,
                "The server had an error while processing your request. Sorry about that!",
                kind="server_error",
            )
        if fault == "connection_drop":
            server._record("connection_drop")
            if request.transport is not None:
                request.transport.abort()
            # aiohttp's write to the aborted transport fails quietly as a client disconnect.
            return web.Response(status=500)
        return self._completion(body, model, fault)

    def answer_line(self, body: object) -> tuple[int, dict[str, Any]]:
        """``(status, JSON body)`` for one batch line: the chat endpoint's answer at once (no
        latency), with the same validation and the same seeded fault draw per line."""
        server = self.server
        if isinstance(body, dict):
            server._count_body(body)
        problem = _invalid_body(body)
        if problem is not None:
            return self._line_outcome(
                "400", 400, error_body(problem[1], param=problem[0], kind="invalid_request_error")
            )
        assert isinstance(body, dict)
        model = body["model"]
        if server._models is not None and model not in server._models:
            return self._line_outcome("404", *line_error("404", model))
        fault = server.faults.pick(server._rng)
        if fault not in (None, "malformed", "off_rubric"):
            status, error = line_error(fault, model)
            error["error"]["message"] += server.echo_key()
            return self._line_outcome(fault, status, error)
        payload = self._completion_payload(body, model, fault, record=False)
        return self._line_outcome(fault or "ok", 200, payload)

    def _line_outcome(
        self, outcome: str, status: int, body: dict[str, Any]
    ) -> tuple[int, dict[str, Any]]:
        with self.server._lock:
            self.server._batch_outcomes[outcome] += 1
        return status, body

    def _completion(self, body: dict[str, Any], model: str, fault: str | None) -> web.Response:
        payload = self._completion_payload(body, model, fault)
        return web.Response(body=json.dumps(payload).encode(), headers=JSON_HEADERS)

    def _completion_payload(
        self, body: dict[str, Any], model: str, fault: str | None, *, record: bool = True
    ) -> dict[str, Any]:
        server = self.server
        messages = body["messages"]
        texts = [_replies.message_text(message) for message in messages]
        is_judge = _replies.wants_verdict(body, texts)
        content: str | None = None
        logprobs: dict[str, Any] | None = None
        distribution = server.score_distribution
        if is_judge and body.get("logprobs") and distribution and fault is None:
            content, logprobs = _replies.with_logprobs(_replies.score_scale(body), distribution)
        elif fault == "malformed":
            content = _replies.MALFORMED_CONTENT
        elif fault == "off_rubric":
            nth = server._next_off_rubric()
            content = _replies.off_rubric(_replies.score_scale(body), nth)
        elif server.reply is not None:
            custom = server.reply(body)
            if isinstance(custom, dict):
                content = json.dumps(custom)
            elif custom is not None:
                content = str(custom)
        if content is None:
            if is_judge:
                scale = _replies.score_scale(body)
                content = _replies.verdict(server.behaviour(messages, texts, scale), scale)
            else:
                content = _replies.plain_answer(messages, texts)
        if record and fault != "timeout":  # a timeout waited out still counts as a timeout
            server._record(fault or "ok")

        seq = server._next_reply()
        prompt_tokens = _replies.token_estimate(sum(map(len, texts)))
        completion_tokens = _replies.token_estimate(len(content))
        usage: dict[str, Any] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        cached = server.cached_tokens
        if cached is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": min(cached, prompt_tokens)}
        return {
            "id": f"chatcmpl-test-{seq}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": "pairwise-polars-test",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": None},
                    "logprobs": logprobs,
                    "finish_reason": "stop",
                }
            ],
            "usage": usage,
        }

    async def _list_models(self, request: web.Request) -> web.Response:
        names = sorted(self.server._models) if self.server._models is not None else ["test-judge"]
        data = [
            {"id": name, "object": "model", "created": 0, "owned_by": "pairwise-polars"}
            for name in names
        ]
        return json_response(200, {"object": "list", "data": data})

    # -- error answers ---------------------------------------------------------------------

    def _fail(
        self,
        status: int,
        message: str,
        *,
        kind: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
        outcome: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> web.Response:
        self.server._record(outcome or str(status))
        return json_response(
            status, error_body(message, kind=kind, param=param, code=code), headers
        )

    def _auth_error(self) -> web.Response:
        return self._fail(401, "Incorrect API key provided.", code="invalid_api_key")

    def _model_error(self, model: str) -> web.Response:
        return self._fail(
            404,
            f"The model `{model}` does not exist or you do not have access to it.",
            code="model_not_found",
        )

    def _rate_limited(self, faults: Faults) -> web.Response:
        retry_after = faults.retry_after
        headers = faults.retry_headers()
        return self._fail(
            429,
            f"Rate limit reached for requests. Please try again in {retry_after:g}s.",
            kind="requests",
            code="rate_limit_exceeded",
            headers=headers,
        )


def echo_auth(response: web.StreamResponse, authorization: str | None) -> None:
    """Append the request's Authorization header to an error answer's message, as some
    proxies do."""
    if not isinstance(response, web.Response) or not isinstance(response.body, bytes):
        return
    try:
        payload = json.loads(response.body)
        payload["error"]["message"] += f" (request had Authorization: {authorization})"
    except (ValueError, KeyError, TypeError):
        return
    response.body = json.dumps(payload).encode()


def _invalid_body(body: object) -> tuple[str | None, str] | None:
    """(param, message) for a body the OpenAI API would refuse, or None."""
    if not isinstance(body, dict):
        return None, "The request body must be a JSON object."
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model", "you must provide a model parameter"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages", "'messages' must be a non-empty list of message objects."
    if body.get("stream"):
        return "stream", "stream=true is not supported by this test server."
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            return f"messages[{i}]", f"messages[{i}] must be an object with a string 'role'."
    return None


def _reasoning_refusal(body: dict[str, Any]) -> tuple[str, str] | None:
    """(param, message) of OpenAI's 400 to a reasoning model sent the older fields."""
    if "max_tokens" in body:
        return "max_tokens", (
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
            "'max_completion_tokens' instead."
        )
    if body.get("temperature", 1) != 1:
        return "temperature", (
            f"Unsupported value: 'temperature' does not support {body['temperature']} with this "
            "model. Only the default (1) value is supported."
        )
    return None


def error_body(
    message: str, *, kind: str, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def json_response(
    status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
) -> web.Response:
    merged = JSON_HEADERS if headers is None else {**JSON_HEADERS, **headers}
    return web.Response(status=status, body=json.dumps(payload).encode(), headers=merged)
