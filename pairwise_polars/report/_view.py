"""What the report shows, gathered from the scored frame, the summary and the gates into plain
records for the templates: numbers formatted, charts placed, nothing escaped (the templates
escape every value). Sections that need columns a run may lack (both orders, control pairs)
appear when the columns are there."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from pairwise_polars.report._cards import PairCard, top_pairs
from pairwise_polars.report._charts import (
    ColumnChart,
    CountRow,
    Interval,
    IntervalChart,
    count_rows,
    interval_chart,
)
from pairwise_polars.report._figures import (
    NOISE_FIGURES,
    PAIR_KIND,
    POSITION_FIGURES,
    Noise,
    Position,
    distribution,
    noise,
    position,
)
from pairwise_polars.report._records import Table, num, short_label, slice_label, slice_table
from pairwise_polars.report._tables import stat_columns
from pairwise_polars.summary import GateResult

_MAIN_COUNTS = {
    "n_pairs": "pairs",
    "n_scored": "scored",
    "n_errors": "errors",
    "n_groups": "groups",
    "n_labelled": "labelled",  # beside the judge's and the corrected figures, with labels
}
_INTERVAL_CHARTS = (
    ("mean_divergence", "max_mean_divergence", "Mean divergence by slice", "mean score"),
    ("divergence_rate", "max_divergence_rate", "Divergence rate by slice", "share divergent"),
)
"""Interval charts per metric: the figure, the gate drawn on it, the title and the axis."""


@dataclass(frozen=True)
class CheckRow:
    passed: bool
    metric: str
    slice: str
    gate: str
    threshold: str
    observed: str
    note: str


@dataclass(frozen=True)
class Verdict:
    state: str
    """``pass``, ``fail``, ``inconclusive`` (judgements failed or pairs unscored) or ``none``
    (no gate set)."""
    headline: str
    text: str
    failed: tuple[CheckRow, ...] = ()
    passed: tuple[CheckRow, ...] = ()


@dataclass(frozen=True)
class MetricSection:
    name: str
    anchor: str
    table: Table
    charts: tuple[IntervalChart, ...]
    distribution: ColumnChart | None
    position: Position | None
    noise: Noise | None
    top: int
    pairs: tuple[PairCard, ...]
    only_counterfactual: bool


@dataclass(frozen=True)
class ErrorKind:
    label: str
    count: int
    width: float
    variants: int


@dataclass(frozen=True)
class ErrorRow:
    metric: str
    message: str
    count: int


@dataclass(frozen=True)
class Errors:
    has_column: bool
    total: int
    kinds: tuple[ErrorKind, ...]
    rows: tuple[ErrorRow, ...]


@dataclass(frozen=True)
class Page:
    title: str
    about: tuple[tuple[str, str], ...]
    notes: tuple[str, ...]
    verdict: Verdict
    metrics: tuple[MetricSection, ...]
    errors: Errors
    confidence: str
    extra: Mapping[str, Any] = field(default_factory=dict)
    baseline: Any = None
    """The "since the baseline" section (:class:`~._comparison.Baseline`), with a baseline."""
    disparities: tuple[IntervalChart, ...] = ()
    """Forest plots of who is disadvantaged (when the report is given disparities)."""
    judge: Any = None
    """The "The judge" section (:class:`~._judge.JudgeSection`), when the run measured it."""
    labels: Any = None
    """"The judge against people" (:class:`~._labels.LabelsSection`), with human labels."""


def anchor(text: str) -> str:
    return "metric-" + re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-")


def verdict(gates: GateResult | None) -> Verdict:
    if gates is None or gates.checks.is_empty():
        return Verdict("none", "No gates set", "Nothing was checked against thresholds.")
    rows = [
        CheckRow(
            passed=bool(c["passed"]),
            metric=str(c["metric"]),
            slice=str(c["slice"]),
            gate=str(c["gate"]),
            threshold=num(c["threshold"]),
            observed=num(c["observed"]),
            note=str(c.get("note") or ""),
        )
        for c in gates.checks.iter_rows(named=True)
    ]
    failed = tuple(r for r in rows if not r.passed)
    passed = tuple(r for r in rows if r.passed)
    if gates.passed:
        return Verdict("pass", "PASS", f"All {len(rows)} gate checks passed.", (), passed)
    text = f"{len(failed)} of {len(rows)} gate checks failed."
    if gates.status == "inconclusive":  # the verdict's own words: why, and what to do
        why = gates.verdict().splitlines()[0].removeprefix("INCONCLUSIVE: ")
        text = f"{len(failed)} of {len(rows)} gate checks did not pass: {why}"
    return Verdict(gates.status, gates.status.upper(), text, failed, passed)


def _interval(
    row: Mapping[str, Any], slices: Sequence[str], stat: str, checks: pl.DataFrame | None,
    gate: str | None,
) -> Interval:  # fmt: skip
    n = f"{row['n_scored']:,} scored of {row['n_pairs']:,}" if "n_scored" in row else ""
    threshold = None
    if checks is not None and gate is not None:
        found = checks.filter(
            (pl.col("metric") == row["metric"])
            & (pl.col("slice") == slice_label(row, slices))
            & (pl.col("gate") == gate)
        )["threshold"]
        threshold = found[0] if found.len() else None
    return Interval(
        short_label(row, slices), row.get(stat), row.get(f"{stat}_low"),
        row.get(f"{stat}_high"), note=n, gate=threshold,
    )  # fmt: skip


def _with_corrected(judged: Interval, row: Mapping[str, Any], stat: str) -> list[Interval]:
    """The judge's interval and, under it, the figure corrected by human labels (``<stat>_ppi``)
    where the slice has labelled pairs."""
    value = row.get(f"{stat}_ppi")
    if value is None:
        return [judged]
    corrected = Interval(
        f"{judged.label}, corrected by labels", value, row.get(f"{stat}_ppi_low"),
        row.get(f"{stat}_ppi_high"), note=f"{row.get('n_labelled')} labelled pairs",
        gate=judged.gate,
    )  # fmt: skip
    return [judged, corrected]


def errors(frame: pl.LazyFrame, schema: pl.Schema) -> Errors:
    if "error" not in schema:
        return Errors(False, 0, (), ())
    # Messages that differ only in numbers are one kind; each kind is shown by its most common
    # message, whole (a kind is for grouping, not for reading).
    kind = pl.col("error").str.replace_all(r"\d+(\.\d+)?", "#").alias("__kind")
    # A frame built by hand with no error at all has a Null-typed column: read it as text.
    failed = frame.filter(pl.col("error").is_not_null()).with_columns(
        pl.col("error").cast(pl.String)
    )
    by_message = (
        failed.group_by("metric", "error", kind)
        .agg(pl.len().alias("n"))
        .sort("n", "metric", "error", descending=[True, False, False])
        .collect()
    )
    if by_message.is_empty():
        return Errors(True, 0, (), ())
    kinds = (
        by_message.group_by("__kind")
        .agg(
            pl.col("n").sum(),
            pl.col("error").sort_by("n", "error", descending=[True, False]).first().alias("label"),
            pl.col("error").n_unique().alias("variants"),
        )
        .sort("n", "label", descending=[True, False])
    )
    shown = kinds.head(12)
    rows = [(r["label"], r["n"]) for r in shown.iter_rows(named=True)]
    rest = int(kinds.slice(12)["n"].sum())
    if rest:
        rows.append((f"{kinds.height - 12} other kinds", rest))
    placed: list[CountRow] = list(count_rows(rows))
    variants = [*shown["variants"].to_list(), 0][: len(placed)]
    return Errors(
        has_column=True,
        total=int(by_message["n"].sum()),
        kinds=tuple(
            ErrorKind(p.label, p.count, p.width, v) for p, v in zip(placed, variants, strict=True)
        ),
        rows=tuple(
            ErrorRow(m, e, n) for m, e, n in by_message.select("metric", "error", "n").iter_rows()
        ),
    )


def metric_section(
    frame: pl.LazyFrame,
    schema: pl.Schema,
    summary: pl.DataFrame,
    checks: pl.DataFrame | None,
    metric: str,
    slices: list[str],
    group_by: str,
    top: int,
    confidence: float,
) -> MetricSection:
    records = summary.filter(pl.col("metric") == metric).to_dicts()
    failed: set[str] = set()
    if checks is not None:
        failed = set(checks.filter((pl.col("metric") == metric) & ~pl.col("passed"))["slice"])
    stats = stat_columns(summary)
    counts = {c: h for c, h in _MAIN_COUNTS.items() if c in stats}
    figures = [
        c
        for c in stats
        if not c.startswith("n_")
        and not c.endswith(("_low", "_high"))
        and c not in (*POSITION_FIGURES, *NOISE_FIGURES)
    ]
    table = slice_table(records, slices, counts, figures, failed)
    charts = tuple(
        interval_chart(
            [
                i
                for r in records
                for i in _with_corrected(_interval(r, slices, stat, checks, gate), r, stat)
            ],
            title=title,
            axis_label=f"{axis}, {confidence:.0%} interval",
        )
        for stat, gate, title, axis in _INTERVAL_CHARTS
        if stat in summary.columns
    )
    scores = frame.filter(pl.col("metric") == metric)
    has_kinds = PAIR_KIND in schema
    counterfactual = scores.filter(pl.col(PAIR_KIND) != "control") if has_kinds else scores
    # Every scored frame names its pairs' kind; the noise section needs control pairs.
    has_controls = (
        has_kinds
        and scores.filter(pl.col(PAIR_KIND) == "control").select(pl.len()).collect().item() > 0
    )
    excess_gates = [
        _interval(r, slices, "excess_divergence", checks, "max_excess_divergence").gate
        for r in records
    ]
    with_orders = "score_ab" in schema and "score_ba" in schema
    return MetricSection(
        name=metric,
        anchor=anchor(metric),
        table=table,
        charts=charts,
        distribution=distribution(counterfactual),
        position=position(counterfactual, records, slices) if with_orders else None,
        noise=noise(scores, records, slices, confidence, excess_gates) if has_controls else None,
        top=top,
        pairs=top_pairs(counterfactual, schema, group_by, top),
        only_counterfactual=has_controls,
    )
