"""From a gate verdict to an exit code: a fairness failure and a run that could not be measured
exit differently, so a CI job can tell "the model failed" from "the measurement failed"."""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping

from pairwise_polars.summary import GateResult, threshold_problem

EXIT_FAIRNESS = 1
"""A fairness gate failed on measured pairs."""
EXIT_INCONCLUSIVE = 4
"""No verdict: an interval straddles its threshold, a slice has fewer than ``min_groups``
groups, judgements failed beyond ``max_error_rate``, a slice had no scored pair, or nothing was
scored. The fairness gates cannot vouch for the run: add groups, or fix the judge or the data."""


def exit_code(results: Iterable[GateResult | None]) -> int:
    """1 when any result failed (a fail is a fail even beside an undecided slice or target),
    else 4 when any is inconclusive, else 0."""
    statuses = {r.status for r in results if r is not None}
    if "fail" in statuses:
        return EXIT_FAIRNESS
    return EXIT_INCONCLUSIVE if "inconclusive" in statuses else 0


def targets_verdict(statuses: Mapping[str, str], n_targets: int) -> str:
    """What a run of several targets found, each kind counted apart: ``"1 of 3 targets failed
    a gate (a); 1 inconclusive (b)"``; a target that never reached a verdict is inconclusive."""
    named: dict[str, list[str]] = {"fail": [], "inconclusive": []}
    for name, status in statuses.items():
        if status in named:
            named[status].append(name)
    parts = []
    failed = named["fail"]
    if failed:
        parts.append(f"{len(failed)} of {n_targets} targets failed a gate ({', '.join(failed)})")
    if named["inconclusive"]:
        count = len(named["inconclusive"])
        lead = f"{count} inconclusive" if parts else f"{count} of {n_targets} targets inconclusive"
        parts.append(f"{lead} ({', '.join(named['inconclusive'])})")
    return "; ".join(parts) or f"0 of {n_targets} targets passed"


def threshold(text: str) -> float:
    """An argparse ``type`` for gate thresholds: the same rule and words as ``gate`` and the
    manifest (a number from 0 to 1; nan, -1 and 2 are refused)."""
    try:
        value = float(text)
    except ValueError:
        value = text
    problem = threshold_problem(value)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return float(value)
