"""Where an OpenAI-compatible API is: the base URL as resolved, what identifies it in a cache
key, and whether it is OpenAI's own API (the one endpoint that always needs a key).

>>> resolve_base_url("http://LOCALHOST:11434/v1/")
'http://LOCALHOST:11434/v1'
>>> endpoint_id("http://user:pw@LocalHost:11434/v1/?x=1")
'http://localhost:11434/v1'
>>> endpoint_id("https://api.openai.com/v1")
'https://api.openai.com:443/v1'
>>> needs_key("https://api.openai.com/v1"), needs_key("http://10.0.0.7:8000/v1")
(True, False)
>>> api_url("https://gw.example/v1?api-key=k", "chat/completions")
'https://gw.example/v1/chat/completions?api-key=k'
>>> shown_url("https://u:pw@gw.example/v1?api-key=s3cr3t&v=2")
'https://u:***@gw.example/v1?api-key=***&v=***'
"""

from __future__ import annotations

import os
from urllib.parse import parse_qsl, urlsplit, urlunsplit

OPENAI_API = "https://api.openai.com/v1"
"""The base URL when neither ``base_url`` nor ``OPENAI_BASE_URL`` names one."""
_DEFAULT_PORTS = {"http": 80, "https": 443}
_KEYED_HOSTS = ("api.openai.com", "api.anthropic.com")
"""Hosts that refuse every request without a key: OpenAI's and Anthropic's own APIs."""


def resolve_base_url(base_url: str | None) -> str:
    """The base URL requests go to, without a trailing slash: ``base_url``, else the
    ``OPENAI_BASE_URL`` environment variable, else OpenAI's API."""
    return (base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_API).rstrip("/")


def endpoint_id(url: str) -> str:
    """What identifies an endpoint in a cache key: scheme, host, port and path, normalised
    (lower-case scheme and host, the default port written out, no trailing slash). Never the
    user name or password of the URL, its query or its fragment."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:  # a port that is not a number: keep the text as given
        port = None
    shown_port = port if port is not None else _DEFAULT_PORTS.get(scheme)
    netloc = host if shown_port is None else f"{host}:{shown_port}"
    return f"{scheme}://{netloc}{parts.path.rstrip('/')}"


def needs_key(url: str) -> bool:
    """Whether the endpoint refuses requests without a key: OpenAI's API does; a server
    elsewhere (Ollama, vLLM, llama.cpp, a gateway) decides for itself and says so with a 401."""
    host = (urlsplit(url).hostname or "").lower()
    return host in _KEYED_HOSTS


def shown_url(url: str) -> str:
    """The URL as messages, reprs and reports show it: every query value and the password
    masked (a gateway may take its key as ``?api-key=...``)."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password:
        netloc = netloc.replace(f":{parts.password}@", ":***@", 1)
    query = "&".join(
        f"{name}=***" if value else name
        for name, value in parse_qsl(parts.query, keep_blank_values=True)
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def has_credentials(url: str) -> bool:
    """Whether the URL carries a user name or password (``https://user:pw@host/v1``)."""
    parts = urlsplit(url)
    return parts.username is not None or parts.password is not None


def url_secrets(url: str) -> tuple[str, ...]:
    """The credentials a URL may carry (its password and query values): redacted from every
    text a server sends back, as the key is."""
    parts = urlsplit(url)
    found = [value for _, value in parse_qsl(parts.query) if value]
    if parts.password:
        found.append(parts.password)
    return tuple(found)


def api_url(base_url: str, path: str) -> str:
    """``path`` under ``base_url``, the base URL's query (a gateway's key or API version) kept
    after the path."""
    parts = urlsplit(base_url)
    joined = f"{parts.path.rstrip('/')}/{path.lstrip('/')}" if path else parts.path
    return urlunsplit((parts.scheme, parts.netloc, joined, parts.query, ""))


def split_query(base_url: str) -> tuple[str, dict[str, str]]:
    """The base URL without its query, and the query as the SDK's ``default_query``."""
    parts = urlsplit(base_url)
    bare = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    return bare, dict(parse_qsl(parts.query, keep_blank_values=True))
