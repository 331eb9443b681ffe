"""The summary as a table for people (terminal, Markdown, CI pages): one column per slice, counts,
and each figure with its interval. Columns that later stages add to a summary (position bias,
the noise floor) appear when they are there, so every table shows what the summary holds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from pairwise_polars.summary import (
    MIN_DETECTABLE,
    NOISE_COLUMNS,
    POSITION_COLUMNS,
    PPI_COLUMNS,
    SCOPE,
    SUMMARY_COLUMNS,
    slice_columns,
)

COUNTS = {
    "n_pairs": "pairs",
    "n_scored": "scored",
    "n_errors": "errors",
    "n_control": "controls",
    "n_control_errors": "control errors",
    "n_labelled": "labelled",
}
"""Count columns and their headings (others: the column name with spaces)."""
FIGURES = {
    "equivalence_rate": "equivalence rate",
    "divergence_rate": "divergence rate",
    "mean_divergence": "mean divergence",
    "control_mean_divergence": "control divergence",
    "excess_divergence": "excess divergence",
    "mean_position_gap": "position gap",
    "position_flip_rate": "position flips",
    MIN_DETECTABLE: "detectable effect",
    "equivalence_rate_ppi": "equivalence rate, corrected by labels",
    "divergence_rate_ppi": "divergence rate, corrected by labels",
    "mean_divergence_ppi": "mean divergence, corrected by labels",
    "excess_divergence_ppi": "excess divergence, corrected by labels",
    "label_agreement": "judge-label agreement (kappa)",
}
"""Figures (with ``_low`` / ``_high`` bounds when the summary has them) and their headings."""
EXTRA_STATS = (*NOISE_COLUMNS, *POSITION_COLUMNS, MIN_DETECTABLE, *PPI_COLUMNS)
"""Summary columns added by position-bias and noise-floor figures, the power and the label
corrections: statistics, never slices."""
_HIDDEN = ("n_groups",)
_TEXT = ("top_error",)
"""Summary columns of text, not statistics: gate notes quote them, tables leave them out."""


def stat_columns(summary: pl.DataFrame) -> list[str]:
    """The summary's statistic columns (counts, figures and their bounds), in order; the figures
    later stages add only where they have a value (no position columns without both orders)."""
    known = [*(c for c in SUMMARY_COLUMNS if c not in EXTRA_STATS), *EXTRA_STATS]
    return [
        c
        for c in known
        if c in summary.columns and c not in _TEXT and not (c in EXTRA_STATS and _empty(summary[c]))
    ]


def _empty(column: pl.Series) -> bool:
    """No value to show: all null, or a count that is 0 everywhere (no control pairs)."""
    if column.null_count() == column.len():
        return True
    return column.dtype.is_integer() and not bool((column.fill_null(0) != 0).any())


def summary_slices(summary: pl.DataFrame) -> list[str]:
    """The slice columns of a summary, not counting the statistics later stages add."""
    return [c for c in slice_columns(summary) if c not in EXTRA_STATS]


def readable_summary(summary: pl.DataFrame) -> pl.DataFrame:
    """The summary as strings for people: one column per slice, counts, and every figure with
    its interval. (A summary has a row per metric and slice: small enough to format in Python.)
    """
    slices = summary_slices(summary)
    stats = stat_columns(summary)
    counts = [c for c in stats if c.startswith("n_") and c not in _HIDDEN]
    figures = [c for c in stats if not c.startswith("n_") and not c.endswith(("_low", "_high"))]
    rows = []
    for r in summary.iter_rows(named=True):
        overall = r.get(SCOPE) == "overall"
        labels = {
            s: ("overall" if i == 0 else "") if overall else ("null" if r[s] is None else str(r[s]))
            for i, s in enumerate(slices)
        }
        row: dict[str, Any] = {"metric": r["metric"], **labels}
        row.update({_heading(c): r[c] for c in counts})
        for c in figures:
            row[_heading(c)] = with_interval(r[c], r.get(f"{c}_low"), r.get(f"{c}_high"))
        rows.append(row)
    schema = {
        "metric": pl.String,
        **dict.fromkeys(slices, pl.String),
        **{_heading(c): pl.Int64 for c in counts},
        **{_heading(c): pl.String for c in figures},
    }
    return pl.DataFrame(rows, schema=schema, orient="row")


def _heading(column: str) -> str:
    return COUNTS.get(column) or FIGURES.get(column) or column.replace("_", " ")


def with_interval(value: float | None, low: float | None, high: float | None) -> str:
    """``0.123 [0.100, 0.150]``; ``—`` for no value; the value alone without bounds."""
    if value is None:
        return "—"
    if low is None or high is None:
        return f"{value:.3f}"
    return f"{value:.3f} [{low:.3f}, {high:.3f}]"


def markdown_table(frame: pl.DataFrame, *, html_safe: bool = False) -> str:
    """A GitHub-flavoured Markdown table (also readable as plain text). ``html_safe`` escapes
    ``<``, ``>`` and ``&`` in cells, for pages that render HTML inside Markdown."""
    rows = [[_cell(v, html_safe) for v in row] for row in frame.iter_rows()]
    header = [_cell(c, html_safe) for c in frame.columns]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    numeric = [dtype.is_numeric() for dtype in frame.dtypes]

    def line(cells: Sequence[str]) -> str:
        padded = [
            c.rjust(w) if num else c.ljust(w)
            for c, w, num in zip(cells, widths, numeric, strict=True)
        ]
        return "| " + " | ".join(padded) + " |"

    rule = (
        "|"
        + "|".join(
            ("-" * (w + 1) + ":") if num else ("-" * (w + 2))
            for w, num in zip(widths, numeric, strict=True)
        )
        + "|"
    )
    return "\n".join([line(header), rule, *(line(r) for r in rows)])


def _cell(value: Any, html_safe: bool) -> str:
    text = "" if value is None else str(value)
    text = text.replace("|", "\\|").replace("\r", " ").replace("\n", " ")
    if html_safe:  # and Markdown-safe: no image or link from the data
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        text = text.replace("[", "\\[").replace("]", "\\]").replace("!", "\\!")
    return text
