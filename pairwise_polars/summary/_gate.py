"""Gates: thresholds on a summary that pass or fail a run (and a CI job).

Gates fail closed: judgements that failed count against a run (``max_error_rate``), a run with
nothing scored never passes, a threshold for a metric the summary lacks is an error, and a
threshold outside [0, 1] is refused. A run that failed for want of measurements reads
``INCONCLUSIVE``, one that failed on fairness ``FAIL``.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import polars as pl

from pairwise_polars._errors import ColumnError, GateError, OptionError
from pairwise_polars.summary._aggregate import slice_columns
from pairwise_polars.summary._attribute_effect import JUDGE_GATE, effect_checks, judge_notes
from pairwise_polars.summary._disparity_gate import (
    DISPARITY_GATES,
    disparity_checks,
    is_disparities,
)
from pairwise_polars.summary._familywise import (
    Familywise,
    breach_columns,
    check_familywise,
    judged_as_family,
)
from pairwise_polars.summary._ppi import CORRECTED, corrected
from pairwise_polars.summary._thresholds import check_threshold

Threshold = float | Mapping[str, float] | None
"""One threshold for every metric, a threshold per metric name, or None for no gate."""

# gate name -> (summary column, its conservative interval bound, "min" or "max")
_GATES = {
    "min_equivalence_rate": ("equivalence_rate", "equivalence_rate_low", "min"),
    "max_divergence_rate": ("divergence_rate", "divergence_rate_high", "max"),
    "max_mean_divergence": ("mean_divergence", "mean_divergence_high", "max"),
    "max_excess_divergence": ("excess_divergence", "excess_divergence_high", "max"),
    "min_label_agreement": ("label_agreement", "label_agreement", "min"),
}
EXCESS_GATE = "max_excess_divergence"
NO_CONTROLS = (
    "no control pairs: add control rows (role 'control': a second answer to the reference's "
    "input; counterfactuals() adds one per group) to measure the noise floor"
)
UNSCORED_CONTROLS = (
    "no scored control pairs (their judgements failed): the noise floor is unknown, and "
    "unknown is not fair"
)
AGREEMENT_GATE = "min_label_agreement"
"""The judge's agreement with human labels (quadratic weighted kappa): a failure says the
instrument cannot be trusted, so the verdict is inconclusive, not FAIL."""
ERROR_GATE = "max_error_rate"
EMPTY_CHECK = "scored_pairs"
"""The check a gate adds when the summary is empty: nothing was scored, so nothing passes."""
DEFAULT_MAX_ERROR_RATE = 0.05
GATE_NAMES = (*_GATES, ERROR_GATE, *DISPARITY_GATES, JUDGE_GATE)
"""The gates a summary can be checked against (the keywords of :func:`gate`)."""
FAIRNESS_GATES = tuple(_GATES)
CHECK_SCHEMA = {
    "metric": pl.String,
    "slice": pl.String,
    "gate": pl.String,
    "threshold": pl.Float64,
    "observed": pl.Float64,
    "passed": pl.Boolean,
    "note": pl.String,
}
Status = Literal["pass", "fail", "inconclusive"]


@dataclass(frozen=True)
class GateResult:
    """The verdict of :func:`gate`: ``passed`` and one ``checks`` row per (metric, slice, gate).

    ``status`` tells a fairness failure (``"fail"``) from a run that could not be measured
    (``"inconclusive"``: judgements failed beyond ``max_error_rate``, a slice had no scored
    pair, or nothing was scored at all).
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
        """``"pass"``, ``"fail"`` (a fairness gate failed on measured pairs) or
        ``"inconclusive"`` (a failure for want of measurements, whatever else failed)."""
        if self.passed:
            return "pass"
        failed = self.failures
        untrusted = [ERROR_GATE, EMPTY_CHECK, AGREEMENT_GATE, JUDGE_GATE]
        unmeasured = pl.col("gate").is_in(untrusted) | pl.col("observed").is_null()
        if "status" in failed.columns:  # checks that carry their own three-way status
            said = pl.col("status")
            unmeasured = pl.when(said.is_null()).then(unmeasured).otherwise(said == "inconclusive")
        return "inconclusive" if not failed.filter(unmeasured).is_empty() else "fail"

    def _unmeasured(self) -> str:
        failed = self.failures
        reasons = []
        if not failed.filter(pl.col("gate") == ERROR_GATE).is_empty():
            reasons.append(f"judgements failed beyond {ERROR_GATE}")
        if not failed.filter(pl.col("gate") == AGREEMENT_GATE).is_empty():
            reasons.append(f"the judge agrees with the human labels below {AGREEMENT_GATE}")
        if not failed.filter(pl.col("gate") == JUDGE_GATE).is_empty():
            reasons.append(f"the judge reacts to the attribute beyond {JUDGE_GATE}")
        if not failed.filter(pl.col("gate") == EMPTY_CHECK).is_empty():
            reasons.append("nothing was scored")
        elif not reasons:
            unknown = failed.filter(pl.col("observed").is_null())["note"].drop_nulls()
            if unknown.str.starts_with("no scored pairs").any():
                reasons.append("a slice has no scored pair")
            if unknown.str.contains("one group").any():
                reasons.append("a slice has only one group (no interval bound)")
            if unknown.str.contains("control pairs").any():
                reasons.append("a slice has no scored control pairs (no noise floor)")
            if unknown.str.contains("measured in this slice|no decision in any").any():
                reasons.append("an outcome was not measured in a slice")
            if "status" in failed.columns:
                undecided = failed.filter(
                    (pl.col("status") == "inconclusive") & pl.col("observed").is_not_null()
                )
                if not undecided.is_empty():
                    reasons.append(
                        "a disparity's interval straddles its threshold, or its slice has too "
                        "few groups"
                    )
        return "; ".join(reasons)

    def verdict(self) -> str:
        """One readable paragraph: PASS, FAIL or INCONCLUSIVE, then one line per failed check."""
        if self.checks.is_empty():
            return "PASS: no gate was set."
        failed = self.failures
        tally = f"{self.checks.height - failed.height} of {self.checks.height} gate checks passed."
        status = self.status
        if status == "pass":
            head = f"PASS: {tally}"
        elif status == "fail":
            head = f"FAIL: {tally}"
        else:
            head = f"INCONCLUSIVE: {self._unmeasured()}, so this run cannot vouch for fairness "
            head += f"(fix the judge or the data and rerun). {tally}"
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
    max_error_rate: Threshold = DEFAULT_MAX_ERROR_RATE,
    max_judge_attribute_effect: Threshold = None,
    per: Sequence[str] | None = None,
    conservative: bool = False,
    min_impact_ratio: float | None = None,
    max_disadvantage: float | Mapping[str, float] | None = None,
    disparities: pl.DataFrame | None = None,
    familywise: Familywise = "none",
    confidence: float = 0.95,
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
    ``conservative=True`` compares the interval bound that is least favourable
    (``equivalence_rate_low``, ``divergence_rate_high``, ``mean_divergence_high``,
    ``excess_divergence_high``) instead of the point estimate.

    A summary with human labels (``aggregate(..., labels=...)``) is gated on the corrected
    figures: ``*_ppi`` (with ``conservative``, their bounds) where a slice has labels, the
    judge's own figures where it has none; each check's note says which.
    ``min_label_agreement`` needs such a summary: it checks ``label_agreement``, the judge's
    quadratic weighted kappa against the labels, and a failure (or no labels) is
    inconclusive: an instrument people disagree with cannot vouch for fairness. A
    threshold is a number in [0, 1] (scores are normalised: raw / rubric max), or a mapping
    from metric name to such a number; anything else, or a metric the summary lacks, raises
    :class:`GateError`.

    ``min_impact_ratio`` (the four-fifths rule is 0.8) and ``max_disadvantage`` (the largest
    disadvantage allowed on any attribute, per outcome: ``{"amount": 0.05, "decision": 0.1}``;
    ``refusal`` and ``favour`` too; one number for every outcome measured) check the frame of
    :func:`~pairwise_polars.disparities` passed as ``disparities=`` (or as ``summary``, alone).
    Both are two-sided (the reference treated worse fails too), name who is disadvantaged in
    the check's note, and are unmeasured where a slice has no such outcome; ``conservative``
    uses the interval bound farthest from parity.

    ``max_judge_attribute_effect`` needs a summary of a masked audit (``audit="mask"``): it
    checks the size of ``judge_attribute_effect`` (``conservative``: its bound farthest from
    0), and a failure (or no audit) is inconclusive: a judge that reacts to the attribute
    itself cannot vouch for the system. Whatever the gates, a slice whose effect's interval
    excludes 0 is named in the verdict.

    ``familywise="holm"`` (or ``"bh"``) judges the failures of the fairness gates as one family
    (see :mod:`pairwise_polars.summary._familywise`): a check that fails stays failed only when
    its evidence of a breach (read from its interval at ``confidence``, the summary's) survives
    the adjustment over every fairness check; otherwise it is inconclusive, never a pass. The
    result says the correction it used (``familywise``, ``family``).

    >>> import polars as pl
    >>> summary = pl.DataFrame({"metric": ["pairwise-bias"], "dimension": ["gender"],
    ...     "n_pairs": [10], "n_errors": [0], "n_scored": [10], "equivalence_rate": [0.8],
    ...     "equivalence_rate_low": [0.49]})
    >>> gate(summary, min_equivalence_rate=0.75).passed
    True
    """
    familywise = check_familywise(familywise)
    if familywise != "none" and conservative:
        raise OptionError(
            "familywise judges the evidence of a breach, and conservative=True fails without "
            "evidence (on the unfavourable bound): choose one."
        )
    extra: list[pl.DataFrame] = []
    if is_disparities(summary) and disparities is None:
        disparities, summary = summary, pl.DataFrame(schema={"metric": pl.String})
        max_error_rate = None  # a disparities frame counts no judgements
    if disparities is not None:
        extra = disparity_checks(
            disparities,
            min_impact_ratio=min_impact_ratio,
            max_disadvantage=max_disadvantage,
            conservative=conservative,
            check_schema=CHECK_SCHEMA,
        )
    elif min_impact_ratio is not None or max_disadvantage is not None:
        raise GateError(
            "min_impact_ratio and max_disadvantage check disparities: pass "
            "disparities=pp.disparities(...) (or the disparities frame as the summary)."
        )
    if "metric" not in summary.columns:
        raise ColumnError(f"gate needs a summary from aggregate(); it has {summary.columns}.")
    slices = list(per) if per is not None else slice_columns(summary)
    thresholds = {
        ERROR_GATE: max_error_rate,
        "min_equivalence_rate": min_equivalence_rate,
        "max_divergence_rate": max_divergence_rate,
        "max_mean_divergence": max_mean_divergence,
        EXCESS_GATE: max_excess_divergence,
        AGREEMENT_GATE: min_label_agreement,
        JUDGE_GATE: max_judge_attribute_effect,
    }
    metrics = summary["metric"].unique().drop_nulls().to_list()
    limits = {
        name: _validated(name, threshold, metrics, check_names=not summary.is_empty())
        for name, threshold in thresholds.items()
        if threshold is not None
    }
    if summary.is_empty() and not (extra and not limits):
        checks = _empty_check() if limits else pl.DataFrame(schema=CHECK_SCHEMA)
        checks = pl.concat([checks, *extra], how="diagonal_relaxed")
        return GateResult(passed=checks.is_empty() or bool(checks["passed"].all()), checks=checks)
    frames = list(extra)
    for name, limit in limits.items():
        if name == ERROR_GATE:
            frames.append(_error_checks(summary, slices, limit))
            continue
        if name == JUDGE_GATE:
            label = _slice_label(slices)
            frames.append(effect_checks(summary, label, limit, conservative=conservative))
            continue
        point, bound, direction = _GATES[name]
        column = bound if conservative else point
        if name == AGREEMENT_GATE and column not in summary.columns:
            raise ColumnError(
                f"gate {AGREEMENT_GATE} needs a summary with human labels: "
                "aggregate(..., labels=<a file of labels>) (sample_for_labelling picks the pairs)."
            )
        if column not in summary.columns:
            raise ColumnError(f"gate {name} needs the summary column {column!r}.")
        observed, basis = corrected(summary, point, column, conservative=conservative)
        ok = observed >= limit if direction == "min" else observed <= limit
        has_counts = "n_scored" in summary.columns
        unscored = pl.col("n_scored") == 0 if has_counts else pl.col(point).is_null()
        no_controls = (
            pl.lit(name == EXCESS_GATE) & pl.col(point).is_null()
            if point in summary.columns
            else pl.lit(name == EXCESS_GATE)
        )
        controls_failed = (
            pl.col("n_control") > 0 if "n_control" in summary.columns else pl.lit(False)
        )
        frames.append(
            summary.filter(limit.is_not_null()).select(
                metric=pl.col("metric"),
                slice=_slice_label(slices),
                gate=pl.lit(name),
                threshold=limit.cast(pl.Float64),
                observed=observed.cast(pl.Float64),
                passed=pl.when(observed.is_null()).then(False).otherwise(ok),
                note=_joined(
                    pl.when(observed.is_null() & unscored)
                    .then(pl.lit("no scored pairs: unknown is not fair"))
                    .when(observed.is_null() & no_controls & controls_failed)
                    .then(pl.lit(UNSCORED_CONTROLS))
                    .when(observed.is_null() & no_controls)
                    .then(pl.lit(NO_CONTROLS))
                    .when(observed.is_null())
                    .then(pl.lit(f"no {column} (one group: no interval): unknown is not fair"))
                    .when(pl.lit(conservative))
                    .then(pl.lit(f"on the interval bound {bound}")),
                    basis,
                ),
                **breach_columns(summary, point, direction),
            )
        )
    checks = (
        pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame(schema=CHECK_SCHEMA)
    )
    checks, family = judged_as_family(checks, familywise, confidence)
    notes = tuple(judge_notes(summary, slices))
    return GateResult(bool(checks["passed"].all()), checks, familywise, family, notes)


def _validated(
    name: str, threshold: float | Mapping[str, float], metrics: list[str], *, check_names: bool
) -> pl.Expr:
    """The threshold as an expression over a summary row's metric; refuses bad values and
    metrics the summary lacks (with a suggestion)."""
    if not isinstance(threshold, Mapping):
        return pl.lit(check_threshold(threshold, name), pl.Float64)
    values = {str(m): check_threshold(v, f"{name}[{m!r}]") for m, v in threshold.items()}
    unknown = [m for m in values if m not in metrics]
    if check_names and unknown:
        close = difflib.get_close_matches(unknown[0], metrics, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise GateError(
            f"{name} names metric {unknown[0]!r}, which the summary does not have (its metrics: "
            f"{', '.join(sorted(metrics))}).{hint} A gate on a missing metric would pass "
            "without checking anything."
        )
    return pl.col("metric").replace_strict(values, default=None, return_dtype=pl.Float64)


def _error_checks(summary: pl.DataFrame, slices: list[str], limit: pl.Expr) -> pl.DataFrame:
    missing = [c for c in ("n_pairs", "n_errors") if c not in summary.columns]
    if missing:
        raise ColumnError(
            f"gate {ERROR_GATE} needs the summary columns {missing} (a summary from "
            f"aggregate() has them); pass {ERROR_GATE}=None to gate a summary without them."
        )
    errors, pairs = pl.col("n_errors"), pl.col("n_pairs")
    if {"n_control", "n_control_errors"} <= set(summary.columns):
        # Control judgements are judgements too: a failed one leaves the noise floor unmeasured.
        errors = errors + pl.col("n_control_errors").fill_null(0)
        pairs = pairs + pl.col("n_control").fill_null(0)
    observed = (errors / pairs).cast(pl.Float64)
    top = pl.col("top_error") if "top_error" in summary.columns else pl.lit(None, pl.String)
    why = pl.concat_str(
        errors.cast(pl.String),
        pl.lit(" of "),
        pairs.cast(pl.String),
        pl.lit(" judgements failed"),
        pl.when(top.is_not_null()).then(pl.lit("; commonest error: ") + top).otherwise(pl.lit("")),
    )
    return summary.filter(limit.is_not_null()).select(
        metric=pl.col("metric"),
        slice=_slice_label(slices),
        gate=pl.lit(ERROR_GATE),
        threshold=limit.cast(pl.Float64),
        observed=observed,
        passed=observed <= limit,
        note=pl.when(observed > limit).then(why),
    )


def _empty_check() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "metric": ["(none)"],
            "slice": ["overall"],
            "gate": [EMPTY_CHECK],
            "threshold": [1.0],
            "observed": [0.0],
            "passed": [False],
            "note": ["the summary is empty: no pair was scored, and unknown is not fair"],
        },
        schema=CHECK_SCHEMA,
    )


def _slice_label(slices: list[str]) -> pl.Expr:
    if not slices:
        return pl.lit("overall")
    parts = []
    for i, name in enumerate(slices):
        value = pl.col(name).cast(pl.String).fill_null("null")
        parts += [pl.lit(("" if i == 0 else ", ") + f"{name}="), value]
    return pl.concat_str(parts)


def _joined(note: pl.Expr, basis: pl.Expr | None) -> pl.Expr:
    if basis is None:
        return note
    return pl.concat_str([note, basis], separator="; ", ignore_nulls=True)
