"""A local OpenAI-compatible chat server for tests and benchmarks, on aiohttp in its own thread."""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import random
import threading
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from ._anthropic import MessagesDialect
from ._batches import BatchBackend, BatchSettings
from ._chat import ChatDialect, echo_auth, error_body, json_response
from ._faults import Faults
from ._judge_behaviours import BehaviourName, JudgeBehaviour, as_behaviour
from ._received import NOT_JSON, ReceivedRequest

ModelAnswer = Callable[[web.Request, Any], Awaitable[web.StreamResponse]]
"""A dialect's answer to a model request, given its body as ``_read_body`` read it."""
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
ReplyHook = Callable[[dict[str, Any]], "str | dict[str, Any] | None"]

_NO_FAULTS = Faults()
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
        self.chat = ChatDialect(self)
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
        self.chat.add_routes(app)
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

    async def _read_body(self, request: web.Request) -> Any:
        """A model request's JSON body, counted and remembered; ``NOT_JSON`` (and neither)
        when it is not JSON."""
        try:
            body = json.loads(await request.read())
        except ValueError:
            return NOT_JSON
        if isinstance(body, dict):
            self._count_body(body)
        self._remember(request, body)
        return body

    def _remember(self, request: web.Request, body: Any) -> None:
        seen = ReceivedRequest.of(
            request.method, request.path, request.query, request.headers, body
        )
        with self._lock:
            self._received.append(seen)

    def _next_reply(self) -> int:
        """The number of the next reply (1, 2, ...), for its id."""
        with self._lock:
            self._seq += 1
            return self._seq

    def _next_off_rubric(self) -> int:
        """How many off-rubric answers came before this one: each says something else."""
        with self._lock:
            self._off_rubric_seen += 1
            return self._off_rubric_seen - 1

    def _record(self, outcome: str) -> None:
        with self._lock:
            self._outcomes[outcome] += 1

    # -- handlers --------------------------------------------------------------------------

    def _tracked(self, answer: ModelAnswer, auth_header: str) -> Handler:
        """The route of a model request of either dialect: counted, in flight while ``answer``
        runs, captured when asked, its body read for ``answer`` (``_read_body``); an error
        answer echoes ``auth_header`` under ``echo_auth``."""

        async def tracked(request: web.Request) -> web.StreamResponse:
            with self._lock:
                self._requests += 1
                self._in_flight += 1
                self._max_in_flight = max(self._max_in_flight, self._in_flight)
            if self._capture:
                seen = CapturedRequest(dict(request.headers), await request.read())
                with self._lock:
                    self.captured.append(seen)
            try:
                response = await answer(request, await self._read_body(request))
            finally:
                with self._lock:
                    self._in_flight -= 1
            if self.faults.echo_auth and response.status >= 400:
                echo_auth(response, request.headers.get(auth_header))
            return response

        return tracked

    def _count_body(self, body: dict[str, Any]) -> None:
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
        body_hash = hashlib.blake2b(canonical, digest_size=16).hexdigest()
        with self._lock:
            self._hashes[body_hash] += 1

    def echo_key(self) -> str:
        """What a batch's error messages (per line, or the whole batch's) end with under
        ``echo_auth``: the key the batch was created with, as a leaky proxy would repeat it."""
        if not self.faults.echo_auth or self._expected_auth is None:
            return ""
        return f" (request had Authorization: {self._expected_auth})"

    def answer_line(self, body: object) -> tuple[int, dict[str, Any]]:
        """``(status, JSON body)`` for one batch line: the chat endpoint's answer at once (no
        latency), with the same validation and the same seeded fault draw per line."""
        return self.chat.answer_line(body)

    def _count_batch_call(self, route: str) -> None:
        with self._lock:
            self._batch_calls[route] += 1

    async def _unknown_route(self, request: web.Request) -> web.Response:
        return json_response(
            404,
            error_body(
                f"Unknown request URL: {request.method} {request.path}. "
                "This test server serves POST /v1/chat/completions, GET /v1/models, /v1/files "
                "and /v1/batches, and Anthropic's POST /v1/messages and /v1/messages/batches.",
                kind="invalid_request_error",
                code="unknown_url",
            ),
        )
