"""The YAML manifest: targets, each with a pairwise block (data, pairing, metrics, judge, gates).

Validation reads only the manifest (and checks that data and metric files exist); it reports
every problem at once, each with its file, line and key::

    >>> from pairwise_polars.manifest import load_manifest
    >>> manifest = load_manifest("data/example.yaml")  # doctest: +SKIP
    >>> list(manifest.targets)  # doctest: +SKIP
    ['letters', 'jobs']
"""

from pairwise_polars._former import former_names as _former_names
from pairwise_polars.manifest._load import format_problems, load_manifest, validate_manifest
from pairwise_polars.manifest._manifest_run import ManifestRun, run_manifest
from pairwise_polars.manifest._model import (
    GateSpec,
    JudgeSpec,
    Manifest,
    MetricSpec,
    Problem,
    TargetSpec,
)
from pairwise_polars.manifest._target_run import TargetRun, check_slices, run_target
from pairwise_polars.manifest._trust import key_env_problem
from pairwise_polars.summary import GATE_NAMES

__all__ = [
    "GATE_NAMES",
    "GateSpec",
    "JudgeSpec",
    "Manifest",
    "ManifestRun",
    "MetricSpec",
    "Problem",
    "TargetRun",
    "TargetSpec",
    "check_slices",
    "format_problems",
    "key_env_problem",
    "load_manifest",
    "run_manifest",
    "run_target",
    "validate_manifest",
]

# "Target" names the system under test in pairwise_polars.counterfactual.
__getattr__ = _former_names(__name__, {"Target": "TargetSpec"})
