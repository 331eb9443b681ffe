"""A local OpenAI-compatible chat server for tests and benchmarks, on aiohttp in its own thread."""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import random
import threading
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from . import _batches, _replies
from ._anthropic import MessagesDialect
from ._batches import BatchBackend, BatchSettings
from ._faults import Faults
from ._judge_behaviours import BehaviourName, JudgeBehaviour, as_behaviour
from ._received import ReceivedRequest

ReplyHook = Callable[[dict[str, Any]], "str | dict[str, Any] | None"]

_NO_FAULTS = Faults()
_JSON_HEADERS = {"Content-Type": "application/json"}
# Long enough for in-flight answers at a realistic latency to finish on stop(), short enough
# that a test stopping while a `timeout` fault is still sleeping does not hang.
_SHUTDOWN_TIMEOUT = 0.5


@dataclass(frozen=True)
class ServerStats:
    """A snapshot of what a :class:`TestServer` has seen since it started or was reset.

    ``outcomes`` counts chat-completion requests by how they were answered: ``ok``, ``400``,
    ``401``, ``404``, ``429``, ``quota``, ``500``, ``timeout``, ``malformed``, ``off_rubric``,
    ``connection_drop`` (a Counter: absent outcomes read 0). ``request_hashes`` counts each
    distinct request body (canonical JSON, so key order does not matter), retries included,
    whether it came as a chat request or as a line of a processed batch: a count above one
    means that request was paid for again. ``batch_calls`` counts Batch API calls by route
    (``files.create``, ``files.retrieve``, ``files.content``, ``batches.create``,
    ``batches.retrieve``, ``batches.list``, ``batches.cancel``); ``batch_outcomes`` counts
    processed batch lines like ``outcomes``.

    Example:
        >>> from pairwise_polars.testing import TestServer
        >>> with TestServer() as server:
        ...     stats = server.stats
        >>> stats.requests, stats.outcomes["ok"], stats.unique_requests
        (0, 0, 0)
    """

    requests: int
    outcomes: Counter[str]
    request_hashes: Counter[str]
    in_flight: int
    max_in_flight: int
    batch_calls: Counter[str] = field(default_factory=Counter)
    batch_outcomes: Counter[str] = field(default_factory=Counter)

    @property
    def unique_requests(self) -> int:
        """How many distinct request bodies arrived."""
        return len(self.request_hashes)


@dataclass(frozen=True)
class CapturedRequest:
    """A chat-completion request as it arrived: its headers and its raw body bytes."""

    headers: dict[str, str]
    body: bytes


class TestServer:
    """An OpenAI-compatible ``/v1/chat/completions`` server on 127.0.0.1, in a background thread.

    Judge requests (``response_format`` json_schema / json_object, or a prompt naming a
    ``"score"`` key) get ``{"score": int, "reason": str}``; the score is a stable hash of the
    messages over the schema's ``score`` range (``enum``, or ``minimum``..``maximum``; default
    0..4), so the same request always gets the same score. Identical pairs do *not* get 0 by
    default: the server cannot know a metric's template. Pass ``reply`` to decide content
    yourself: it gets the request body and returns a str (the content), a dict (sent as JSON),
    or None (the default answer); it runs on the server's thread, so keep it quick and
    thread-safe. Other requests get ``"Here is my answer to: <first 60 chars of user text>"``.

    ``capture=True`` keeps every chat-completion request as it arrived (headers and raw body) in
    ``server.captured`` (emptied by ``reset()``): what a client really put on the wire.

    ``api_key`` set: any other ``Authorization: Bearer`` value is a 401 (keys are compared,
    never stored). ``models`` set: other models are a 404. ``supports_json_schema=False``: a
    json_schema ``response_format`` is a 400, as older servers answer. ``latency`` seconds pass
    before answers that reach the "model" (ok, 500, malformed, off_rubric, connection_drop);
    400/401/404/429 answer at once. ``faults``, ``latency`` and ``reply`` may be reassigned
    while serving.

    The Batch API is served too (``/v1/files``, ``/v1/batches``; settings in ``batch``, a
    ``BatchSettings`` from :mod:`pairwise_polars.testing._batches`): a batch finishes
    ``batch.delay`` seconds after it is created, its lines answered like chat requests (the
    same ``faults`` draws give per-line errors), or fails or expires as a whole when
    ``batch.outcome`` says so. Files and batches live in memory (``server.batches``) until
    ``reset()``; ``batch`` may be reassigned while serving (it applies to new batches).

    ``received`` lists the last ``keep_requests`` requests as they arrived (method, path,
    query, headers with credentials masked; the parsed body of chat requests, None for Batch
    API calls), so tests check what went on the wire. ``cached_tokens`` (reassignable):
    report that many of each answer's prompt tokens as cached
    (``usage.prompt_tokens_details.cached_tokens``, at most the prompt's), as OpenAI does for a
    prompt prefix it has seen; None (the default) reports no details. ``reasoning_models``:
    models that answer 400 to ``max_tokens`` or a ``temperature`` other than 1, as OpenAI's
    reasoning models do. ``behaviour`` (reassignable): how judge requests are scored instead of
    the hash (``"gender-biased"``, ``"noisy"``, ``"always-zero"``: ``_judge_behaviours.py``).

    Example:
        >>> import json, openai
        >>> from pairwise_polars.testing import Faults, TestServer
        >>> with TestServer(api_key="test-key") as server:
        ...     client = openai.OpenAI(base_url=server.base_url, api_key="test-key")
        ...     answer = client.chat.completions.create(
        ...         model="judge",
        ...         messages=[{"role": "user", "content": "Reply in JSON with a \\"score\\"."}],
        ...     )
        ...     client.close()
        >>> 0 <= json.loads(answer.choices[0].message.content)["score"] <= 4
        True
        >>> server.stats.outcomes["ok"]
        1
    """

    __test__ = False  # the name starts with "Test": keep pytest from collecting it

    def __init__(
        self,
        *,
        latency: float = 0.0,
        faults: Faults = _NO_FAULTS,
        api_key: str | None = None,
        models: Sequence[str] | None = None,
        seed: int = 0,
        supports_json_schema: bool = True,
        reply: ReplyHook | None = None,
        batch: BatchSettings | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        keep_requests: int = 1000,
        cached_tokens: int | None = None,
        reasoning_models: Sequence[str] = (),
        capture: bool = False,
        behaviour: JudgeBehaviour | BehaviourName | None = None,
    ) -> None:
        if latency < 0:
            raise ValueError(f"latency must not be negative, got {latency!r}.")
        self.latency = latency
        self.faults = faults
        self.reply = reply
        self.supports_json_schema = supports_json_schema
        self.host = host
        self.batch = batch or BatchSettings()
        self.batches = BatchBackend(self)
        self.messages = MessagesDialect(self)
        self.cached_tokens = cached_tokens
        self._reasoning_models = frozenset(reasoning_models)
        self._received: deque[ReceivedRequest] = deque(maxlen=keep_requests)
        self.behaviour = self._initial_behaviour = as_behaviour(behaviour)
        self._initial = (latency, faults, reply, self.batch, cached_tokens)
        # Only the expected header value is kept, so the key never shows in a repr or a dump.
        self._expected_auth = None if api_key is None else f"Bearer {api_key}"
        self._models = None if models is None else frozenset(models)
        self._seed = seed
        self._rng = random.Random(seed)
        self._requested_port = port
        self._port: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop_event: asyncio.Event | None = None
        self._lock = threading.Lock()
        self._capture = capture
        self.captured: list[CapturedRequest] = []
        self.score_distribution: list[float] | None = None
        """Set (reassignable): judge requests asking for ``logprobs`` get a verdict at this
        distribution's most likely score, with every score's log-probability (a known
        distribution over the rubric, in its order); None: ``"logprobs": null``, as from an
        endpoint without them."""
        self._zero_stats()

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT/v1``, for ``openai.OpenAI(base_url=...)``."""
        if self._port is None:
            raise RuntimeError("The TestServer is not running: call start() or use `with`.")
        return f"http://{self.host}:{self._port}/v1"

    @property
    def port(self) -> int:
        """The bound port (the OS picks one when constructed with ``port=0``)."""
        if self._port is None:
            raise RuntimeError("The TestServer is not running: call start() or use `with`.")
        return self._port

    def start(self) -> TestServer:
        """Bind and serve in a daemon thread; returns once requests are accepted."""
        if self._thread is not None:
            return self
        ready: concurrent.futures.Future[int] = concurrent.futures.Future()
        self._thread = threading.Thread(
            target=self._serve_in_thread,
            args=(ready,),
            name="pairwise-polars-test-server",
            daemon=True,
        )
        self._thread.start()
        try:
            self._port = ready.result(timeout=30)
        except BaseException:
            self._thread.join()
            self._thread = None
            raise
        return self

    def stop(self) -> None:
        """Stop serving and close every connection; safe to call twice."""
        if self._thread is None:
            return
        loop, event = self._loop, self._stop_event
        if loop is not None and event is not None and not loop.is_closed():
            loop.call_soon_threadsafe(event.set)
        self._thread.join()
        self._thread = None
        self._port = None

    def __enter__(self) -> TestServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        where = self.base_url if self._port is not None else "stopped"
        return f"<TestServer {where} latency={self.latency} faults={self.faults!r}>"

    def _serve_in_thread(self, ready: concurrent.futures.Future[int]) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._serve(ready))
        finally:
            leftovers = asyncio.all_tasks(loop)
            for task in leftovers:
                task.cancel()
            if leftovers:
                loop.run_until_complete(asyncio.gather(*leftovers, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
            self._loop = None

    async def _serve(self, ready: concurrent.futures.Future[int]) -> None:
        self._stop_event = asyncio.Event()
        runner = web.AppRunner(
            self._app(),
            access_log=None,  # per-request logging would cost more than the answer itself
            handler_cancellation=True,  # a client that gave up frees its sleeping handler
            shutdown_timeout=_SHUTDOWN_TIMEOUT,
        )
        try:
            await runner.setup()
            # A large backlog: benchmarks open hundreds of connections at once, and a full
            # accept queue costs a one-second SYN retry.
            site = web.TCPSite(runner, self.host, self._requested_port, backlog=4096)
            await site.start()
        except BaseException as exc:
            await runner.cleanup()
            ready.set_exception(exc)
            return
        ready.set_result(runner.addresses[0][1])
        try:
            await self._stop_event.wait()
        finally:
            await runner.cleanup()

    def _app(self) -> web.Application:
        # Every route in one place.
        app = web.Application(client_max_size=256 * 2**20)  # batch input files: up to 200 MB
        app.router.add_post("/v1/chat/completions", self._chat_completions)
        app.router.add_get("/v1/models", self._list_models)
        self.batches.add_routes(app)
        self.messages.add_routes(app)
        app.router.add_route("*", "/{tail:.*}", self._unknown_route)
        return app

    # -- stats -----------------------------------------------------------------------------

    @property
    def stats(self) -> ServerStats:
        """A consistent snapshot of the counters; safe to read from any thread."""
        with self._lock:
            return ServerStats(
                requests=self._requests,
                outcomes=Counter(self._outcomes),
                request_hashes=Counter(self._hashes),
                in_flight=self._in_flight,
                max_in_flight=self._max_in_flight,
                batch_calls=Counter(self._batch_calls),
                batch_outcomes=Counter(self._batch_outcomes),
            )

    def reset_stats(self) -> None:
        """Zero the counters (requests in flight stay counted as in flight)."""
        with self._lock:
            in_flight = self._in_flight
            self._zero_stats()
            self._in_flight = self._max_in_flight = in_flight

    def reset(self) -> None:
        """Back to the constructor's latency, faults, reply and batch settings, a fresh seed,
        zero counters, no files and no batches."""
        self.latency, self.faults, self.reply, self.batch, self.cached_tokens = self._initial
        self.behaviour = self._initial_behaviour
        self.score_distribution = None
        self._rng = random.Random(self._seed)
        self.batches.clear()
        self.messages.clear()
        self.reset_stats()
        with self._lock:
            self.captured = []

    def _zero_stats(self) -> None:
        self._requests = 0
        self._outcomes: Counter[str] = Counter()
        self._hashes: Counter[str] = Counter()
        self._in_flight = 0
        self._max_in_flight = 0
        self._seq = 0
        self._off_rubric_seen = 0
        self._batch_calls: Counter[str] = Counter()
        self._batch_outcomes: Counter[str] = Counter()
        self._received.clear()

    @property
    def received(self) -> list[ReceivedRequest]:
        """The last ``keep_requests`` requests, oldest first (credentials masked)."""
        with self._lock:
            return list(self._received)

    def _remember(self, request: web.Request, body: Any) -> None:
        seen = ReceivedRequest.of(
            request.method, request.path, request.query, request.headers, body
        )
        with self._lock:
            self._received.append(seen)

    def _record(self, outcome: str) -> None:
        with self._lock:
            self._outcomes[outcome] += 1

    # -- handlers --------------------------------------------------------------------------

    async def _chat_completions(self, request: web.Request) -> web.StreamResponse:
        return await self._tracked(request, self._answer, "Authorization")

    async def _tracked(
        self,
        request: web.Request,
        answer: Callable[[web.Request], Awaitable[web.StreamResponse]],
        auth_header: str,
    ) -> web.StreamResponse:
        """A model request of either dialect: counted, in flight while ``answer`` runs,
        captured when asked; an error answer echoes ``auth_header`` under ``echo_auth``."""
        with self._lock:
            self._requests += 1
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
        if self._capture:
            seen = CapturedRequest(dict(request.headers), await request.read())
            with self._lock:
                self.captured.append(seen)
        try:
            response = await answer(request)
        finally:
            with self._lock:
                self._in_flight -= 1
        if self.faults.echo_auth and response.status >= 400:
            _echo_auth(response, request.headers.get(auth_header))
        return response

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        try:
            body = json.loads(await request.read())
        except ValueError:
            return self._fail(400, "We could not parse the JSON body of your request.", param=None)
        if isinstance(body, dict):
            self._count_body(body)
        self._remember(request, body)

        if (
            self._expected_auth is not None
            and request.headers.get("Authorization") != self._expected_auth
        ):
            return self._auth_error()
        problem = _invalid_body(body)
        if problem is not None:
            return self._fail(400, problem[1], param=problem[0])
        model = body["model"]
        if self._models is not None and model not in self._models:
            return self._model_error(model)
        if model in self._reasoning_models:
            refused = _reasoning_refusal(body)
            if refused is not None:
                return self._fail(400, refused[1], param=refused[0], code="unsupported_parameter")
        response_format = body.get("response_format")
        if (
            not self.supports_json_schema
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

        faults = self.faults  # one read: a concurrent reassignment cannot split a request
        fault = faults.pick(self._rng)
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
            self._record("timeout")
            await asyncio.sleep(faults.timeout_delay)
        elif self.latency > 0:
            await asyncio.sleep(self.latency)
        if fault == "529":
            return self._fail(529, "Overloaded", kind="overloaded_error")
        if fault == "500":
            return self._fail(
                500,
                "The server had an error while processing your request. Sorry about that!",
                kind="server_error",
            )
        if fault == "connection_drop":
            self._record("connection_drop")
            if request.transport is not None:
                request.transport.abort()
            # aiohttp's write to the aborted transport fails quietly as a client disconnect.
            return web.Response(status=500)
        return self._completion(body, model, fault)

    def _count_body(self, body: dict[str, Any]) -> None:
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
        body_hash = hashlib.blake2b(canonical, digest_size=16).hexdigest()
        with self._lock:
            self._hashes[body_hash] += 1

    def answer_line(self, body: object) -> tuple[int, dict[str, Any]]:
        """``(status, JSON body)`` for one batch line: the chat endpoint's answer at once (no
        latency), with the same validation and the same seeded fault draw per line."""
        if isinstance(body, dict):
            self._count_body(body)
        problem = _invalid_body(body)
        if problem is not None:
            return self._line_outcome(
                "400", 400, _error_body(problem[1], param=problem[0], kind="invalid_request_error")
            )
        assert isinstance(body, dict)
        model = body["model"]
        if self._models is not None and model not in self._models:
            return self._line_outcome("404", *_batches.line_error("404", model))
        fault = self.faults.pick(self._rng)
        if fault not in (None, "malformed", "off_rubric"):
            return self._line_outcome(fault, *_batches.line_error(fault, model))
        payload = self._completion_payload(body, model, fault, record=False)
        return self._line_outcome(fault or "ok", 200, payload)

    def _line_outcome(
        self, outcome: str, status: int, body: dict[str, Any]
    ) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self._batch_outcomes[outcome] += 1
        return status, body

    def _count_batch_call(self, route: str) -> None:
        with self._lock:
            self._batch_calls[route] += 1

    def _completion(self, body: dict[str, Any], model: str, fault: str | None) -> web.Response:
        payload = self._completion_payload(body, model, fault)
        return web.Response(body=json.dumps(payload).encode(), headers=_JSON_HEADERS)

    def _completion_payload(
        self, body: dict[str, Any], model: str, fault: str | None, *, record: bool = True
    ) -> dict[str, Any]:
        messages = body["messages"]
        texts = [_replies.message_text(message) for message in messages]
        is_judge = _replies.wants_verdict(body, texts)
        content: str | None = None
        logprobs: dict[str, Any] | None = None
        distribution = self.score_distribution
        if is_judge and body.get("logprobs") and distribution and fault is None:
            content, logprobs = _replies.with_logprobs(_replies.score_scale(body), distribution)
        elif fault == "malformed":
            content = _replies.MALFORMED_CONTENT
        elif fault == "off_rubric":
            with self._lock:
                nth = self._off_rubric_seen
                self._off_rubric_seen += 1
            content = _replies.off_rubric(_replies.score_scale(body), nth)
        elif self.reply is not None:
            custom = self.reply(body)
            if isinstance(custom, dict):
                content = json.dumps(custom)
            elif custom is not None:
                content = str(custom)
        if content is None:
            if is_judge:
                scale = _replies.score_scale(body)
                content = _replies.verdict(self.behaviour(messages, texts, scale), scale)
            else:
                content = _replies.plain_answer(messages, texts)
        if record and fault != "timeout":  # a timeout waited out still counts as a timeout
            self._record(fault or "ok")

        with self._lock:
            self._seq += 1
            seq = self._seq
        prompt_tokens = _replies.token_estimate(sum(map(len, texts)))
        completion_tokens = _replies.token_estimate(len(content))
        usage: dict[str, Any] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        cached = self.cached_tokens
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
        names = sorted(self._models) if self._models is not None else ["test-judge"]
        data = [
            {"id": name, "object": "model", "created": 0, "owned_by": "pairwise-polars"}
            for name in names
        ]
        return _json_response(200, {"object": "list", "data": data})

    async def _unknown_route(self, request: web.Request) -> web.Response:
        return _json_response(
            404,
            _error_body(
                f"Unknown request URL: {request.method} {request.path}. "
                "This test server serves POST /v1/chat/completions, GET /v1/models, /v1/files "
                "and /v1/batches, and Anthropic's POST /v1/messages and /v1/messages/batches.",
                kind="invalid_request_error",
                code="unknown_url",
            ),
        )

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
        self._record(outcome or str(status))
        return _json_response(
            status, _error_body(message, kind=kind, param=param, code=code), headers
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


def _echo_auth(response: web.StreamResponse, authorization: str | None) -> None:
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


def _error_body(
    message: str, *, kind: str, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def _json_response(
    status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
) -> web.Response:
    merged = _JSON_HEADERS if headers is None else {**_JSON_HEADERS, **headers}
    return web.Response(status=status, body=json.dumps(payload).encode(), headers=merged)
