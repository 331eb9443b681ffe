"""Rendering results for people and tools: the self-contained HTML report (inline CSS and SVG,
no script, no network needed to view it), the summary as tables, and the outputs CI systems read
(JUnit XML, GitHub's step summary). It renders summaries and gates made by
:mod:`pairwise_polars.summary`; it computes none."""

from pairwise_polars.report._ci import Outcome, check_name, junit_xml, step_summary
from pairwise_polars.report._html import render_report, write_report
from pairwise_polars.report._tables import (
    markdown_table,
    readable_summary,
    stat_columns,
    summary_slices,
    with_interval,
)

__all__ = [
    "Outcome",
    "check_name",
    "junit_xml",
    "markdown_table",
    "readable_summary",
    "render_report",
    "stat_columns",
    "step_summary",
    "summary_slices",
    "with_interval",
    "write_report",
]
