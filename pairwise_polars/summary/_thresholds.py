"""What a gate threshold may be: one check and one message for ``gate``, the manifest and the
command line, so a threshold refused in one place is refused, with the same words, in all."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from typing import Any

from pairwise_polars._errors import GateError, OptionError, ThresholdWarning

WHY = (
    "scores are normalised: raw rubric score / rubric max, so 2 on a 0-4 rubric is 0.5; rates, "
    "like max_error_rate, are shares of pairs"
)


def threshold_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a gate threshold (the rule and the value), or None if it can.

    >>> threshold_problem(0.2) is None
    True
    >>> threshold_problem(float("nan"))[:40]
    'must be a number from 0 to 1, got nan (s'
    """
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if number and math.isfinite(value) and 0 <= value <= 1:
        return None
    shown = repr(value) if not number or not math.isfinite(value) else f"{value:g}"
    return f"must be a number from 0 to 1, got {shown} ({WHY})"


def check_threshold(value: Any, name: str) -> float:
    """``value`` as a float, or :class:`GateError` naming the gate (``name``)."""
    problem = threshold_problem(value)
    if problem is not None:
        raise GateError(f"{name} {problem}.")
    return float(value)


# gate -> (the threshold that always passes, the one that can never pass)
_VACUOUS = {
    "min_equivalence_rate": (0.0, 1.0),
    "max_divergence_rate": (1.0, 0.0),
    "max_mean_divergence": (1.0, 0.0),
    "max_excess_divergence": (1.0, 0.0),
    "min_impact_ratio": (0.0, 1.0),
}


def warn_if_vacuous(name: str, threshold: object) -> None:
    """A :class:`ThresholdWarning` when ``threshold`` (a number or a mapping of them) makes
    the gate ``name`` pass whatever the data (vacuous) or never pass (an interval around a
    figure never reaches 0 or 1 exactly)."""
    ends = _VACUOUS.get(name)
    if ends is None or threshold is None:
        return
    values = threshold.values() if isinstance(threshold, Mapping) else [threshold]
    for value in values:
        if value == ends[0]:
            warnings.warn(
                f"{name}={value:g} always passes: every figure is within it, so the gate "
                "checks nothing. Set the largest gap you would accept, or remove the gate.",
                ThresholdWarning,
                stacklevel=3,
            )
        elif value == ends[1]:
            warnings.warn(
                f"{name}={value:g} can never pass: a pass needs the interval's unfavourable "
                "bound within the threshold, and an interval around a measured figure never "
                "reaches it exactly. Set the largest gap you would accept.",
                ThresholdWarning,
                stacklevel=3,
            )


def check_score_thresholds(equivalence_threshold: object, divergence_threshold: object) -> None:
    """The score thresholds of ``aggregate``: numbers in [0, 1] (else :class:`OptionError`,
    naming the option); values that make a rate vacuous or overlap warn
    (:class:`ThresholdWarning`)."""
    for name, value in (
        ("equivalence_threshold", equivalence_threshold),
        ("divergence_threshold", divergence_threshold),
    ):
        problem = threshold_problem(value)
        if problem is not None:
            raise OptionError(
                f"{name} {problem}. A pair counts as equivalent when its score <= "
                "equivalence_threshold and divergent when its score >= divergence_threshold."
            )
    assert isinstance(equivalence_threshold, (int, float))
    assert isinstance(divergence_threshold, (int, float))
    if equivalence_threshold == 1:
        _warn(
            "equivalence_threshold=1 counts every scored pair as equivalent (every score is <= "
            "1): equivalence_rate is 1 whatever the data, and min_equivalence_rate passes "
            "anything. The default is 0 (only identical treatment is equivalent)."
        )
    if divergence_threshold == 0:
        _warn(
            "divergence_threshold=0 counts every scored pair as divergent (every score is >= "
            "0): divergence_rate is 1 whatever the data, and max_divergence_rate can never "
            "pass. The default is 0.5."
        )
    elif equivalence_threshold != 1 and equivalence_threshold >= divergence_threshold:
        _warn(
            f"equivalence_threshold={equivalence_threshold:g} is not below "
            f"divergence_threshold={divergence_threshold:g}: a pair can count as both "
            "equivalent and divergent."
        )


def _warn(message: str) -> None:
    warnings.warn(message, ThresholdWarning, stacklevel=4)
