"""The run summary (overall and per slice), gates on both scopes, and the self-contained HTML
report (inline CSS and SVG charts, no script, no network needed to view it)."""

from pairwise_polars.report._html import render_report, write_report
from pairwise_polars.report._summary import SCOPE, gate_summary, slice_columns, summarize

__all__ = ["SCOPE", "gate_summary", "render_report", "slice_columns", "summarize", "write_report"]
