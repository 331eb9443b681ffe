"""The CI outputs of a gated command: ``--junit-xml PATH``, and the verdict on the GitHub
Actions run page when ``$GITHUB_STEP_SUMMARY`` names a file (GitHub sets it in every step)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from pairwise_polars.cli._console import Console
from pairwise_polars.report import Outcome
from pairwise_polars.report._ci_files import check_ci_files, write_ci_files


def check_ci_outputs(args: argparse.Namespace) -> None:
    """Before any work: the JUnit file can be written."""
    check_ci_files(getattr(args, "junit_xml", None))


def write_ci_outputs(
    args: argparse.Namespace, outcomes: Sequence[Outcome], *, title: str, console: Console
) -> None:
    junit = getattr(args, "junit_xml", None)
    written = write_ci_files(outcomes, junit=junit, title=title)
    if "junit_xml" in written:
        console.payload["junit_xml"] = written["junit_xml"]
        console.info(f"wrote {written['junit_xml']}")
