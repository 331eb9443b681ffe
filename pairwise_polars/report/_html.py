"""The HTML report: one self-contained file (inline CSS, no script, no network), rendered from
autoescaped Jinja2 templates (``templates/``) over the records of :mod:`._view`."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from importlib.resources import files
from pathlib import Path

import polars as pl
from jinja2 import Environment, PackageLoader, StrictUndefined

from pairwise_polars.io import DataLike, to_lazy, write_text
from pairwise_polars.report._comparison import baseline_section
from pairwise_polars.report._forest import forest_charts
from pairwise_polars.report._judge import judge_section
from pairwise_polars.report._labels import labels_section
from pairwise_polars.report._notes import JUDGE_NOTES
from pairwise_polars.report._tables import summary_slices
from pairwise_polars.report._view import Page, errors, metric_section, verdict
from pairwise_polars.summary import GateResult, summarize
from pairwise_polars.summary._judge_rows import combined_only

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
"""The page's Content-Security-Policy: it may load nothing at all and run no script, so viewing
it never touches a network."""
_ENV = Environment(
    loader=PackageLoader("pairwise_polars.report", "templates"),
    autoescape=True,  # every value of the data is escaped; the templates hold the only markup
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)


def render_report(
    scored: DataLike,
    summary: pl.DataFrame | None = None,
    gates: GateResult | None = None,
    *,
    title: str = "Pairwise fairness report",
    about: Mapping[str, str] | None = None,
    slices: Sequence[str] | None = None,
    group_by: str = "group_id",
    top: int = 5,
    confidence: float = 0.95,
    judge_notes: Mapping[str, str] | None = None,
    comparison: pl.DataFrame | None = None,
    disparities: pl.DataFrame | None = None,
) -> str:
    """The report as one HTML string: the gate verdict (failed checks first, passing ones folded
    away), then per metric a table of slices with intervals, divergence by slice with interval
    bars and gate marks, the score distribution, the noise floor (with control pairs), position
    bias (with both orders), and the most divergent pairs side by side with the judge's
    reasons; then errors by kind. ``summary`` defaults to :func:`~pairwise_polars.summarize` of
    ``scored`` by ``slices`` (default: ``dimension`` when there is one); ``about`` adds lines to
    the header ("data", "strategy", ...); ``judge_notes`` maps a ``judge_model`` to a note for
    the header (the heuristic judge has one). ``comparison`` (from
    :func:`~pairwise_polars.compare` with a baseline) adds a "since the baseline" section: the
    table of what changed and a forest plot of the changes, worse slices first. ``disparities``
    (from :func:`~pairwise_polars.disparities`) adds "Who is disadvantaged": per dimension and
    outcome a forest plot of each attribute's disparity with its interval around the zero line,
    labelled with who is favoured, and the control's interval beside it. A run that measured
    the judge (a panel, repeats, a masked view or both orders) gets "The judge": its attribute
    effect, the panel's agreement, the verdict's stability and position bias per slice, and
    each judge of a panel side by side (:func:`~pairwise_polars.judge_report`). Scored pairs
    that carry human labels (``score(..., labels=...)``) get "The judge against people": its
    agreement and bias against the labels per slice and a confusion table per metric.

    >>> import polars as pl
    >>> scored = pl.DataFrame({"metric": "pairwise-bias", "group_id": [1, 2],
    ...     "dimension": "age", "score": [0.0, 0.5], "error": [None, None]})
    >>> "Mean divergence by slice" in render_report(scored)
    True
    """
    judged, _ = to_lazy(scored)
    frame = combined_only(judged)  # a panel's or repeats' figures read the combined rows
    schema = frame.collect_schema()
    if summary is None:
        present = None if slices is None else [s for s in slices if s in schema]
        summary = summarize(judged, present, group_by=group_by, confidence=confidence)
    found_slices = summary_slices(summary)
    checks = gates.checks if gates is not None else None
    judges = (
        frame.select(pl.col("judge_model").drop_nulls().unique().sort()).collect().to_series()
        if "judge_model" in schema
        else pl.Series([], dtype=pl.String)
    ).to_list()
    metrics = list(dict.fromkeys(summary["metric"].to_list()))
    header = dict(about or {})
    header.setdefault("metrics", ", ".join(metrics))
    if judges:
        header.setdefault("judge", ", ".join(judges))
    header.setdefault("report written", time.strftime("%Y-%m-%d %H:%M:%S %z"))
    notes = {**JUDGE_NOTES, **(judge_notes or {})}
    page = Page(
        title=title,
        about=tuple((str(k), str(v)) for k, v in header.items()),
        notes=tuple(dict.fromkeys(notes[j] for j in judges if j in notes)),
        verdict=verdict(gates),
        metrics=tuple(
            metric_section(
                frame, schema, summary, checks, m, found_slices, group_by, top, confidence
            )
            for m in metrics
        ),
        errors=errors(frame, schema),
        confidence=f"{confidence:.0%}",
        baseline=None if comparison is None else baseline_section(comparison),
        disparities=forest_charts(disparities),
        judge=judge_section(judged, summary),
        labels=labels_section(frame, found_slices, group_by, confidence),
    )
    css = files("pairwise_polars.report").joinpath("report.css").read_text(encoding="utf-8")
    return _ENV.get_template("report.html.j2").render(page=page, css=_Css(css), csp=CSP)


class _Css(str):
    """The page's own style sheet: markup-safe (it is the package's file, not data)."""

    def __html__(self) -> str:
        return str(self)


def write_report(path: str | os.PathLike[str], scored: DataLike, **options: object) -> Path:
    """Write :func:`render_report` of ``scored`` to ``path`` (UTF-8, its folder created) and
    return the path; ``options`` are :func:`render_report`'s.

    >>> import pathlib, tempfile
    >>> import pairwise_polars as pp
    >>> scored = pp.score("data/jobs_group.parquet", progress=False)  # doctest: +SKIP
    >>> pp.write_report(pathlib.Path(tempfile.mkdtemp()) / "report.html", scored)  # doctest: +SKIP
    """
    html = render_report(scored, **options)  # type: ignore[arg-type]
    return write_text(path, html, what="the report")
