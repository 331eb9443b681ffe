"""The run summary: overall rows and per-slice rows in one frame, and gates on both scopes
(the stage a manifest run and the CLI share; the report only renders its result)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from pairwise_polars._errors import ColumnError, GateError, OptionError
from pairwise_polars.io._frames import DataLike
from pairwise_polars.summary._aggregate import (
    SCOPE,
    SUMMARY_COLUMNS,
    aggregate_checked,
    checked_rows,
    default_slices,
    slice_columns,
)
from pairwise_polars.summary._attribute_effect import EFFECT_COLUMNS, judge_notes
from pairwise_polars.summary._disparity_gate import DISPARITY_GATES
from pairwise_polars.summary._familywise import Familywise, check_familywise
from pairwise_polars.summary._gate import (
    CHECK_SCHEMA,
    DEFAULT_MAX_ERROR_RATE,
    ERROR_GATE,
    GATE_NAMES,
    GateResult,
    Threshold,
    gate_checks,
    judged,
)
from pairwise_polars.summary._judge_figures import JUDGE_COLUMNS
from pairwise_polars.summary._ppi import PPI_COLUMNS
from pairwise_polars.summary._required import check_require, required_checks
from pairwise_polars.summary._three_way import (
    MIN_GROUPS,
    ErrorsAs,
    Reading,
    check_errors_as,
    check_min_groups,
)


def summarize(
    scored: DataLike,
    slices: Sequence[str] | None = None,
    *,
    equivalence_threshold: float = 0.0,
    divergence_threshold: float = 0.5,
    confidence: float = 0.95,
    group_by: str = "group_id",
    labels: DataLike | None = None,
) -> pl.DataFrame:
    """:func:`~pairwise_polars.aggregate` overall (``scope == "overall"``, slice columns null)
    and by ``slices`` (``scope == "slice"``; by default ``dimension`` when the frame has it), in
    one frame: metric, scope, slices, statistics (with ``labels``, the prediction-powered
    figures too).

    >>> import polars as pl
    >>> scored = pl.DataFrame({"metric": "pairwise-bias", "group_id": [1, 2],
    ...     "dimension": ["age", "gender"], "score": [0.0, 0.5]})
    >>> summarize(scored).select("scope", "dimension", "n_pairs").rows()
    [('overall', None, 2), ('slice', 'age', 1), ('slice', 'gender', 1)]
    """
    frame, members = checked_rows(  # labels checked and joined once for both scopes
        scored, labels, confidence, (equivalence_threshold, divergence_threshold)
    )
    slices = default_slices(frame.collect_schema()) if slices is None else list(slices)
    bad = [s for s in slices if s in ("metric", SCOPE, *SUMMARY_COLUMNS)]
    if bad:
        raise ColumnError(f"Slice columns {bad} clash with summary column names; rename them.")
    options = {
        "equivalence_threshold": equivalence_threshold,
        "divergence_threshold": divergence_threshold,
        "confidence": confidence,
        "group_by": group_by,
        "members": members,
    }
    overall = aggregate_checked(frame, (), **options).with_columns(pl.lit("overall").alias(SCOPE))
    frames = [overall]
    if slices:
        frames.append(
            aggregate_checked(frame, slices, **options).with_columns(pl.lit("slice").alias(SCOPE))
        )
    summary = pl.concat(frames, how="diagonal_relaxed")
    # Metrics in the order they were scored (the order the user listed them), not alphabetical.
    order = (
        frame.select(pl.col("metric").unique(maintain_order=True))
        .collect()
        .with_row_index("__order")
    )
    return (
        summary.join(order, on="metric", how="left")
        .sort("__order", pl.col(SCOPE) != "overall", *slices, nulls_last=True, maintain_order=True)
        .select(
            "metric", SCOPE, *slices, *SUMMARY_COLUMNS,
            *[c for c in PPI_COLUMNS if c in summary.columns],
            *[c for c in EFFECT_COLUMNS if c in summary.columns],
            *[c for c in JUDGE_COLUMNS if c in summary.columns],
        )
    )  # fmt: skip


def gate_summary(
    summary: pl.DataFrame,
    *,
    overall: Mapping[str, Threshold] | None = None,
    per_slice: Mapping[str, Threshold] | None = None,
    conservative: bool = False,
    disparities: pl.DataFrame | None = None,
    min_groups: int = MIN_GROUPS,
    errors_as: ErrorsAs = "worst",
    familywise: Familywise = "none",
    confidence: float = 0.95,
    require: Sequence[str] = (),
) -> GateResult:
    """Check ``overall`` thresholds on the overall rows and ``per_slice`` thresholds on every
    slice row; one :class:`~pairwise_polars.GateResult` for both (slice ``"overall"`` or e.g.
    ``"dimension=age"``). Keys are gate names of :func:`~pairwise_polars.gate`, and so are the
    keywords: the three-way reading (``conservative=True``: the one-sided one), ``min_groups``
    (default 30) for a pass, ``errors_as``, and ``familywise`` (at ``confidence``, the
    summary's), which judges the fairness checks of both scopes as one family.

    ``max_error_rate`` applies to both scopes at its default (0.05) unless a scope sets it
    (``None`` switches it off there): a slice whose judgements failed is unmeasured even when
    the overall rate is low. An empty summary fails whenever a gate is set. ``require`` lists
    the dimensions (values of the ``dimension`` slice column) the verdict needs: one with no
    scored pair makes the run inconclusive.

    ``min_impact_ratio`` and ``max_disadvantage`` (in either scope: they check every attribute
    row) read ``disparities`` (from :func:`~pairwise_polars.disparities`).

    >>> import polars as pl
    >>> scored = pl.DataFrame({"metric": "pairwise-bias", "group_id": range(40),
    ...     "dimension": "gender", "score": [0.0] * 30 + [0.25] * 10})
    >>> gate_summary(summarize(scored), per_slice={"max_mean_divergence": 0.2}).status
    'pass'
    >>> gate_summary(summarize(scored), require=["race"]).status
    'inconclusive'
    """
    familywise = check_familywise(familywise)
    if familywise != "none" and conservative:
        raise OptionError(
            "familywise judges the evidence of a breach, and conservative=True fails without "
            "evidence (on the unfavourable bound): choose one."
        )
    reading = Reading(
        conservative=conservative,
        min_groups=check_min_groups(min_groups),
        errors_as=check_errors_as(errors_as),
    )
    overall, per_slice, on_disparities = _split_disparity_gates(overall, per_slice)
    frames, notes = _scoped_checks(summary, overall, per_slice, reading)
    if on_disparities:
        if disparities is None:
            raise GateError(
                f"{' and '.join(on_disparities)} check disparities: pass gate_summary(..., "
                "disparities=pp.disparities(...))."
            )
        frames.append(
            gate_checks(disparities, thresholds={}, per=None, reading=reading, **on_disparities)
        )
    require = check_require(require)
    if require:
        rows = summary.filter(pl.col(SCOPE) == "slice") if SCOPE in summary.columns else summary
        frames.append(required_checks(rows, require, CHECK_SCHEMA))
    frames = [f for f in frames if not f.is_empty()]
    checks = (
        pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame(schema=CHECK_SCHEMA)
    )
    # Both scopes' fairness checks are judged as one family.
    return judged(checks, familywise, confidence, notes)


def _split_disparity_gates(
    overall: Mapping[str, Threshold] | None, per_slice: Mapping[str, Threshold] | None
) -> tuple[dict[str, Threshold], dict[str, Threshold], dict[str, Any]]:
    overall, per_slice = dict(overall or {}), dict(per_slice or {})
    on_disparities: dict[str, Any] = {}
    for scope in (overall, per_slice):
        for name in DISPARITY_GATES:
            if name in scope:
                on_disparities[name] = scope.pop(name)
    return overall, per_slice, on_disparities


def _scoped_checks(
    summary: pl.DataFrame,
    overall: Mapping[str, Threshold],
    per_slice: Mapping[str, Threshold],
    reading: Reading,
) -> tuple[list[pl.DataFrame], tuple[str, ...]]:
    """Each scope's checks (before the family is judged), and the judge's notes."""
    overall = {ERROR_GATE: DEFAULT_MAX_ERROR_RATE, **overall}
    per_slice = {ERROR_GATE: DEFAULT_MAX_ERROR_RATE, **per_slice}
    unknown = [k for k in (*overall, *per_slice) if k not in GATE_NAMES]
    if unknown:
        raise GateError(f"Unknown gate {unknown[0]!r}; gates: {', '.join(GATE_NAMES)}.")
    slices = slice_columns(summary)
    if summary.is_empty():
        both = {k: v for k, v in overall.items() if v is not None}
        both |= {k: v for k, v in per_slice.items() if v is not None}
        empty = gate_checks(summary, thresholds={ERROR_GATE: None, **both}, per=[], reading=reading)
        return [empty], ()
    if SCOPE in summary.columns:
        overall_rows = summary.filter(pl.col(SCOPE) == "overall").drop(SCOPE, *slices)
        slice_rows = summary.filter(pl.col(SCOPE) == "slice").drop(SCOPE)
    else:  # a plain aggregate() frame: its rows are slices
        overall_rows, slice_rows = summary.clear().drop(slices), summary
    frames = []
    if not overall_rows.is_empty():
        frames.append(gate_checks(overall_rows, thresholds=overall, per=[], reading=reading))
    if not slice_rows.is_empty():
        frames.append(gate_checks(slice_rows, thresholds=per_slice, per=slices, reading=reading))
    notes = (*judge_notes(overall_rows, []), *judge_notes(slice_rows, slices))
    return frames, notes
