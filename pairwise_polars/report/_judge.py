"""The report's "The judge" section: what the run measured of the judge itself (its reaction
to the attribute, a panel's agreement, the verdict's stability over repeats, position bias),
per metric and slice, and each judge of a panel side by side (:func:`judge_report`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from pairwise_polars.summary import judge_report
from pairwise_polars.summary._aggregate import slice_columns
from pairwise_polars.summary._judge_rows import has_members

_FIGURES = (
    ("judge_attribute_effect", "attribute effect"),
    ("judge_agreement", "panel agreement (alpha)"),
    ("judge_effective_n", "effective judges"),
    ("judge_repeat_sd", "repeat sd"),
    ("verdict_stability", "verdict stability"),
    ("mean_position_gap", "position gap"),
    ("position_flip_rate", "position flips"),
)
_BOUNDS = {"judge_agreement": "judge_agreement", "judge_attribute_effect": "judge_attribute_effect"}
_JUDGES = (
    ("judge_model", "judge"),
    ("mean_score", "mean score"),
    ("agreement_with_rest", "agreement with the rest"),
    ("panel_agreement_without", "panel alpha without it"),
    ("attribute_effect", "attribute effect"),
    ("mean_position_gap", "position gap"),
    ("position_flip_rate", "position flips"),
    ("repeat_sd", "repeat sd"),
    ("concern", "concern"),
)


@dataclass(frozen=True)
class JudgeSection:
    """Tables of strings: the judge's figures per metric and slice, and one row per judge."""

    headings: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    judge_headings: tuple[str, ...] = ()
    judge_rows: tuple[tuple[str, ...], ...] = ()
    concerns: tuple[str, ...] = ()


def _cell(value: Any, low: Any = None, high: Any = None) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        text = f"{value:.3f}"
        if low is not None and high is not None:
            text += f" [{low:.3f}, {high:.3f}]"
        return text
    return str(value)


def judge_section(frame: pl.LazyFrame, summary: pl.DataFrame) -> JudgeSection | None:
    """The section, or None when the run measured nothing of the judge (no panel, repeats,
    masked view or both orders)."""
    present = [(c, label) for c, label in _FIGURES if c in summary.columns]
    present = [(c, label) for c, label in present if summary[c].drop_nulls().len() > 0]
    if not present:
        return None
    slices = slice_columns(summary)
    headings = ("metric", "slice", *(label for _, label in present))
    rows = []
    for r in summary.iter_rows(named=True):
        label = ", ".join(f"{s}={r[s]}" for s in slices if r[s] is not None) or "overall"
        cells = []
        for column, _ in present:
            bound = _BOUNDS.get(column)
            low = r.get(f"{bound}_low") if bound else None
            high = r.get(f"{bound}_high") if bound else None
            cells.append(_cell(r[column], low, high))
        rows.append((str(r["metric"]), label, *cells))
    section = JudgeSection(headings, tuple(rows))
    if not has_members(frame.collect_schema()):
        return section
    report = judge_report(frame)
    judge_rows = tuple(tuple(_cell(r[c]) for c, _ in _JUDGES) for r in report.iter_rows(named=True))
    concerns = tuple(
        f"{r['metric']}: {r['judge_model']}: {r['concern']}"
        for r in report.iter_rows(named=True)
        if r["concern"] is not None
    )
    return JudgeSection(
        headings,
        tuple(rows),
        tuple(label for _, label in _JUDGES),
        judge_rows,
        concerns,
    )
