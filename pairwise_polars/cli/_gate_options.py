"""The gate options of the commands that summarise (summarize, report): thresholds, how the
intervals are read (three-way or conservative, min_groups, errors_as, familywise) and the
dimensions a verdict requires; the same names as ``gate_summary`` and the manifest."""

from __future__ import annotations

import argparse
from typing import Any

from pairwise_polars._errors import OptionError
from pairwise_polars.cli._numbers import whole
from pairwise_polars.cli._verdicts import threshold
from pairwise_polars.outcome import disparities
from pairwise_polars.summary import (
    DEFAULT_MAX_ERROR_RATE,
    DISPARITY_GATES,
    DISPARITY_OUTCOMES,
    FAIRNESS_GATES,
    GATE_NAMES,
    JUDGE_GATE,
    MAX_DISADVANTAGE,
    MIN_GROUPS,
    GateResult,
    gate_summary,
)

_GATE_HELP = {
    "max_excess_divergence": "the divergence beyond the noise floor (counterfactual mean minus "
    "control mean) a slice may have: the primary gate when the data has control rows; a slice "
    "without control pairs is inconclusive",
    "min_label_agreement": "the judge's agreement with the human labels (--labels) a slice "
    "must reach, as quadratic weighted kappa; below it the run is inconclusive",
    "min_judge_agreement": "the agreement among a panel's judges (Krippendorff's alpha; "
    "several --judge) a slice must reach, on its interval's lower bound; below it the run is "
    "inconclusive",
    JUDGE_GATE: "the judge's reaction to the attribute itself (judge_attribute_effect, from "
    "--audit mask) a slice may show, on its interval's bound farthest from 0; beyond it the "
    "run is inconclusive",
}


def add_gate_options(parser: argparse.ArgumentParser) -> None:
    """The gates group: thresholds (overall and on every slice) and how they are read."""
    gates = parser.add_argument_group(
        "gates (checked overall and on every slice; thresholds from 0 to 1)"
    )
    for name in (*FAIRNESS_GATES, JUDGE_GATE):
        gates.add_argument(
            f"--{name.replace('_', '-')}",
            type=threshold,
            metavar="X",
            help=_GATE_HELP.get(name),
        )
    gates.add_argument(
        "--min-impact-ratio",
        type=threshold,
        metavar="X",
        help="the lowest ratio of decision rates (attribute vs reference, either way) any "
        "attribute may have: 0.8 is the four-fifths rule; a slice without decisions is "
        "inconclusive",
    )
    gates.add_argument(
        "--max-disadvantage",
        type=disadvantage,
        action="append",
        metavar="OUTCOME=X",
        help="the largest disadvantage any attribute may have in an outcome, repeatable: "
        f"{', '.join(DISPARITY_OUTCOMES)} (amount=0.05: 5%% less offered); X alone: every "
        "outcome measured",
    )
    gates.add_argument(
        "--max-error-rate",
        type=threshold,
        metavar="X",
        help="the share of pairs without a score a slice may have (default with any gate: "
        f"{DEFAULT_MAX_ERROR_RATE}; 1 switches it off)",
    )
    _reading_options(gates)


def _reading_options(gates: Any) -> None:
    """How the thresholds are read: one- or three-way, groups needed, failures, families."""
    gates.add_argument(
        "--conservative",
        action="store_true",
        help="the one-sided reading: fail when the interval's unfavourable bound is beyond "
        "(default: three-way: pass when the unfavourable bound is within, fail when the "
        "favourable one is beyond, else inconclusive, exit 4)",
    )
    gates.add_argument(
        "--min-groups",
        type=whole(1),
        default=MIN_GROUPS,
        metavar="N",
        help="groups a slice needs for a fairness check to pass (default: %(default)s); fewer "
        "is at best inconclusive",
    )
    gates.add_argument(
        "--errors-as",
        choices=("worst", "ignore"),
        default="worst",
        help="failed judgements count as divergent for a pass and equivalent for a fail "
        "(worst, the default) or not at all (ignore)",
    )
    gates.add_argument(
        "--familywise",
        choices=("none", "holm", "bh"),
        default="none",
        help="judge the fairness checks of every slice as one family (holm: a run with nothing "
        "wrong fails anywhere at most at 5%%; default: %(default)s)",
    )
    gates.add_argument(
        "--require",
        nargs="+",
        action="extend",
        metavar="DIMENSION",
        help="dimensions the verdict needs: one the data lacks (or never scored) is inconclusive",
    )


def check_junit_has_gates(args: argparse.Namespace) -> None:
    """Before any work: ``--junit-xml`` writes the gate checks, so it needs a gate (without
    one no file would be written, and a CI job would read its absence as it likes)."""
    gated = any(getattr(args, n) is not None for n in GATE_NAMES) or args.require
    if getattr(args, "junit_xml", None) and not gated:
        raise OptionError(
            "--junit-xml writes the gate checks, and no gate is set: add one (e.g. "
            "--max-mean-divergence 0.2, or --require DIMENSION), or leave --junit-xml out."
        )


def gates_from(summary: Any, scored: Any, args: argparse.Namespace) -> GateResult | None:
    """The gates' verdict on ``summary`` when any gate (or ``--require``) is set."""
    thresholds = {n: getattr(args, n) for n in GATE_NAMES if getattr(args, n) is not None}
    if not thresholds and not args.require:
        return None
    if thresholds.get(MAX_DISADVANTAGE) is not None:
        thresholds[MAX_DISADVANTAGE] = _merged(thresholds[MAX_DISADVANTAGE])
    disparity = {n: thresholds.pop(n) for n in DISPARITY_GATES if n in thresholds}
    return gate_summary(
        summary,
        overall={**thresholds, **disparity},
        per_slice=thresholds,
        familywise=args.familywise,
        confidence=args.confidence,
        require=args.require or (),
        disparities=disparities(scored, group_by=args.group_by) if disparity else None,
        **reading_settings(args),
    )


def reading_settings(args: argparse.Namespace) -> dict[str, Any]:
    """How the gates read the intervals (one- or three-way, groups needed, failures), under
    the keywords ``gate_summary`` and ``scoped_stability`` share."""
    return {
        "conservative": args.conservative,
        "min_groups": args.min_groups,
        "errors_as": args.errors_as,
    }


def disadvantage(text: str) -> tuple[str | None, float]:
    """An argparse ``type`` for ``--max-disadvantage``: ``amount=0.05`` or ``0.05``."""
    name, _, value = text.rpartition("=")
    if name and name not in DISPARITY_OUTCOMES:
        raise argparse.ArgumentTypeError(
            f"unknown outcome {name!r}; outcomes: {', '.join(DISPARITY_OUTCOMES)}"
        )
    return (name or None, threshold(value))


def _merged(given: list[tuple[str | None, float]]) -> float | dict[str, float]:
    named = {name: value for name, value in given if name is not None}
    plain = [value for name, value in given if name is None]
    if plain and not named:
        return plain[-1]
    if plain:
        raise OptionError(
            "--max-disadvantage takes either OUTCOME=X (repeatable) or one X for every "
            "outcome, not both."
        )
    return named
