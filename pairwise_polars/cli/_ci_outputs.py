"""The CI outputs of a gated command: ``--junit-xml PATH``, and the verdict on the GitHub
Actions run page when ``$GITHUB_STEP_SUMMARY`` names a file (GitHub sets it in every step)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

from pairwise_polars.cli._console import Console
from pairwise_polars.io import check_writable, write_text
from pairwise_polars.report import Outcome, junit_xml, step_summary

STEP_SUMMARY = "GITHUB_STEP_SUMMARY"


def check_ci_outputs(args: argparse.Namespace) -> None:
    """Before any work: the JUnit file can be written."""
    if getattr(args, "junit_xml", None):
        check_writable(args.junit_xml, what="the JUnit XML (--junit-xml)")


def write_ci_outputs(
    args: argparse.Namespace, outcomes: Sequence[Outcome], *, title: str, console: Console
) -> None:
    if not outcomes:
        return
    path = getattr(args, "junit_xml", None)
    if path:
        write_text(path, junit_xml(outcomes), what="the JUnit XML (--junit-xml)")
        console.payload["junit_xml"] = path
        console.info(f"wrote {path}")
    summary = os.environ.get(STEP_SUMMARY)
    if summary:
        text = step_summary(outcomes, title=title)
        write_text(summary, text, what=f"the step summary (${STEP_SUMMARY})", append=True)
