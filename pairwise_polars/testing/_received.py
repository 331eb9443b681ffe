"""What the test server received: each chat request's method, path, query, headers and body,
so tests check exactly what went on the wire. Credentials are masked as they arrive: a key
never sits in the server's memory, a repr or a test log."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

NOT_JSON: Any = object()
"""What :meth:`TestServer._read_body` gives for a body that is not JSON (``null`` is JSON)."""

CREDENTIAL_HEADERS = ("authorization", "api-key", "x-api-key")
"""Headers whose values are masked (``Bearer ***``, ``***``): their presence is what is kept."""


@dataclass(frozen=True)
class ReceivedRequest:
    """One request as it arrived. ``headers`` has lower-case names and masked credentials;
    ``body`` is the parsed JSON (None when it was not JSON).

    Example:
        >>> ReceivedRequest.of("POST", "/v1/chat/completions", {},
        ...                    {"Authorization": "Bearer sk-1"}, {"model": "m"}).headers
        {'authorization': 'Bearer ***'}
    """

    method: str
    path: str
    query: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Any = None

    @classmethod
    def of(
        cls,
        method: str,
        path: str,
        query: Mapping[str, str],
        headers: Mapping[str, str],
        body: Any,
    ) -> ReceivedRequest:
        kept = {name.lower(): _masked(name, value) for name, value in headers.items()}
        return cls(method=method, path=path, query=dict(query), headers=kept, body=body)


def _masked(name: str, value: str) -> str:
    if name.lower() not in CREDENTIAL_HEADERS:
        return value
    scheme, _, token = value.partition(" ")
    return f"{scheme} ***" if token else "***"
