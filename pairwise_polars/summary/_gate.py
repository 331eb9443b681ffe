"""Gates: thresholds on a summary that pass or fail a run (and a CI job).

Gates fail closed: judgements that failed count against a run (``max_error_rate``, and at their
worst for a pass), a run with nothing scored never passes, a threshold for a metric the summary
lacks is an error, and a threshold outside [0, 1] is refused. Fairness checks are three-way
(:mod:`pairwise_polars.summary._three_way`): a run with a failed check reads ``FAIL``, one that
cannot decide (or was not measured) ``INCONCLUSIVE``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import polars as pl

from pairwise_polars._errors import OptionError
from pairwise_polars.summary._aggregate import slice_columns
from pairwise_polars.summary._attribute_effect import JUDGE_GATE, judge_notes
from pairwise_polars.summary._disparity_gate import DISPARITY_GATES, is_disparities
from pairwise_polars.summary._familywise import Familywise, check_familywise, judged_as_family
from pairwise_polars.summary._gate_checks import (
    AGREEMENT_GATE,
    CHECK_SCHEMA,
    DEFAULT_MAX_ERROR_RATE,
    EMPTY_CHECK,
    ERROR_GATE,
    EXCESS_GATE,
    FAIRNESS_GATES,
    GATE_NAMES,
    PANEL_GATE,
    Threshold,
    gate_checks,
)
from pairwise_polars.summary._ppi import CORRECTED
from pairwise_polars.summary._required import REQUIRED_CHECK, check_require
from pairwise_polars.summary._stability_check import STABILITY
from pairwise_polars.summary._three_way import (
    MIN_GROUPS,
    ErrorsAs,
    Reading,
    check_errors_as,
    check_min_groups,
)

__all__ = [
    "CHECK_SCHEMA",
    "DEFAULT_MAX_ERROR_RATE",
    "ERROR_GATE",
    "FAIRNESS_GATES",
    "GATE_NAMES",
    "GateResult",
    "Threshold",
    "gate",
    "gate_checks",
    "judged",
]

Status = Literal["pass", "fail", "inconclusive"]
_UNTRUSTED = (
    ERROR_GATE,
    EMPTY_CHECK,
    AGREEMENT_GATE,
    REQUIRED_CHECK,
    JUDGE_GATE,
    PANEL_GATE,
    STABILITY,
)


def check_statuses(checks: pl.DataFrame) -> pl.Series:
    """Each check's ``"pass"``, ``"fail"`` or ``"inconclusive"``: its own ``status`` where it
    carries one, else read from ``passed`` (a failure for want of measurements, or of trust in
    the judge, is inconclusive)."""
    if checks.is_empty():
        return pl.Series("status", [], pl.String)
    unmeasured = pl.col("gate").is_in(_UNTRUSTED) | pl.col("observed").is_null()
    own = (
        pl.when(pl.col("passed"))
        .then(pl.lit("pass"))
        .when(unmeasured)
        .then(pl.lit("inconclusive"))
        .otherwise(pl.lit("fail"))
    )
    said = pl.col("status") if "status" in checks.columns else pl.lit(None, pl.String)
    return checks.select(pl.coalesce(said, own).alias("status"))["status"]


_GATE_REASONS = (
    (ERROR_GATE, f"judgements failed beyond {ERROR_GATE}"),
    (AGREEMENT_GATE, f"the judge agrees with the human labels below {AGREEMENT_GATE}"),
    (JUDGE_GATE, f"the judge reacts to the attribute beyond {JUDGE_GATE}"),
    (PANEL_GATE, f"the panel's judges agree below {PANEL_GATE}"),
    (STABILITY, "the verdict does not hold on resampled repeats (verdict_stability)"),
)
"""Why a check of one of these gates could not be decided, in the verdict's order."""
_NOTE_REASONS = (
    ("^no scored pairs", "a slice has no scored pair"),
    ("control pairs", "a slice has no scored control pairs (no noise floor)"),
    ("measured in this slice|no decision in any", "an outcome was not measured in a slice"),
)
"""Why a fairness check could not be decided, by what its note says (a pattern), in order."""
_NOTE_EVIDENCE = (
    ("one group", "a slice has only one group (no interval bound)"),
    ("honest interval", "a slice is too small or shows no spread for an interval"),
    ("under min_groups", "a slice has fewer groups than min_groups"),
    ("straddles the threshold", "an interval straddles its threshold"),
    ("zero-width", "an interval has zero width (no spread to measure)"),
    ("not over the family", "a failure does not survive the familywise correction"),
)
"""Evidence too thin to decide, by what a note says (a pattern), in the verdict's order."""


def _said(notes: pl.Series, table: tuple[tuple[str, str], ...]) -> list[str]:
    """The sentence of each (pattern, sentence) of ``table`` that some note matches."""
    return [sentence for pattern, sentence in table if notes.str.contains(pattern).any()]


@dataclass(frozen=True)
class GateResult:
    """The verdict of :func:`gate`: ``passed`` and one ``checks`` row per (metric, slice, gate).

    ``status`` tells a fairness failure (``"fail"``, in any check) from a run that cannot
    decide (``"inconclusive"``: an interval across its threshold, too few groups, judgements
    failed beyond ``max_error_rate``, a slice with no scored pair, nothing scored at all). Each
    check row carries its own ``status`` and a ``note`` that says why.
    """

    passed: bool
    checks: pl.DataFrame
    familywise: str = "none"
    """The correction the failures were judged under over the family of checks (``"none"``,
    ``"holm"`` or ``"bh"``)."""
    family: int = 0
    """How many checks that family held."""
    judge_notes: tuple[str, ...] = ()
    """Slices where the masked audit shows the judge reacting to the attribute itself (its
    effect's interval excludes 0), one sentence each; the verdict says them."""

    def __bool__(self) -> bool:
        return self.passed

    @property
    def failures(self) -> pl.DataFrame:
        """The failed checks only."""
        return self.checks.filter(~pl.col("passed"))

    @property
    def status(self) -> Status:
        """``"fail"`` when any check failed on measured pairs (even if others could not be
        decided), else ``"inconclusive"`` when any check could not be decided (too few groups,
        an interval across the threshold, judgements failed beyond ``max_error_rate``, nothing
        scored), else ``"pass"``."""
        if self.passed:
            return "pass"
        statuses = check_statuses(self.checks)
        if (statuses == "fail").any() or statuses.is_empty():
            return "fail"
        return "inconclusive"

    def _unmeasured(self) -> tuple[str, str]:
        """Why checks could not be decided, and what to do about it."""
        undecided = self.checks.filter(check_statuses(self.checks) == "inconclusive")
        gates = set(undecided["gate"].to_list())
        notes = undecided["note"].drop_nulls()
        reasons = [reason for gate, reason in _GATE_REASONS if gate in gates]
        if EMPTY_CHECK in gates:
            reasons.append("nothing was scored")
        elif not reasons:
            reasons += _said(notes, _NOTE_REASONS)
            if (undecided["gate"] == REQUIRED_CHECK).any():
                reasons.append("a required dimension is missing from the data")
        fixes = ["fix the judge or the data and rerun"] if reasons else []
        evidence = _said(notes, _NOTE_EVIDENCE)
        if undecided.filter(
            pl.col("gate").is_in(DISPARITY_GATES) & pl.col("observed").is_not_null()
        ).height:
            evidence.append(
                "a disparity's interval straddles its threshold, or its slice has too few groups"
            )
        if evidence:
            fixes.append("add groups and rerun; each note says about how many would decide it")
        if not reasons and not evidence and not undecided.is_empty():
            reasons.append("a check could not be decided (its note says why)")
            fixes.append("fix the judge or the data and rerun")
        return "; ".join(reasons + evidence), "; or ".join(fixes)

    def verdict(self) -> str:
        """One readable paragraph: PASS, FAIL or INCONCLUSIVE, then one line per check that did
        not pass (a FAIL lists the undecided checks too)."""
        if self.checks.is_empty():
            return "PASS: no gate was set."
        failed = self.failures
        tally = f"{self.checks.height - failed.height} of {self.checks.height} gate checks passed."
        status = self.status
        reasons, fixes = self._unmeasured()
        if status == "pass":
            head = f"PASS: {tally}"
        elif status == "fail":
            head = f"FAIL: {tally}"
            if reasons:
                head += f" Also inconclusive: {reasons}."
        else:
            head = f"INCONCLUSIVE: {reasons}, so this run cannot vouch for fairness "
            head += f"({fixes}). {tally}"
        if self.familywise != "none":
            lines = [f"{head} (familywise: {self.familywise} over {self.family} checks)"]
        else:
            lines = [head]
        if self.checks["note"].str.contains(CORRECTED).any():
            lines.append(
                "  Fairness figures are corrected by human labels (prediction-powered) where a "
                "slice has them; the notes say which."
            )
        lines += [f"  {note}" for note in self.judge_notes]
        for row in failed.iter_rows(named=True):
            observed = "none" if row["observed"] is None else f"{row['observed']:.4f}"
            lines.append(
                f"  {row['metric']} [{row['slice']}] {row['gate']} {row['threshold']}: "
                f"observed {observed}" + (f" ({row['note']})" if row["note"] else "")
            )
        return "\n".join(lines)


def gate(
    summary: pl.DataFrame,
    *,
    min_equivalence_rate: Threshold = None,
    max_divergence_rate: Threshold = None,
    max_mean_divergence: Threshold = None,
    max_excess_divergence: Threshold = None,
    min_label_agreement: Threshold = None,
    min_judge_agreement: Threshold = None,
    max_error_rate: Threshold = DEFAULT_MAX_ERROR_RATE,
    max_judge_attribute_effect: Threshold = None,
    per: Sequence[str] | None = None,
    conservative: bool = False,
    min_impact_ratio: float | None = None,
    max_disadvantage: float | Mapping[str, float] | None = None,
    disparities: pl.DataFrame | None = None,
    familywise: Familywise = "none",
    confidence: float = 0.95,
    min_groups: int = MIN_GROUPS,
    errors_as: ErrorsAs = "worst",
    require: Sequence[str] = (),
) -> GateResult:
    """Check a summary from :func:`aggregate` against thresholds.

    Every row of the summary (each metric and slice of ``per``; by default all of the summary's
    slice columns) is checked against every gate set. ``max_error_rate`` (default 0.05; None
    switches it off) fails a row where more than that share of pairs has no score (``n_errors
    / n_pairs``; with control pairs, ``(n_errors + n_control_errors) / (n_pairs + n_control)``),
    naming the commonest error. A slice with no scored pair fails the other gates:
    unknown is not fair; an empty summary fails whenever a gate is set.
    ``max_excess_divergence`` caps the divergence beyond the noise floor (counterfactual mean
    minus control mean): the primary fairness gate when the data has control rows; a slice with
    no scored control pair fails it as unmeasured (inconclusive), saying how to add controls.

    The fairness gates read the interval three ways (the default): a check **passes** when the
    unfavourable bound (``equivalence_rate_low``, ``divergence_rate_high``,
    ``mean_divergence_high``, ``excess_divergence_high``) is within the threshold and the slice
    has at least ``min_groups`` groups (default 30); it **fails** when even the favourable
    bound is beyond it; otherwise it is **inconclusive**, and its note says about how many more
    groups would likely decide it. A missing or NaN bound and a zero-width interval are
    inconclusive, never a pass. ``conservative=True`` is the one-sided reading: fail whenever
    the unfavourable bound is beyond. ``errors_as="worst"`` (the default) counts each unscored
    pair as divergent for a pass and as equivalent for a fail (``"ignore"``: scored pairs
    only), so losing exactly the divergent pairs cannot pass. ``require`` lists dimensions
    (values of the ``dimension`` column) the verdict needs: one the summary lacks, or never
    scored, is inconclusive. A fail anywhere makes the run FAIL, even beside inconclusive
    slices; the verdict lists both.

    A summary with human labels (``aggregate(..., labels=...)``) is gated on the corrected
    figures: ``*_ppi`` (with ``conservative``, their bounds) where a slice has labels, the
    judge's own figures where it has none; each check's note says which.
    ``min_label_agreement`` needs such a summary: it checks ``label_agreement``, the judge's
    quadratic weighted kappa against the labels, and a failure (or no labels) is
    inconclusive: an instrument people disagree with cannot vouch for fairness.
    ``min_judge_agreement`` checks ``judge_agreement`` (Krippendorff's alpha among a panel's
    judges) on its lower bound ``judge_agreement_low``, whatever ``conservative`` says: an
    interval that straddles the threshold is inconclusive, as is a failure. A summary with
    ``verdict_stability`` (from :func:`~pairwise_polars.verdict_stability`, repeats) gets a
    check per row: below 0.9 the verdict is inconclusive, with a note saying so. A threshold
    is a number in [0, 1] (scores are normalised: raw / rubric max), or a mapping from metric
    name to such a number; anything else, or a metric the summary lacks, raises
    :class:`GateError`.

    ``min_impact_ratio`` (the four-fifths rule is 0.8) and ``max_disadvantage`` (the largest
    disadvantage allowed on any attribute, per outcome: ``{"amount": 0.05, "decision": 0.1}``;
    ``refusal`` and ``favour`` too; one number for every outcome measured) check the frame of
    :func:`~pairwise_polars.disparities` passed as ``disparities=`` (or as ``summary``, alone).
    Both are two-sided (the reference treated worse fails too), name who is disadvantaged in
    the check's note, and are unmeasured where a slice has no such outcome; ``conservative``
    uses the interval bound farthest from parity.

    ``max_judge_attribute_effect`` needs a summary of a masked audit (``audit="mask"``): it
    checks the size of ``judge_attribute_effect`` on its interval's bound farthest from 0
    (whatever ``conservative`` says), and a failure, an interval across the threshold or no
    audit is inconclusive: a judge that reacts to the attribute
    itself cannot vouch for the system. Whatever the gates, a slice whose effect's interval
    excludes 0 is named in the verdict.

    ``familywise="holm"`` (or ``"bh"``) judges the failures of the fairness gates as one family
    (see :mod:`pairwise_polars.summary._familywise`): a check that fails stays failed only when
    its evidence of a breach (read from its interval at ``confidence``, the summary's) survives
    the adjustment over every fairness check; otherwise it is inconclusive, never a pass. The
    result says the correction it used (``familywise``, ``family``).

    >>> import polars as pl
    >>> summary = pl.DataFrame({"metric": ["pairwise-bias"], "dimension": ["gender"],
    ...     "n_pairs": [100], "n_errors": [0], "n_scored": [100], "n_groups": [50],
    ...     "equivalence_rate": [0.9], "equivalence_rate_low": [0.82],
    ...     "equivalence_rate_high": [0.95]})
    >>> gate(summary, min_equivalence_rate=0.75).status
    'pass'
    >>> gate(summary, min_equivalence_rate=0.85).status  # the interval straddles 0.85
    'inconclusive'
    >>> gate(summary, min_equivalence_rate=0.85, conservative=True).status
    'fail'
    """
    familywise = check_familywise(familywise)
    if familywise != "none" and conservative:
        raise OptionError(
            "familywise judges the evidence of a breach, and conservative=True fails without "
            "evidence (on the unfavourable bound): choose one."
        )
    checks = gate_checks(
        summary,
        thresholds={
            ERROR_GATE: max_error_rate,
            "min_equivalence_rate": min_equivalence_rate,
            "max_divergence_rate": max_divergence_rate,
            "max_mean_divergence": max_mean_divergence,
            EXCESS_GATE: max_excess_divergence,
            AGREEMENT_GATE: min_label_agreement,
            PANEL_GATE: min_judge_agreement,
            JUDGE_GATE: max_judge_attribute_effect,
        },
        per=per,
        reading=Reading(
            conservative=conservative,
            min_groups=check_min_groups(min_groups),
            errors_as=check_errors_as(errors_as),
        ),
        min_impact_ratio=min_impact_ratio,
        max_disadvantage=max_disadvantage,
        disparities=disparities,
        require=check_require(require),
    )
    measured = is_disparities(summary) and disparities is None
    slices = list(per) if per is not None else slice_columns(summary)
    notes = () if measured else tuple(judge_notes(summary, slices))
    return judged(checks, familywise, confidence, notes)


def judged(
    checks: pl.DataFrame,
    familywise: Familywise,
    confidence: float,
    notes: tuple[str, ...] = (),
) -> GateResult:
    """The verdict of checks from :func:`gate_checks` (of one or more scopes), their fairness
    failures judged as one family under ``familywise``; ``notes``: the judge's, if any."""
    checks, family = judged_as_family(checks, familywise, confidence)
    passed = checks.is_empty() or bool(checks["passed"].all())
    return GateResult(passed, checks, familywise, family, notes)
