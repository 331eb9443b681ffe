"""What the chat engine is given to send: a request with its cache key and its chat, typed by
its caller for what the caller's hooks read (a judge's rubric maximum, a target's sample)."""

from __future__ import annotations

from typing import Protocol


class Request(Protocol):
    """One request to send. ``messages`` is the chat JSON-encoded as the requests frame stores
    it (decoded only when a body or a re-ask needs it). A caller's request type (a NamedTuple
    made from the frame's rows costs no more than the row) adds its own fields."""

    @property
    def key(self) -> str: ...

    @property
    def messages(self) -> str: ...
