"""Gates of a pairwise block: thresholds overall and per slice, per metric, estimate or bound."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pairwise_polars.manifest._checks import Checker, at, join, suggest
from pairwise_polars.manifest._model import GateSpec, Threshold
from pairwise_polars.manifest._yaml import Mapping
from pairwise_polars.summary import (
    DISPARITY_OUTCOMES,
    ERROR_GATE,
    ERRORS_AS,
    GATE_NAMES,
    MAX_DISADVANTAGE,
    threshold_problem,
)


def check_gates(
    check: Checker,
    raw: Any,
    line: int,
    path: str,
    *,
    names: list[str],
    slices: tuple[str, ...],
    family: str | None = None,
) -> GateSpec | None:
    hint = (
        "{gate} is a gate threshold: thresholds go under overall: (the whole block) or "
        "per_slice: (every slice row), e.g. gates: {{overall: {{{gate}: 0.2}}}}"
    )
    found = check.mapping(
        raw,
        line,
        path,
        allowed=("overall", "per_slice", "conservative", "min_groups", "errors_as", "require"),
        hints={gate: hint.format(gate=gate) for gate in GATE_NAMES},
    )
    if found is None:
        return None
    if not found:
        _empty(check, line, path)
    scopes: dict[str, dict[str, Threshold | None]] = {}
    for scope in ("overall", "per_slice"):
        if scope not in found:
            continue
        value, where = at(found, scope)
        key = join(path, scope)
        if scope == "per_slice" and not slices:
            check.add(
                found.key_lines[scope],
                key,
                "per_slice gates need slice columns, and slices is empty; set slices: "
                "[dimension] or move the gates to overall",
            )
        scopes[scope] = _thresholds(check, value, where, key, names=names)
    conservative = False
    if "conservative" in found:
        conservative = bool(check.boolean(*at(found, "conservative"), join(path, "conservative")))
    if conservative and family in ("holm", "bh"):
        check.add(
            at(found, "conservative")[1],
            join(path, "conservative"),
            "conservative: true fails on the unfavourable bound without evidence, and "
            f"familywise: {family} judges the evidence of a breach over the slices: choose one",
        )
    reading = _reading(check, found, path)
    return GateSpec(
        overall=scopes.get("overall", {}),
        per_slice=scopes.get("per_slice", {}),
        conservative=conservative,
        **reading,
    )


def _reading(check: Checker, found: Mapping, path: str) -> dict[str, Any]:
    """``min_groups``, ``errors_as`` and ``require`` of a gates block, where given."""
    out: dict[str, Any] = {}
    if "min_groups" in found:
        got = check.number(*at(found, "min_groups"), join(path, "min_groups"), low=1, integer=True)
        if got is not None:
            out["min_groups"] = int(got)
    if "errors_as" in found:
        got, where = at(found, "errors_as")
        why = (
            " (worst: a failed judgement counts as divergent for a pass, as equivalent for a fail)"
        )
        if check.choice(got, where, join(path, "errors_as"), ERRORS_AS, "worst or ignore", why):
            out["errors_as"] = got
    if "require" in found:
        got = check.strings(*at(found, "require"), join(path, "require"))
        if got is not None:
            out["require"] = tuple(got)
    return out


def _thresholds(
    check: Checker, raw: Any, line: int, path: str, *, names: list[str]
) -> dict[str, Threshold | None]:
    found = check.mapping(raw, line, path, allowed=GATE_NAMES)
    if found is not None and not found:
        _empty(check, line, path)
    out: dict[str, Threshold | None] = {}
    listed = ", ".join(names) or "none"
    for gate in GATE_NAMES:
        if found is None or gate not in found:
            continue
        value, where = at(found, gate)
        key = join(path, gate)
        if isinstance(value, Mapping) and not value:
            _empty(check, where, key)
        if value is None and gate == ERROR_GATE:
            out[gate] = None  # null switches the error gate off
        elif isinstance(value, Mapping) and gate == MAX_DISADVANTAGE:
            out[gate] = _per_outcome(check, value, key)
        elif isinstance(value, Mapping):
            out[gate] = _per_name(
                check,
                value,
                key,
                names,
                lambda metric: (
                    f"the gate names metric {metric!r}, which is not in this block's "
                    f"metrics{suggest(str(metric), names)} (metrics: {listed})"
                ),
            )
        else:
            got = _threshold(check, value, where, key)
            if got is not None:
                out[gate] = got
    return out


def _threshold(check: Checker, value: Any, line: int, key: str) -> float | None:
    """The threshold, or a problem in the words ``gate`` and the CLI use."""
    problem = threshold_problem(value)
    if problem is not None:
        check.add(line, key, problem)
        return None
    return float(value)


def _empty(check: Checker, line: int, path: str) -> None:
    """An empty gate map checks nothing, yet reads as a gate: fail closed."""
    check.add(
        line,
        path,
        "an empty mapping gates nothing: give thresholds (e.g. max_mean_divergence: "
        "{pairwise-bias: 0.2}) or remove the key",
    )


def _per_outcome(check: Checker, value: Mapping, key: str) -> dict[str, float]:
    """``max_disadvantage`` per outcome: ``{amount: 0.05, decision: 0.1}``."""
    return _per_name(
        check,
        value,
        key,
        DISPARITY_OUTCOMES,
        lambda outcome: (
            f"max_disadvantage names outcome {outcome!r}"
            f"{suggest(str(outcome), list(DISPARITY_OUTCOMES))}; outcomes: "
            f"{', '.join(DISPARITY_OUTCOMES)}"
        ),
    )


def _per_name(
    check: Checker,
    value: Mapping,
    key: str,
    known: Sequence[str],
    unknown: Callable[[Any], str],
) -> dict[str, float]:
    """A threshold per name (a metric, an outcome) of ``value``; a name not ``known`` is a
    problem in the words ``unknown`` gives it."""
    limits = {}
    for name, limit in value.items():
        if name not in known:
            check.add(value.key_lines[name], join(key, name), unknown(name))
            continue
        got = _threshold(check, limit, value.value_lines[name], join(key, name))
        if got is not None:
            limits[str(name)] = got
    return limits
