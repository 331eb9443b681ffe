"""The run summary: overall rows and per-slice rows in one frame, and gates on both scopes
(the stage a manifest run and the CLI share; the report only renders its result)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from pairwise_polars._errors import ColumnError, GateError
from pairwise_polars.io._frames import DataLike, to_lazy
from pairwise_polars.labels import attach_labels
from pairwise_polars.summary._aggregate import (
    SCOPE,
    SUMMARY_COLUMNS,
    aggregate,
    default_slices,
    slice_columns,
)
from pairwise_polars.summary._attribute_effect import EFFECT_COLUMNS, JUDGE_GATE
from pairwise_polars.summary._disparity_gate import DISPARITY_GATES
from pairwise_polars.summary._gate import (
    CHECK_SCHEMA,
    DEFAULT_MAX_ERROR_RATE,
    ERROR_GATE,
    GATE_NAMES,
    GateResult,
    Threshold,
    gate,
)
from pairwise_polars.summary._ppi import PPI_COLUMNS


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
    frame, _ = to_lazy(scored)
    if labels is not None:  # checked and joined once for both scopes
        frame = attach_labels(frame, labels)
    slices = default_slices(frame.collect_schema()) if slices is None else list(slices)
    bad = [s for s in slices if s in ("metric", SCOPE, *SUMMARY_COLUMNS)]
    if bad:
        raise ColumnError(f"Slice columns {bad} clash with summary column names; rename them.")
    options = {
        "equivalence_threshold": equivalence_threshold,
        "divergence_threshold": divergence_threshold,
        "confidence": confidence,
        "group_by": group_by,
    }
    overall = aggregate(frame, by=(), **options).with_columns(pl.lit("overall").alias(SCOPE))
    frames = [overall]
    if slices:
        frames.append(
            aggregate(frame, by=slices, **options).with_columns(pl.lit("slice").alias(SCOPE))
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
        )
    )  # fmt: skip


def gate_summary(
    summary: pl.DataFrame,
    *,
    overall: Mapping[str, Threshold] | None = None,
    per_slice: Mapping[str, Threshold] | None = None,
    conservative: bool = False,
    disparities: pl.DataFrame | None = None,
) -> GateResult:
    """Check ``overall`` thresholds on the overall rows and ``per_slice`` thresholds on every
    slice row; one :class:`~pairwise_polars.GateResult` for both (slice ``"overall"`` or e.g.
    ``"dimension=age"``). Keys are gate names of :func:`~pairwise_polars.gate`.

    ``max_error_rate`` applies to both scopes at its default (0.05) unless a scope sets it
    (``None`` switches it off there): a slice whose judgements failed is unmeasured even when
    the overall rate is low. An empty summary fails whenever a gate is set.

    ``min_impact_ratio`` and ``max_disadvantage`` (in either scope: they check every attribute
    row) read ``disparities`` (from :func:`~pairwise_polars.disparities`)."""
    overall, per_slice, on_disparities = _split_disparity_gates(overall, per_slice)
    extra = _disparity_result(disparities, on_disparities, conservative)
    result = _gate_summary(summary, overall, per_slice, conservative)
    if extra is None:
        return result
    checks = pl.concat([result.checks, extra.checks], how="diagonal_relaxed")
    return GateResult(passed=result.passed and extra.passed, checks=checks)


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


def _disparity_result(
    disparities: pl.DataFrame | None, gates: Mapping[str, Any], conservative: bool
) -> GateResult | None:
    if not gates:
        return None
    if disparities is None:
        raise GateError(
            f"{' and '.join(gates)} check disparities: pass gate_summary(..., "
            "disparities=pp.disparities(...))."
        )
    return gate(disparities, conservative=conservative, **gates)


def _gate_summary(
    summary: pl.DataFrame,
    overall: Mapping[str, Threshold],
    per_slice: Mapping[str, Threshold],
    conservative: bool,
) -> GateResult:
    overall = {ERROR_GATE: DEFAULT_MAX_ERROR_RATE, **overall}
    per_slice = {ERROR_GATE: DEFAULT_MAX_ERROR_RATE, **per_slice}
    unknown = [k for k in (*overall, *per_slice) if k not in GATE_NAMES]
    if unknown:
        raise GateError(f"Unknown gate {unknown[0]!r}; gates: {', '.join(GATE_NAMES)}.")
    slices = slice_columns(summary)
    if summary.is_empty():
        both = {k: v for k, v in overall.items() if v is not None}
        both |= {k: v for k, v in per_slice.items() if v is not None}
        return _gate(summary, [], conservative, {ERROR_GATE: None, **both})
    if SCOPE in summary.columns:
        overall_rows = summary.filter(pl.col(SCOPE) == "overall").drop(SCOPE, *slices)
        slice_rows = summary.filter(pl.col(SCOPE) == "slice").drop(SCOPE)
    else:  # a plain aggregate() frame: its rows are slices
        overall_rows, slice_rows = summary.clear().drop(slices), summary
    results = []
    if not overall_rows.is_empty():
        results.append(_gate(overall_rows, [], conservative, overall))
    if not slice_rows.is_empty():
        results.append(_gate(slice_rows, slices, conservative, per_slice))
    checks = pl.concat([r.checks for r in results]) if results else None
    if checks is None or checks.is_empty():
        return GateResult(passed=True, checks=pl.DataFrame(schema=CHECK_SCHEMA))
    notes = tuple(note for r in results for note in r.judge_notes)
    return GateResult(passed=all(r.passed for r in results), checks=checks, judge_notes=notes)


def _gate(
    rows: pl.DataFrame, per: list[str], conservative: bool, thresholds: Mapping[str, Threshold]
) -> GateResult:
    """:func:`gate` with exactly ``thresholds`` set (the error gate off unless among them)."""
    return gate(
        rows,
        per=per,
        conservative=conservative,
        min_equivalence_rate=thresholds.get("min_equivalence_rate"),
        max_divergence_rate=thresholds.get("max_divergence_rate"),
        max_mean_divergence=thresholds.get("max_mean_divergence"),
        max_excess_divergence=thresholds.get("max_excess_divergence"),
        min_label_agreement=thresholds.get("min_label_agreement"),
        max_error_rate=thresholds.get(ERROR_GATE),
        max_judge_attribute_effect=thresholds.get(JUDGE_GATE),
    )
