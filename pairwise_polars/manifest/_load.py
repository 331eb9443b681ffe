"""Loading a manifest: validate it, report every problem at once, or return it."""

from __future__ import annotations

import os
from collections.abc import Iterable

from pairwise_polars._errors import ManifestError
from pairwise_polars.manifest._model import Manifest, Problem
from pairwise_polars.manifest._schema import validate


def validate_manifest(
    path: str | os.PathLike[str], *, allow_key_env: Iterable[str] = ()
) -> list[Problem]:
    """Every problem of a manifest (an empty list when it is valid); never raises for content."""
    return validate(path, allow_key_env=allow_key_env)[1]


def load_manifest(path: str | os.PathLike[str], *, allow_key_env: Iterable[str] = ()) -> Manifest:
    """Validate a manifest and return it; raise one :class:`ManifestError` listing every problem.

    Relative paths in the manifest (data, metric files, cache) are resolved against the
    manifest's folder, and may point outside it: a manifest is code, trust it as such. Its
    judge's ``api_key_env`` may name only key-like variables (``*_API_KEY``, ``*_TOKEN``,
    not CI platform tokens) unless listed in ``allow_key_env``.
    """
    manifest, problems = validate(path, allow_key_env=allow_key_env)
    if problems or manifest is None:
        raise ManifestError(format_problems(os.fspath(path), problems))
    return manifest


def format_problems(file: str, problems: list[Problem]) -> str:
    """The error text: a count, then one ``file:line: key: message`` line per problem."""
    count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
    lines = [f"Manifest {file!r} has {count}:"]
    lines += [f"  {problem}" for problem in problems]
    lines.append(
        "Fix them and run again; `pairwise-polars validate MANIFEST` checks a manifest "
        "without running it."
    )
    return "\n".join(lines)
