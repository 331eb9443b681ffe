"""A manifest is code: what it may make the package do with secrets.

The judge block's ``api_key_env`` names an environment variable whose value is sent as a bearer
token to the block's ``base_url``. A manifest changed in a pull request could otherwise send any
CI secret to any host, so it may only name variables that look like a model API's key
(``*_API_KEY``, ``*_TOKEN``), and not the tokens CI platforms and package registries hand to
jobs; anything else must be allowed by the person running the command
(``--allow-key-env NAME``, ``load_manifest(..., allow_key_env=[NAME])``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

KEY_LIKE = re.compile(r"^(?:\w+_)?API_KEY$|^\w+_TOKEN$", re.IGNORECASE)
"""Names a manifest may give ``api_key_env`` without the user's opt-in."""
PLATFORM_PREFIXES = (
    "ACTIONS_",
    "AWS_",
    "BUILDKITE_",
    "CI_",
    "CIRCLE_",
    "GH_",
    "GITHUB_",
    "GITLAB_",
    "RUNNER_",
    "VAULT_",
)
"""Prefixes of the variables CI platforms and clouds give jobs: never a judge's key by default."""
PLATFORM_NAMES = frozenset(
    {
        "CODECOV_TOKEN",
        "DOCKERHUB_TOKEN",
        "NODE_AUTH_TOKEN",
        "NPM_TOKEN",
        "PYPI_API_TOKEN",
        "PYPI_TOKEN",
        "SONAR_TOKEN",
        "TWINE_API_KEY",
    }
)


def key_env_problem(name: str, allowed: Iterable[str] = ()) -> str | None:
    """Why a manifest may not name ``name`` as ``api_key_env`` (None when it may)."""
    if name in set(allowed):
        return None
    upper = name.upper()
    opt_in = (
        f"If this variable really holds the judge's key, allow it where the command is run: "
        f"--allow-key-env {name} (in Python: load_manifest(path, allow_key_env=[{name!r}]))"
    )
    if upper.startswith(PLATFORM_PREFIXES) or upper in PLATFORM_NAMES:
        return (
            f"{name!r} is a token CI platforms or package registries give to jobs, not a "
            "judge's key; a manifest (which a pull request can change) must not send it to "
            f"base_url. {opt_in}"
        )
    if not KEY_LIKE.match(name):
        return (
            f"{name!r} does not look like an API key's variable (*_API_KEY or *_TOKEN); its "
            "value would be sent as a bearer token to base_url, and a manifest (which a pull "
            f"request can change) may not choose any variable for that. {opt_in}"
        )
    return None
