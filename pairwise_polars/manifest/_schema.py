"""The manifest's schema: every key of a target's pairwise block, checked with file and line.

Nothing here reads the data: only the YAML, whether data and metric files exist, and the metric
files themselves (to learn their names and kinds).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import Any, cast

import yaml

from pairwise_polars.manifest._checks import Checker, at, describe, join
from pairwise_polars.manifest._data import check_data, check_storage_options
from pairwise_polars.manifest._gates import check_gates
from pairwise_polars.manifest._judge_block import check_judge
from pairwise_polars.manifest._labels_block import LABEL_KEYS, check_label_files
from pairwise_polars.manifest._metrics import check_metrics
from pairwise_polars.manifest._model import Manifest, MetricSpec, Problem, TargetSpec
from pairwise_polars.manifest._pairing_block import check_columns, check_strategy
from pairwise_polars.manifest._panel import PANEL_KEYS, check_judges
from pairwise_polars.manifest._release import RELEASE_KEYS, check_release
from pairwise_polars.manifest._yaml import Mapping, load_with_lines

BLOCK_KEYS = (
    "data",
    "storage_options",
    "strategy",
    "reference",
    "poles",
    "control",
    "columns",
    "on_invalid",
    "metrics",
    "judge",
    *PANEL_KEYS,
    "both_orders",
    "order",
    "audit",
    "slices",
    "equivalence_threshold",
    "divergence_threshold",
    "confidence",
    "cache",
    "runner",
    *LABEL_KEYS,
    "gates",
    *RELEASE_KEYS,
)
_REQUIRED = {
    "data": "the file(s) of response rows (parquet, CSV, TSV, NDJSON): a path, a folder, a glob "
    "or a list, relative to the manifest"
}
_CHOICES: dict[str, tuple[str, ...]] = {
    "on_invalid": ("raise", "skip"),
    "order": ("random", "fixed"),
    "runner": ("local", "ray"),
}
_TARGET_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


def validate(
    path: str | os.PathLike[str], *, allow_key_env: Iterable[str] = ()
) -> tuple[Manifest | None, list[Problem]]:
    """Parse and check a manifest; the manifest is None when there is any problem.
    ``allow_key_env``: variables the judge block's ``api_key_env`` may name besides the
    providers' own (see :func:`~pairwise_polars.manifest.key_env_problem`)."""
    file = os.fspath(path)
    check = Checker(file, allow_key_env=allow_key_env)
    try:
        text = Path(file).read_text(encoding="utf-8")
    except FileNotFoundError:
        check.add(1, "", "the manifest file does not exist")
        return None, check.problems
    except (OSError, UnicodeDecodeError) as exc:
        check.add(1, "", f"cannot read the manifest: {exc}")
        return None, check.problems
    try:
        document = load_with_lines(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else 1
        reason = getattr(exc, "problem", None) or str(exc)
        check.add(line, "", f"invalid YAML: {reason}")
        return None, check.problems
    except RecursionError:
        check.add(
            1,
            "",
            "the YAML nests too deeply to read (hundreds of levels of lists or mappings); a "
            "manifest needs a handful",
        )
        return None, check.problems
    base = os.path.dirname(file)
    top = check.mapping(
        document,
        1,
        "",
        allowed=("version", "targets"),
        required={"targets": "a mapping of target name -> pairwise block"},
    )
    if top is None:
        return None, check.problems
    version, line = at(top, "version")
    if "version" in top and version != 1:
        check.add(line, "version", f"only manifest version 1 exists, got {describe(version)}")
    targets: dict[str, TargetSpec] = {}
    raw_targets, line = at(top, "targets")
    if "targets" in top:
        found = check.mapping(raw_targets, line, "targets", allowed=list(raw_targets or ()))
        if found is not None and not found:
            check.add(
                line,
                "targets",
                "no target is defined; add one, e.g. targets: {demo: "
                "{pairwise: {data: runs.parquet}}}",
            )
        for name in found or ():
            target = _target(check, base, cast(Mapping, found), str(name))
            if target is not None:
                targets[str(name)] = target
    if check.problems:
        return None, sorted(check.problems, key=lambda p: p.line)
    return Manifest(path=file, targets=targets), []


def _target(check: Checker, base: str, targets: Mapping, name: str) -> TargetSpec | None:
    path = join("targets", name)
    raw, line = at(targets, name)
    if not _TARGET_NAME.match(name):
        check.add(
            targets.key_lines[name],
            path,
            "a target name may hold only letters, digits, '_', '-' and '.' (it names the "
            "output folder)",
        )
    target = check.mapping(
        raw,
        line,
        path,
        allowed=("description", "pairwise"),
        required={"pairwise": "the pairwise block: data, metrics, gates"},
    )
    if target is None:
        return None
    description, d_line = at(target, "description")
    if "description" in target:
        description = check.string(description, d_line, join(path, "description"))
    block, b_line = at(target, "pairwise")
    if "pairwise" not in target:
        return None
    n_before = len(check.problems)
    spec = _block(check, base, block, b_line, join(path, "pairwise"))
    if spec is None or len(check.problems) > n_before:
        return None
    return TargetSpec(name=name, description=description or "", manifest=check.file, **spec)


def _block(check: Checker, base: str, raw: Any, line: int, path: str) -> dict[str, Any] | None:
    block = check.mapping(raw, line, path, allowed=BLOCK_KEYS, required=_REQUIRED)
    if block is None:
        return None
    spec: dict[str, Any] = {}

    def value(key: str) -> tuple[Any, int, str]:
        got, where = at(block, key)
        return got, where, join(path, key)

    if "data" in block:
        spec["data"] = check_data(check, base, *value("data"))
    if "storage_options" in block:
        spec["storage_options"] = check_storage_options(check, *value("storage_options"))
    spec.update(check_strategy(check, block, path))
    if "columns" in block:
        spec["columns"] = check_columns(check, *value("columns"))
    _choice(check, block, path, spec, "on_invalid")
    metrics = check_metrics(check, base, *value("metrics")) if "metrics" in block else None
    if metrics is None and "metrics" not in block:
        metrics = [MetricSpec(name="pairwise-bias", source="pairwise-bias")]
    spec["metrics"] = tuple(metrics or ())
    spec.update(check_judges(check, block, path, partial(check_judge, base=base)))  # or a panel
    if "both_orders" in block:
        spec["both_orders"] = check.boolean(*value("both_orders"))
    _choice(check, block, path, spec, "order")
    if "audit" in block:  # the masked audit: null (none) or mask
        got, where, key = value("audit")
        if got is not None and got != "mask":
            check.add(where, key, f"expected mask (or null for none), got {describe(got)}")
        spec["audit"] = got
    if "slices" in block:
        slices = check.strings(*value("slices"), allow_empty=True)
        spec["slices"] = tuple(slices or ())
    spec.update(_thresholds(check, block, path))
    if "cache" in block:
        spec["cache"] = _cache(check, base, *value("cache"))
    _choice(check, block, path, spec, "runner")
    spec.update(check_release(check, base, block, path))
    spec.update(check_label_files(check, base, block, path))
    if "gates" in block:
        names = [m.name for m in metrics or ()]
        slices = spec.get("slices", ("dimension",))
        family = spec.get("familywise")
        spec["gates"] = check_gates(check, *value("gates"), names=names, slices=slices,
                                    family=family)  # fmt: skip
    return spec


def _choice(check: Checker, block: Mapping, path: str, spec: dict[str, Any], key: str) -> None:
    """A key that takes one of a few words (``_CHOICES``), with a did-you-mean."""
    if key not in block:
        return
    got, where = at(block, key)
    allowed = _CHOICES[key]
    check.choice(got, where, join(path, key), allowed, " or ".join(allowed))
    spec[key] = got


def _thresholds(check: Checker, block: Mapping, path: str) -> dict[str, Any]:
    """The two score thresholds (equivalent below one, divergent above the other), confidence."""
    spec: dict[str, Any] = {}
    for key in ("equivalence_threshold", "divergence_threshold"):
        if key in block:
            spec[key] = check.number(*at(block, key), join(path, key), low=0, high=1)
    if "confidence" in block:
        spec["confidence"] = check.number(
            *at(block, "confidence"),
            join(path, "confidence"),
            low=0,
            high=1,
            open_low=True,
            open_high=True,
        )
    low, high = spec.get("equivalence_threshold", 0.0), spec.get("divergence_threshold", 0.5)
    if low is not None and high is not None and low >= high:
        where = block.value_lines.get(
            "equivalence_threshold", block.value_lines.get("divergence_threshold", block.line)
        )
        check.add(
            where,
            join(path, "equivalence_threshold"),
            f"equivalence_threshold ({low}) must be below divergence_threshold ({high}): "
            "a score cannot be both equivalent and divergent",
        )
    return spec


def _cache(check: Checker, base: str, raw: Any, line: int, path: str) -> bool | str | None:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip():
        return os.path.join(base, raw)
    check.add(
        line,
        path,
        "expected true, false or the path of a cache file (relative to the "
        f"manifest), got {describe(raw)}",
    )
    return None
