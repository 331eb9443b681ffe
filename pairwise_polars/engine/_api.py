"""An OpenAI-compatible API as every judge and target names it: the model, where it is, the
key (never shown), the headers its requests carry, and the SDK client built from the same
settings."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, ClassVar

import openai

from pairwise_polars._errors import Fix, JudgeError
from pairwise_polars.engine._base_url import (
    OPENAI_API,
    endpoint_id,
    needs_key,
    resolve_base_url,
    shown_url,
    split_query,
    url_secrets,
)
from pairwise_polars.engine._wire import unsent_http_client


@dataclass(frozen=True, repr=False)
class Endpoint:
    """An OpenAI-compatible API: the model, where it is, and the key. Holds the key and client
    code every judge and target shares: the base URL from ``base_url`` or ``OPENAI_BASE_URL``,
    the key from ``api_key`` or ``OPENAI_API_KEY`` (required for OpenAI's own API only), a
    clear error when it is missing, and a repr that never shows it."""

    model: str
    _: KW_ONLY
    base_url: str | None = None
    api_key: str | None = field(default=None, compare=False)
    organization: str | None = None
    """Sent as ``OpenAI-Organization`` (default: ``OPENAI_ORG_ID``)."""
    project: str | None = None
    """Sent as ``OpenAI-Project`` (default: ``OPENAI_PROJECT_ID``)."""
    default_headers: Mapping[str, str] | None = field(default=None, compare=False, hash=False)
    """Headers sent with every request, after (so overriding) the auth and organization ones;
    never shown in a repr nor part of a cache key (they may carry credentials)."""

    _repr_fields: ClassVar[tuple[str, ...]] = ()
    """Settings shown in the repr after the model, the URL and the masked key."""
    _key_env: ClassVar[str] = "OPENAI_API_KEY"
    """The environment variable the key comes from (another provider's judge names its own)."""
    _url_env: ClassVar[str] = "OPENAI_BASE_URL"

    def __repr__(self) -> str:
        key = None if self._key() is None else "'***'"
        base_url = None if self.base_url is None else shown_url(self.base_url)
        shown = "".join(f", {name}={_shown(getattr(self, name))}" for name in self._repr_fields)
        return (
            f"{type(self).__name__}(model={self.model!r}, base_url={base_url!r}, "
            f"api_key={key}{shown})"
        )

    def _key(self) -> str | None:
        return self.api_key or os.environ.get(self._key_env)

    def _where(self) -> str:
        """The endpoint as messages name it (credentials in its URL masked)."""
        url = self._base_url()
        return "the OpenAI API" if url == OPENAI_API else shown_url(url)

    def _secrets(self) -> tuple[str, ...]:
        """What must never be written anywhere: the key and the credentials in the URL."""
        key = self._key()
        return (*((key,) if key else ()), *url_secrets(self._base_url()))

    def _base_url(self) -> str:
        """The base URL requests go to, without a trailing slash: ``base_url``, else
        ``OPENAI_BASE_URL``, else OpenAI's API."""
        return resolve_base_url(self.base_url)

    def _headers(self) -> dict[str, str]:
        """The headers every request carries besides the SDK's own: ``Authorization: Bearer
        KEY`` when there is a key (no auth header without one: local servers accept that),
        ``OpenAI-Organization`` / ``OpenAI-Project`` when set, then ``default_headers``."""
        key = self._key()
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        organization = self.organization or os.environ.get("OPENAI_ORG_ID")
        project = self.project or os.environ.get("OPENAI_PROJECT_ID")
        if organization:
            headers["OpenAI-Organization"] = organization
        if project:
            headers["OpenAI-Project"] = project
        extra = dict(self.default_headers or {})
        overridden = {name.lower() for name in extra}
        return {n: v for n, v in headers.items() if n.lower() not in overridden} | extra

    def _scope(self) -> str:
        """The endpoint's URL: what identifies state kept about it (e.g. batch ids)."""
        return self._base_url()

    def _endpoint_id(self) -> str:
        """The endpoint in cache keys: scheme, host, port and path (never a key or a query)."""
        return endpoint_id(self._base_url())

    def ready(self) -> None:
        """Raise now what stops a run before its first request (no key where one is needed),
        so a caller can say so before it shows any progress; a run checks again as it starts."""
        self._check_key()

    def _check_key(self) -> None:
        """A key is needed for OpenAI's API only; other servers decide for themselves."""
        if self._key() is not None or not needs_key(self._base_url()):
            return
        name = type(self).__name__
        raise JudgeError(
            f"No API key for {name}: set the {self._key_env} environment variable or pass "
            f"{name}(model, api_key=...). For a local server (vLLM, Ollama, llama.cpp) pass "
            f"base_url=... or set {self._url_env}; no key is needed then.",
            detail=f"No API key for the model {self.model!r}.",
            fixes=[Fix("api_key", {"api_key": self._key_env, "base_url": "URL"})],
        )

    def _sdk_headers(self) -> dict[str, str]:
        """The headers the SDK sends with a request to this endpoint (auth when there is a key,
        content type, its User-Agent and ``X-Stainless-*``/``OpenAI-*`` headers, then
        :meth:`_headers`), read off an SDK client built from the same settings, so both
        transports send the same; built once per process and settings. That client never sends:
        its HTTP client has a transport that cannot (so no connection pool, SSL context or HTTP
        library is loaded: ~80 ms of CPU a process, measured, down to ~0.5 ms).
        """
        settings = json.dumps([type(self).__qualname__, self._base_url(), self._headers()])
        digest = hashlib.sha256(settings.encode()).hexdigest()  # the key is not kept as such
        if digest not in _SDK_HEADERS:
            client = self._client(http_client=unsent_http_client())
            sent = {**client.auth_headers, **client.default_headers}
            _SDK_HEADERS[digest] = {
                name: value
                for name, value in sent.items()
                if isinstance(value, str)
                and not (name == "Authorization" and value == _NO_KEY_AUTH)
            }
        return dict(_SDK_HEADERS[digest])

    def _client(self, **options: Any) -> openai.AsyncOpenAI:
        """An SDK client for this endpoint, built from :meth:`_base_url` and :meth:`_headers`;
        ``options`` go to ``openai.AsyncOpenAI``. Without a key none is sent: the SDK insists
        on one, so it gets a placeholder that its HTTP client removes from every request."""
        self._check_key()
        headers = self._headers()
        key = self._key()
        if key is None:
            http_client = options.pop("http_client", None) or openai.DefaultAsyncHttpxClient()
            hooks = http_client.event_hooks
            http_client.event_hooks = {**hooks, "request": [*hooks["request"], _drop_placeholder]}
            options["http_client"] = http_client
        base_url, query = split_query(self._base_url())
        if query:  # the SDK would glue the path after the query
            options["default_query"] = {**query, **options.get("default_query", {})}
        return openai.AsyncOpenAI(
            api_key=key or _NO_KEY,
            base_url=base_url,
            default_headers=headers,
            **options,
        )


_SDK_HEADERS: dict[str, dict[str, str]] = {}
_NO_KEY = "pairwise-polars-no-key"
_NO_KEY_AUTH = f"Bearer {_NO_KEY}"


async def _drop_placeholder(request: Any) -> None:
    """An HTTP client hook: no ``Authorization`` header rather than a made-up key."""
    if request.headers.get("Authorization") == _NO_KEY_AUTH:
        del request.headers["Authorization"]


def _shown(value: Any) -> str:
    return repr(value if value is None or isinstance(value, (int, float)) else str(value))
