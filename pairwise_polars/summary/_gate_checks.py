"""The checks of a gate: one row per (metric, slice, gate) with its threshold, what was
observed, its status (pass, fail, inconclusive) and a note that says why; fairness checks read
their interval three ways (:mod:`pairwise_polars.summary._three_way`)."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import polars as pl

from pairwise_polars._errors import ColumnError, GateError
from pairwise_polars.summary._aggregate import slice_columns
from pairwise_polars.summary._attribute_effect import JUDGE_GATE, effect_checks
from pairwise_polars.summary._disparity_gate import (
    DISPARITY_GATES,
    MIN_IMPACT_RATIO,
    disparity_checks,
    is_disparities,
)
from pairwise_polars.summary._familywise import breach_columns
from pairwise_polars.summary._power import MIN_DETECTABLE
from pairwise_polars.summary._ppi import AGREEMENT, corrected
from pairwise_polars.summary._required import required_checks
from pairwise_polars.summary._stability_check import stability_checks
from pairwise_polars.summary._three_way import Reading, counted, three_way, unscored_note
from pairwise_polars.summary._thresholds import check_threshold, warn_if_vacuous
from pairwise_polars.summary._trust_checks import Trust, trust_checks

Threshold = float | Mapping[str, float] | None
"""One threshold for every metric, a threshold per metric name, or None for no gate."""

# gate name -> (summary column, its conservative interval bound, "min" or "max")
_GATES = {
    "min_equivalence_rate": ("equivalence_rate", "equivalence_rate_low", "min"),
    "max_divergence_rate": ("divergence_rate", "divergence_rate_high", "max"),
    "max_mean_divergence": ("mean_divergence", "mean_divergence_high", "max"),
    "max_excess_divergence": ("excess_divergence", "excess_divergence_high", "max"),
    "min_label_agreement": ("label_agreement", "label_agreement", "min"),
    "min_judge_agreement": ("judge_agreement", "judge_agreement_low", "min"),
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
PANEL_GATE = "min_judge_agreement"
"""The panel's agreement among its judges (Krippendorff's alpha): like the label agreement, a
failure says the instrument cannot be trusted (inconclusive)."""
_TRUST = {
    AGREEMENT_GATE: Trust(
        gate=AGREEMENT_GATE,
        point=AGREEMENT,
        bound=AGREEMENT,  # kappa has no interval yet: read as it is
        absent="a summary with human labels: aggregate(..., labels=<a file of labels>) "
        "(sample_for_labelling picks the pairs).",
        unmeasured="no labelled pair in this slice",
    ),
    PANEL_GATE: Trust(
        gate=PANEL_GATE,
        point="judge_agreement",
        bound="judge_agreement_low",
        absent="a summary of a panel: score(..., judge=[judge_a, judge_b, judge_c]) then "
        "aggregate(...) (it checks judge_agreement).",
        unmeasured="one judge or one group",
    ),
}
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
_LIMIT = "__pairwise_limit"


def gate_checks(
    summary: pl.DataFrame,
    *,
    thresholds: Mapping[str, Threshold],
    per: Sequence[str] | None,
    reading: Reading,
    min_impact_ratio: float | None = None,
    max_disadvantage: float | Mapping[str, float] | None = None,
    disparities: pl.DataFrame | None = None,
    require: Sequence[str] = (),
) -> pl.DataFrame:
    """The checks of :func:`gate` before the family is judged (with its helper columns)."""
    conservative, min_groups = reading.conservative, reading.min_groups
    max_error_rate = thresholds.get(ERROR_GATE)
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
            min_groups=min_groups,
        )
    elif min_impact_ratio is not None or max_disadvantage is not None:
        raise GateError(
            "min_impact_ratio and max_disadvantage check disparities: pass "
            "disparities=pp.disparities(...) (or the disparities frame as the summary)."
        )
    warn_if_vacuous(MIN_IMPACT_RATIO, min_impact_ratio)
    if "metric" not in summary.columns:
        raise ColumnError(f"gate needs a summary from aggregate(); it has {summary.columns}.")
    slices = list(per) if per is not None else slice_columns(summary)
    given = {**thresholds, ERROR_GATE: max_error_rate}
    order = (ERROR_GATE, *_GATES, JUDGE_GATE)
    thresholds = {name: given.get(name) for name in order}  # one order
    metrics = summary["metric"].unique().drop_nulls().to_list()
    limits = {
        name: _validated(name, threshold, metrics, check_names=not summary.is_empty())
        for name, threshold in thresholds.items()
        if threshold is not None
    }
    for name, threshold in thresholds.items():
        warn_if_vacuous(name, threshold)
    if require:
        extra.append(required_checks(summary, require, CHECK_SCHEMA))
    if summary.is_empty() and not (extra and not limits):
        checks = _empty_check() if limits else pl.DataFrame(schema=CHECK_SCHEMA)
        return pl.concat([checks, *extra], how="diagonal_relaxed")
    frames, label = list(extra), _slice_label(slices)
    for name, limit in limits.items():
        if name == ERROR_GATE:
            frames.append(_error_checks(summary, slices, limit))
        elif name in _TRUST:  # the judge on trial: read on its lower bound, never a fail
            rows = _limited(summary, limit)
            frames.append(trust_checks(rows, _TRUST[name], label=label, limit=_LIMIT))
        elif name == JUDGE_GATE:  # the judge on trial: its failure is inconclusive
            frames.append(effect_checks(summary, label, limit))
        else:
            frames.append(_fairness_checks(summary, slices, name, limit, reading))
    stable = stability_checks(summary, label) if limits else None
    if stable is not None:
        frames.append(stable)
    return (
        pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame(schema=CHECK_SCHEMA)
    )


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


def _limited(summary: pl.DataFrame, limit: pl.Expr) -> pl.DataFrame:
    """The rows with a threshold, the threshold in ``_LIMIT``. (A filter on a literal's
    ``is_not_null`` raises ShapeError from 16,384 rows on under polars 2: a column does not.)"""
    return summary.with_columns(limit.cast(pl.Float64).alias(_LIMIT)).filter(
        pl.col(_LIMIT).is_not_null()
    )


def _fairness_checks(
    summary: pl.DataFrame, slices: list[str], name: str, limit: pl.Expr, reading: Reading
) -> pl.DataFrame:
    """The three-way checks of one fairness gate (see :mod:`pairwise_polars.summary._three_way`)."""
    point, bound, direction = _GATES[name]
    columns = summary.columns
    if point not in columns:
        raise ColumnError(f"gate {name} needs the summary column {point!r}.")
    figures = _figures(summary, point, bound, direction, reading)
    estimate, unf, fav = figures.estimate, figures.unfavourable, figures.favourable
    groups = pl.col("n_groups") if "n_groups" in columns else pl.lit(None, pl.Int64)
    threshold = pl.col(_LIMIT)
    status, why = three_way(
        estimate=estimate,
        unfavourable=unf,
        favourable=fav,
        low=figures.low,
        high=figures.high,
        threshold=threshold,
        direction=direction,
        groups=groups,
        conservative=reading.conservative,
        min_groups=reading.min_groups,
        bound=bound,
    )
    note = pl.when(estimate.is_null()).then(_missing(name, point, columns)).otherwise(why)
    counted_note = unscored_note(columns, reading.errors_as)
    if counted_note is not None:  # only where there is a figure to count them into
        counted_note = pl.when(estimate.is_not_null()).then(counted_note)
    note = _joined(_joined(note, figures.basis), counted_note)
    if name == EXCESS_GATE and MIN_DETECTABLE in columns:
        weak = _underpowered(status, threshold)
        note = pl.when(note.is_null() | (note == "")).then(weak).otherwise(_joined(note, weak))
    return _limited(summary, limit).select(
        metric=pl.col("metric"),
        slice=_slice_label(slices),
        gate=pl.lit(name),
        threshold=threshold,
        observed=(unf if reading.conservative else estimate).cast(pl.Float64),
        passed=(status == "pass").fill_null(False),
        status=status,
        note=note,
        **breach_columns(summary, point, direction, estimate=figures.best, favourable=fav),
    )


class _Figures(NamedTuple):
    """What a fairness gate reads of its summary column: the estimate and the note that says
    which (the judge's or the corrected), its bounds with failed judgements counted at their
    worst (``unfavourable``) and best (``favourable``), the estimate at its best, and the
    interval as measured (``low``, ``high``: its width says whether it can vouch at all)."""

    estimate: pl.Expr
    basis: pl.Expr | None
    unfavourable: pl.Expr
    favourable: pl.Expr
    best: pl.Expr
    low: pl.Expr
    high: pl.Expr


def _figures(
    summary: pl.DataFrame, point: str, bound: str, direction: str, reading: Reading
) -> _Figures:
    """The figures of the gate on ``point`` (``bound``: its unfavourable bound's column)."""
    favourable = f"{point}_low" if direction == "max" else f"{point}_high"
    columns = summary.columns

    def figure(column: str, *, unfavourable: bool) -> pl.Expr:
        if column not in columns:  # no interval: inconclusive, never a pass
            return pl.lit(None, pl.Float64)
        chosen = corrected(summary, point, column, conservative=True)[0].cast(pl.Float64)
        if reading.errors_as == "ignore":
            return chosen
        return counted(columns, point, direction, chosen, worst=unfavourable)

    estimate, basis = corrected(summary, point, point, conservative=False)
    estimate = estimate.cast(pl.Float64)
    unf = figure(bound, unfavourable=True)
    fav = figure(favourable, unfavourable=False)
    if reading.errors_as == "ignore":
        best = estimate
    else:
        best = counted(columns, point, direction, estimate, worst=False)
    low, high = (  # the interval as measured: its width says whether it can vouch at all
        corrected(summary, point, c, conservative=True)[0].cast(pl.Float64)
        if c in columns
        else pl.lit(None, pl.Float64)
        for c in (f"{point}_low", f"{point}_high")
    )
    return _Figures(estimate, basis, unf, fav, best, low, high)


def _missing(name: str, point: str, columns: Sequence[str]) -> pl.Expr:
    """Why a row has no figure to check: nothing scored, no controls (or none scored) for the
    excess, or no figure at all; unknown is never fair."""
    unscored = pl.col("n_scored") == 0 if "n_scored" in columns else pl.col(point).is_null()
    no_controls = pl.lit(name == EXCESS_GATE) & pl.col(point).is_null()
    controls_failed = pl.col("n_control") > 0 if "n_control" in columns else pl.lit(False)
    return (
        pl.when(unscored)
        .then(pl.lit("no scored pairs: unknown is not fair"))
        .when(no_controls & controls_failed)
        .then(pl.lit(UNSCORED_CONTROLS))
        .when(no_controls)
        .then(pl.lit(NO_CONTROLS))
        .otherwise(pl.lit(f"no {point}: unknown is not fair"))
    )


def _underpowered(status: pl.Expr, threshold: pl.Expr) -> pl.Expr:
    """A pass on a slice too small to see an excess at the threshold says so (null otherwise)."""
    mde = pl.col(MIN_DETECTABLE)
    return pl.when((status == "pass") & (mde > threshold)).then(
        pl.format(
            "underpowered: this slice detects an excess of {} or more at 80% power, not one of "
            "{}; add groups (plan(detect=...) says how many)",
            mde.round(3),
            threshold.round(3),
        )
    )


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
    passed = (observed <= pl.col(_LIMIT)).fill_null(False)
    return _limited(summary, limit).select(
        metric=pl.col("metric"),
        slice=_slice_label(slices),
        gate=pl.lit(ERROR_GATE),
        threshold=pl.col(_LIMIT),
        observed=observed,
        passed=passed,
        status=pl.when(passed).then(pl.lit("pass")).otherwise(pl.lit("inconclusive")),
        note=pl.when(~passed).then(why),
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
            "status": ["inconclusive"],
        },
        schema={**CHECK_SCHEMA, "status": pl.String},
    )


def slice_label(slices: Sequence[str]) -> pl.Expr:
    """The ``slice`` label a check gets for a summary row sliced by ``slices``."""
    return _slice_label(list(slices))


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
