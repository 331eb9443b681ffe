"""Writing the CI outputs: the JUnit XML file and the step summary GitHub Actions shows."""

from __future__ import annotations

import os
from collections.abc import Sequence

from pairwise_polars.io import check_writable, write_text
from pairwise_polars.report._ci import Outcome, junit_xml, step_summary

STEP_SUMMARY = "GITHUB_STEP_SUMMARY"
"""The variable GitHub Actions sets in every step: the file its run page shows (appended to)."""


def check_ci_files(junit: str | os.PathLike[str] | None) -> None:
    """Before any work: the JUnit file can be written."""
    if junit:
        check_writable(junit, what="the JUnit XML (--junit-xml)")


def write_ci_files(
    outcomes: Sequence[Outcome],
    *,
    junit: str | os.PathLike[str] | None,
    title: str,
    summary: str | os.PathLike[str] | None = None,
) -> dict[str, str]:
    """Write ``junit_xml(outcomes)`` to ``junit`` and append ``step_summary`` to ``summary``
    (default: the file ``$GITHUB_STEP_SUMMARY`` names, when set; ``""``: none); the paths
    written, by kind (``junit_xml``, ``step_summary``)."""
    if not outcomes:
        return {}
    written: dict[str, str] = {}
    if junit:
        write_text(junit, junit_xml(outcomes), what="the JUnit XML (--junit-xml)")
        written["junit_xml"] = os.fspath(junit)
    summary = os.environ.get(STEP_SUMMARY) if summary is None else summary
    if summary:
        text = step_summary(outcomes, title=title)
        write_text(summary, text, what=f"the step summary (${STEP_SUMMARY})", append=True)
        written["step_summary"] = os.fspath(summary)
    return written
