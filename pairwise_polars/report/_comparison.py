"""A comparison of two runs (from :func:`~pairwise_polars.compare`) for people: a table of what
changed, worse first, and the rows of the report's forest plot of deltas."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import polars as pl

from pairwise_polars.report._charts import Interval, IntervalChart, interval_chart
from pairwise_polars.report._tables import FIGURES
from pairwise_polars.summary._paired import WORSE

_ORDER = {"worse": 0, "better": 1, "no evidence": 2}


def comparison_slices(comparison: pl.DataFrame) -> list[str]:
    """The slice columns of a comparison: those between ``metric`` and ``figure``."""
    return comparison.columns[1 : comparison.columns.index("figure")]


def _label(row: dict[str, Any], slices: list[str]) -> str:
    # a disparity row names the attribute compared with the reference
    shown = [*slices, "attribute"] if row.get("attribute") is not None else slices
    if not shown:
        return "overall"
    return ", ".join(f"{s}={'null' if row[s] is None else row[s]}" for s in shown)


def _num(value: float | None, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def worse_first(comparison: pl.DataFrame) -> pl.DataFrame:
    """Worse rows first (the largest change in the worse direction first), then better, then
    those without evidence; the slice order kept within each."""
    rank = pl.col("changed").replace_strict(_ORDER, default=3, return_dtype=pl.Int64)
    return comparison.with_row_index("__row").sort(rank, "__row").drop("__row")


def readable_comparison(comparison: pl.DataFrame) -> pl.DataFrame:
    """The comparison as strings: metric, slice, figure, before, after, the change with its
    interval, the adjusted p-value, what changed and the pairs matched / in one run only."""
    slices = comparison_slices(comparison)
    rows = []
    for r in worse_first(comparison).iter_rows(named=True):
        change = _num(r["delta"], 3)
        if r["delta_low"] is not None and r["delta_high"] is not None:
            change += f" [{r['delta_low']:.3f}, {r['delta_high']:.3f}]"
        rows.append(
            {
                "metric": r["metric"],
                "slice": _label(r, slices),
                "figure": FIGURES.get(r["figure"], r["figure"]),
                "before": _num(r["before"]),
                "after": _num(r["after"]),
                "change": change,
                "p (adjusted)": _num(r["p_adjusted"], 4),
                "changed": r["changed"],
                "groups": f"{r['n_groups']:,}",
                "pairs matched / only before / only after": (
                    f"{r['n_matched']:,} / {r['n_unmatched_before']:,} / {r['n_unmatched_after']:,}"
                ),
            }
        )
    columns = [
        "metric", "slice", "figure", "before", "after", "change", "p (adjusted)", "changed",
        "groups", "pairs matched / only before / only after",
    ]  # fmt: skip
    return pl.DataFrame(rows, schema=dict.fromkeys(columns, pl.String), orient="row")


def unmatched_line(comparison: pl.DataFrame) -> str:
    """How many pairs were matched and how many were in one run only (each slice counted
    once, whatever its figures)."""
    slices = ["metric", *comparison_slices(comparison)]
    judged = comparison.filter(pl.col("metric") != "disparities")  # those count pairs, again
    per_slice = judged.unique(slices, keep="first")
    matched, before, after = (
        int(per_slice[c].sum()) for c in ("n_matched", "n_unmatched_before", "n_unmatched_after")
    )
    return (
        f"{matched:,} pair judgements matched across the runs; {before:,} only in the baseline, "
        f"{after:,} only in the new run (not compared)"
    )


def delta_rows(comparison: pl.DataFrame) -> tuple[Interval, ...]:
    """The forest plot's rows: each metric, slice and figure's change in the worse direction
    (a fallen equivalence rate counts up) with its interval, worse first."""
    slices = comparison_slices(comparison)
    rows = []
    for r in worse_first(comparison).iter_rows(named=True):
        figure = FIGURES.get(r["figure"], r["figure"])
        label = f"{_label(r, slices)} · {figure}"
        if comparison["metric"].n_unique() > 1:
            label = f"{r['metric']} · {label}"
        # a disparity gets worse away from 0: downwards when it stands below 0
        sign = WORSE.get(r["figure"], -1 if (r["after"] or 0) < 0 else 1)
        value, low, high = (None if v is None else sign * v for v in
                            (r["delta"], r["delta_low"], r["delta_high"]))  # fmt: skip
        if sign < 0:
            low, high = high, low
        note = f"{r['changed']}; p (adjusted) {_num(r['p_adjusted'], 4)}"
        rows.append(Interval(label, value, low, high, note))
    return tuple(rows)


@dataclass(frozen=True)
class Baseline:
    """The report's "since the baseline" section: what was matched, the table of what changed
    and the forest plot of the changes (worse to the right, worse first)."""

    matched: str
    headings: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    worse: tuple[bool, ...]
    chart: IntervalChart


def baseline_section(comparison: pl.DataFrame) -> Baseline:
    table = readable_comparison(comparison)
    deltas = delta_rows(comparison)
    reach = max([abs(v) for r in deltas for v in (r.value, r.low, r.high) if v is not None] + [0.1])
    reach = math.ceil(reach * 20) / 20  # up to the next 0.05
    chart = interval_chart(
        deltas,
        title="Change since the baseline, worse to the right",
        axis_label="after - before (for the equivalence rate: before - after)",
        domain=(-reach, reach),
    )
    return Baseline(
        matched=unmatched_line(comparison),
        headings=tuple(table.columns),
        rows=tuple(table.rows()),
        worse=tuple(c == "worse" for c in table["changed"]),
        chart=chart,
    )
