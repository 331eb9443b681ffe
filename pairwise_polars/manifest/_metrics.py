"""Metric entries of a pairwise block: shipped names or metric files, their kind and parameters."""

from __future__ import annotations

from typing import Any

from pairwise_polars._errors import PairwiseError
from pairwise_polars.manifest._checks import Checker, at, describe, join, suggest
from pairwise_polars.manifest._model import MetricSpec
from pairwise_polars.manifest._yaml import Mapping, Sequence
from pairwise_polars.metrics import PAIR_VARIABLES, get_metric, metric_names


def check_metrics(
    check: Checker, base: str, raw: Any, line: int, path: str
) -> list[MetricSpec] | None:
    if not isinstance(raw, Sequence) or not raw:
        check.add(
            line,
            path,
            "expected a list of metrics (shipped names, metric file paths, or "
            f"{{metric: NAME, params: {{...}}}}), got {describe(raw)}",
        )
        return None
    specs: list[MetricSpec] = []
    seen: dict[str, int] = {}
    for i, (entry, where) in enumerate(zip(raw, raw.lines, strict=True)):
        key = f"{path}[{i}]"
        spec = _metric(check, base, entry, where, key)
        if spec is None:
            continue
        if spec.name in seen:
            check.add(
                where,
                key,
                f"metric {spec.name!r} is listed twice (also on line "
                f"{seen[spec.name]}); metric names must be unique in a block",
            )
            continue
        seen[spec.name] = where
        specs.append(spec)
    return specs


def _metric(check: Checker, base: str, entry: Any, line: int, path: str) -> MetricSpec | None:
    params: Mapping | None = None
    params_path = join(path, "params")
    if isinstance(entry, Mapping):
        found = check.mapping(
            entry,
            line,
            path,
            allowed=("metric", "params"),
            required={"metric": "a shipped metric name or a metric file"},
        )
        if found is None or "metric" not in found:
            return None
        if "params" in found:
            raw, where = at(found, "params")
            params = check.mapping(raw, where, params_path, allowed=list(raw or ()))
            if params is None:
                return None
        entry, line = at(found, "metric")
        path = join(path, "metric")
    name = check.string(entry, line, path)
    source = _source(check, base, name, line, path) if name is not None else None
    if source is None:
        return None
    try:
        metric = get_metric(source)
    except (PairwiseError, OSError) as exc:
        check.add(line, path, f"cannot load the metric: {exc}")
        return None
    if metric.kind != "pairwise":
        check.add(
            line,
            path,
            f"metric {metric.name!r} is of kind {metric.kind!r}; a pairwise block takes "
            "only pairwise metrics. Pairwise metrics are symmetric divergences between "
            "counterfactual responses; regression metrics compare a baseline with a "
            "candidate (directional): the two never mix in one block. Remove it from this "
            "block",
        )
        return None
    takes = sorted((set(metric.variables) - set(PAIR_VARIABLES)) | set(metric.requires))
    given = params if params is not None else Mapping()
    for param in given:
        if param not in takes:
            offer = f"it takes: {', '.join(takes)}" if takes else "it takes no parameters"
            check.add(
                given.key_lines[param],
                join(params_path, param),
                f"metric {metric.name!r} has no parameter {param!r}"
                f"{suggest(str(param), takes)} ({offer})",
            )
    return MetricSpec(name=metric.name, source=source, params=dict(params or {}))


def _source(check: Checker, base: str, name: str, line: int, path: str) -> str | None:
    """A shipped metric's name, or the path of a metric file that exists."""
    shipped = metric_names()
    if name in shipped:
        source = name
    elif name.endswith((".yaml", ".yml")):
        source, there = check.relative_path(
            base,
            name,
            line,
            path,
            lambda full: (
                f"metric file {full!r} does not exist (paths are relative to the manifest's folder)"
            ),
        )
        if not there:
            return None
    else:
        hint = suggest(name, shipped)
        check.add(
            line,
            path,
            f"unknown metric {name!r}"
            + (f"{hint} " if hint else ". ")
            + f"Shipped metrics: {', '.join(shipped)}; or give the path of a metric file "
            "(.yaml)",
        )
        return None
    return source
