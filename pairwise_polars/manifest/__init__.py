"""The YAML manifest: targets, each with a pairwise block (data, pairing, metrics, judge, gates).

Validation reads only the manifest (and checks that data and metric files exist); it reports
every problem at once, each with its file, line and key::

    >>> from pairwise_polars.manifest import load_manifest
    >>> manifest = load_manifest("data/example.yaml")  # doctest: +SKIP
    >>> list(manifest.targets)  # doctest: +SKIP
    ['letters', 'jobs']
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable

from pairwise_polars._errors import ManifestError
from pairwise_polars.manifest._model import (
    GateSpec,
    JudgeSpec,
    Manifest,
    MetricSpec,
    Problem,
    TargetSpec,
)
from pairwise_polars.manifest._schema import validate
from pairwise_polars.manifest._target_run import TargetRun, check_slices, run_target
from pairwise_polars.manifest._trust import key_env_problem
from pairwise_polars.summary import GATE_NAMES

__all__ = [
    "GATE_NAMES",
    "GateSpec",
    "JudgeSpec",
    "Manifest",
    "MetricSpec",
    "Problem",
    "TargetRun",
    "TargetSpec",
    "check_slices",
    "format_problems",
    "key_env_problem",
    "load_manifest",
    "run_target",
    "validate_manifest",
]


def __getattr__(name: str) -> object:
    if name == "Target":  # the former name; "Target" is the system under test elsewhere
        warnings.warn(
            "pairwise_polars.manifest.Target is now TargetSpec (Target names the system under "
            "test in pairwise_polars.counterfactual); the old name goes in the next release.",
            DeprecationWarning,
            stacklevel=2,
        )
        return TargetSpec
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def validate_manifest(
    path: str | os.PathLike[str], *, allow_key_env: Iterable[str] = ()
) -> list[Problem]:
    """Every problem of a manifest (an empty list when it is valid); never raises for content."""
    return validate(path, allow_key_env=allow_key_env)[1]


def load_manifest(path: str | os.PathLike[str], *, allow_key_env: Iterable[str] = ()) -> Manifest:
    """Validate a manifest and return it; raise one :class:`ManifestError` listing every problem.

    Relative paths in the manifest (data, metric files, cache) are resolved against the
    manifest's folder, and may point outside it: a manifest is code, trust it as such. Its
XX
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
