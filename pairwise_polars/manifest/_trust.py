"""A manifest is code: what it may make the package do with secrets.

The judge block's ``api_key_env`` names an environment variable whose value is sent as a bearer
token to the block's ``base_url``. A manifest changed in a pull request could otherwise send any
CI secret to any host, so by default it may only name the variables the package's providers
document (:data:`PROVIDER_KEYS`); any other name must be allowed by the person running the
command (``--allow-key-env NAME``, ``load_manifest(..., allow_key_env=[NAME])``).
"""

from __future__ import annotations

from collections.abc import Iterable

PROVIDER_KEYS = frozenset({"OPENAI_API_KEY", "ANTHROPIC_API_KEY"})
"""The key variables of the judges the package ships: the only names a manifest may give
``api_key_env`` without the user's opt-in."""


def key_env_problem(name: str, allowed: Iterable[str] = ()) -> str | None:
    """Why a manifest may not name ``name`` as ``api_key_env`` (None when it may).

    >>> key_env_problem("OPENAI_API_KEY") is None, key_env_problem("MY_KEY", ["MY_KEY"]) is None
    (True, True)
    >>> key_env_problem("CARGO_REGISTRY_TOKEN")[:61]
    "'CARGO_REGISTRY_TOKEN' is not a variable the package's judges"
    """
    if name in PROVIDER_KEYS or name in set(allowed):
        return None
    return (
        f"{name!r} is not a variable the package's judges document "
        f"({', '.join(sorted(PROVIDER_KEYS))}); its value would be sent as a bearer token to "
        "base_url, and a manifest (which a pull request can change) may not choose any other "
        "variable for that. If this variable really holds the judge's key, allow it where the "
        f"command is run: --allow-key-env {name} (in Python: load_manifest(path, "
        f"allow_key_env=[{name!r}]))"
    )
