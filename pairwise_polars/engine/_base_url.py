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
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

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
