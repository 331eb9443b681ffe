"""The report's "The judge against people" section, when the scored pairs carry human labels:
per metric and slice the judge's agreement with the labels and its bias (judge minus label)
with an interval, the bias as a forest plot around the zero line, and per metric the confusion
table of the judge's verdict against the label on the rubric (:func:`judge_agreement`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import polars as pl

from pairwise_polars.labels import LABEL, RAW_LABEL
from pairwise_polars.report._charts import Interval, IntervalChart, fmt, interval_chart
from pairwise_polars.summary import judge_agreement

_COLUMNS = (
    ("n_labelled", "labelled"),
    ("weighted_kappa", "weighted kappa"),
    ("exact_agreement", "exact agreement"),
    ("mean_bias", "bias (judge - label)"),
    ("judge_mean_divergence", "mean divergence: judge"),
    ("label_mean_divergence", "mean divergence: people"),
    ("judge_divergence_rate", "divergence rate: judge"),
    ("label_divergence_rate", "divergence rate: people"),
)


@dataclass(frozen=True)
class ConfusionCell:
    count: str
    shade: int
    """0-100: the cell's share of its row (the label), drawn as its background."""
    agrees: bool
    """The judge answered the label: the diagonal."""


@dataclass(frozen=True)
class Confusion:
    """One metric's labelled pairs counted by label (rows) and judge's score (columns)."""

    metric: str
    judge_values: tuple[str, ...]
    rows: tuple[tuple[str, tuple[ConfusionCell, ...]], ...]


@dataclass(frozen=True)
class LabelsSection:
    headings: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    bias: IntervalChart
    confusions: tuple[Confusion, ...]


def labels_section(
    frame: pl.LazyFrame, slices: Sequence[str], group_by: str, confidence: float
) -> LabelsSection | None:
    """The section, or None when the pairs carry no labels (or none of a scored pair)."""
    schema = frame.collect_schema()
    if not {LABEL, RAW_LABEL} <= set(schema.names()) or group_by not in schema:
        return None
    by = [s for s in slices if s in schema]
    found = judge_agreement(frame, by=by, group_by=group_by, confidence=confidence)
    if found.summary.is_empty():
        return None
    rows, bars = [], []
    for r in found.summary.iter_rows(named=True):
        where = ", ".join(f"{s}={r[s]}" for s in by if r[s] is not None) or "overall"
        cells = [_cell(r[c]) for c, _ in _COLUMNS]
        low, high = r["mean_bias_low"], r["mean_bias_high"]
        if low is not None and high is not None:
            cells[3] += f" [{fmt(low)}, {fmt(high)}]"
        rows.append((str(r["metric"]), where, *cells))
        note = "over-calls divergence" if (low or 0) > 0 else ""
        note = "under-calls divergence" if (high or 0) < 0 else note
        bars.append(Interval(f"{r['metric']}: {where}", r["mean_bias"], low, high, note=note))
    chart = interval_chart(
        bars,
        title="The judge's bias against people (judge minus label)",
        axis_label=f"score difference, {confidence:.0%} interval",
        domain=(-1.0, 1.0),
    )
    headings = ("metric", "slice", *(label for _, label in _COLUMNS))
    return LabelsSection(
        headings, tuple(rows), replace(chart, zero_line=True), _confusions(found.confusion)
    )


def _cell(value: object) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _confusions(counts: pl.DataFrame) -> tuple[Confusion, ...]:
    """Per metric, pooled over slices."""
    tables = []
    pooled = counts.group_by("metric", "label", "judge").agg(pl.col("n").sum())
    for (metric,), rows in pooled.sort("metric").group_by("metric", maintain_order=True):
        judged = sorted(set(rows["judge"].to_list()))
        labels = sorted(set(rows["label"].to_list()))
        count = {(r["label"], r["judge"]): r["n"] for r in rows.iter_rows(named=True)}
        body = []
        for label in labels:
            total = sum(count.get((label, j), 0) for j in judged)
            cells = tuple(
                ConfusionCell(
                    f"{count.get((label, j), 0):,}",
                    round(100 * count.get((label, j), 0) / total),
                    j == label,
                )
                for j in judged
            )
            body.append((fmt(label), cells))
        tables.append(Confusion(str(metric), tuple(fmt(j) for j in judged), tuple(body)))
    return tuple(tables)
