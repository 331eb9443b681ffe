"""A chat endpoint that misbehaves below HTTP's level, for the client's resource bounds: it drips
its headers or its body a byte at a time, answers with a huge body or a gzip bomb, or never
accepts a connection. Raw sockets on 127.0.0.1, in a background thread."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import socket
import threading
from typing import Literal

HostileMode = Literal["drip-headers", "drip-body", "huge", "gzip-bomb", "never-accept"]
MODES: tuple[HostileMode, ...] = ("drip-headers", "drip-body", "huge", "gzip-bomb", "never-accept")


class HostileServer:
    """A ``/v1/chat/completions`` look-alike on 127.0.0.1 in one of :data:`MODES`.

    ``drip-headers``: the status line, then one byte of headers every ``interval`` seconds.
    ``drip-body``: whole headers (``Content-Length`` 1 MB), then one body byte per ``interval``.
    ``huge``: a valid chat completion whose answer is ``size`` bytes, sent at full speed.
    ``gzip-bomb``: the same ``size`` bytes of answer gzip-compressed (a few KB on the wire).
    ``never-accept``: a listening socket whose backlog is full: connects hang, never refused.

    Example:
        >>> with HostileServer("huge", size=2_000) as server:
        ...     server.base_url.startswith("http://127.0.0.1:")
        True
    """

    __test__ = False

    def __init__(self, mode: HostileMode, *, size: int = 8 * 2**20, interval: float = 1.0):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.mode, self.size, self.interval = mode, size, interval
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Event | None = None
        self._sockets: list[socket.socket] = []
        self._writers: set[asyncio.StreamWriter] = set()
        self._built: bytes | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> HostileServer:
        if self.mode == "never-accept":
            self._fill_backlog()
            return self
        if self.mode in ("huge", "gzip-bomb"):
            self._body()  # built before serving: an answer is sent at full speed
        ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(ready,), daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(5)
        for sock in self._sockets:
            sock.close()

    def _fill_backlog(self) -> None:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)  # never accepted: the kernel queues one connection, then drops SYNs
        self.port = listener.getsockname()[1]
        self._sockets.append(listener)
        for _ in range(8):
            filler = socket.socket()
            filler.settimeout(0.2)
            self._sockets.append(filler)
            try:
                filler.connect(("127.0.0.1", self.port))
            except OSError:  # the queue is full: new connections now hang
                return

    def _serve(self, ready: threading.Event) -> None:
        async def main() -> None:
            self._stop = asyncio.Event()
            server = await asyncio.start_server(self._answer, "127.0.0.1", 0)
            self.port = server.sockets[0].getsockname()[1]
            ready.set()
            async with server:
                await self._stop.wait()
            for writer in list(self._writers):  # every connection closed: no dangling sockets
                writer.close()
            handlers = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in handlers:
                task.cancel()
            await asyncio.gather(*handlers, return_exceptions=True)

        self._loop = asyncio.new_event_loop()
        try:
            self._loop.run_until_complete(main())
        finally:
            self._loop.close()

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        with contextlib.suppress(Exception):  # the client hangs up: that is its right
            await reader.readuntil(b"\r\n\r\n")
            if self.mode == "drip-headers":
                writer.write(b"HTTP/1.1 200 OK\r\n")
                await self._drip(writer, b"X-Slow: " + b"a" * 10_000)
            elif self.mode == "drip-body":
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
                writer.write(b"Content-Length: 1000000\r\n\r\n")
                await self._drip(writer, b" " * 1_000_000)
            else:
                body = self._body()
                head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                if self.mode == "gzip-bomb":
                    head += "Content-Encoding: gzip\r\n"
                writer.write(f"{head}Content-Length: {len(body)}\r\n\r\n".encode())
                for start in range(0, len(body), 2**16):
                    writer.write(body[start : start + 2**16])
                    await writer.drain()
        writer.close()
        self._writers.discard(writer)

    def _body(self) -> bytes:
        """The answer, built once (a retry gets the same bytes at once)."""
        if self._built is None:
            body = _completion(self.size)
            self._built = gzip.compress(body, 6) if self.mode == "gzip-bomb" else body
        return self._built

    async def _drip(self, writer: asyncio.StreamWriter, data: bytes) -> None:
        for byte in data:
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(self.interval)


def _completion(size: int) -> bytes:
    content = json.dumps({"score": 0, "reason": "x" * size})
    payload = {
        "id": "chatcmpl-hostile",
        "object": "chat.completion",
        "model": "judge",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    return json.dumps(payload).encode()
