"""``summarize`` and ``report``: from a scored frame to a summary table, gates and the report."""

from __future__ import annotations

import argparse
import time
from typing import Any

import polars as pl

from pairwise_polars.cli._ci_outputs import check_ci_outputs, write_ci_outputs
from pairwise_polars.cli._console import Console, markdown_table, readable_summary
from pairwise_polars.cli._gate_options import check_junit_has_gates, gates_from
from pairwise_polars.cli._options import (
    add_ci_options,
    add_summary_options,
    add_top_option,
    summary_from,
)
from pairwise_polars.cli._output_paths import (
    FRAME_FORMATS,
    check_frame_or_table,
    check_outputs,
    one_or_many,
    show_and_write,
)
from pairwise_polars.cli._panel_command import with_stability
from pairwise_polars.cli._verdicts import exit_code
from pairwise_polars.io import (
    check_writable,
    input_files,
    provenance,
    scan_source,
)
from pairwise_polars.report import Outcome, write_report
from pairwise_polars.summary import GateResult


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    summarize_cmd = subparsers.add_parser(
        "summarize",
        parents=[common],
        help="summarise a scored frame by slice (and gate it)",
        description="Summarise a scored frame (from `score` or `run`): per metric, overall and "
        "by slice: n, equivalence rate, divergence rate, mean divergence, with intervals. With "
        "gate options, exit 1 when a fairness gate fails and 4 when judgements failed beyond "
        "--max-error-rate (the run cannot vouch for fairness).",
    )
    summarize_cmd.add_argument(
        "scored", nargs="+", metavar="SCORED", help="scored file(s), folder(s) or glob(s)"
    )
    summarize_cmd.add_argument(
        "-o",
        "--out",
        metavar="FILE",
        help=f"write the summary: {FRAME_FORMATS}, or .md (the table shown)",
    )
    add_summary_options(summarize_cmd)
    add_ci_options(summarize_cmd)
    summarize_cmd.set_defaults(handler=_summarize)

    report = subparsers.add_parser(
        "report",
        parents=[common],
        help="write the HTML report of a scored frame",
        description="Write the self-contained HTML report of a scored frame. With gate "
        "options, the report shows the verdict and the command exits 1 when a gate fails.",
    )
    report.add_argument(
        "scored", nargs="+", metavar="SCORED", help="scored file(s), folder(s) or glob(s)"
    )
    report.add_argument("-o", "--out", required=True, metavar="FILE", help="the HTML file")
    report.add_argument("--title", default="Pairwise fairness report")
    add_top_option(report)
    add_summary_options(report)
    add_ci_options(report)
    report.set_defaults(handler=_report)


def _summary(
    args: argparse.Namespace,
) -> tuple[pl.LazyFrame, pl.DataFrame, GateResult | None, dict[str, Any]]:
    source = input_files(one_or_many(args.scored))
    scored = scan_source(source)
    summary, gates = summary_from(scored, args)
    stable = with_stability(summary, scored, args)  # repeats: would the verdict hold?
    if stable is not summary:
        summary, gates = stable, gates_from(stable, scored, args)
    return scored, summary, gates, provenance(source)


def _verdict(
    gates: GateResult | None,
    summary: pl.DataFrame,
    args: argparse.Namespace,
    console: Console,
    *,
    about: dict[str, str],
) -> int:
    if gates is None:
        return 0
    verdict = gates.verdict()
    console.payload.update(passed=gates.passed, verdict=verdict, checks=gates.checks.to_dicts())
    console.verdict(verdict)
    name = ", ".join(args.scored)
    outcome = Outcome(name, summary, gates, about=about)
    write_ci_outputs(args, [outcome], title=f"pairwise-polars {args.command}", console=console)
    return exit_code([gates])


def _summarize(args: argparse.Namespace, console: Console) -> int:
    check_frame_or_table(args.scored, args.out, "the summary")
    check_ci_outputs(args)
    check_junit_has_gates(args)
    _, summary, gates, recorded = _summary(args)
    console.payload["summary"] = summary.to_dicts()
    table = markdown_table(readable_summary(summary))
    show_and_write(console, summary, table, args.out, "the summary")
    return _verdict(gates, summary, args, console, about=_about(args, summary, recorded))


def _report(args: argparse.Namespace, console: Console) -> int:
    check_outputs(args.scored, {}, {"the report (-o)": args.out})
    check_writable(args.out, what="the report (-o)")
    check_ci_outputs(args)
    check_junit_has_gates(args)
    scored, summary, gates, recorded = _summary(args)
    about = _about(args, summary, recorded)
    path = write_report(
        args.out,
        scored,
        summary=summary,
        gates=gates,
        title=args.title,
        about=about,
        group_by=args.group_by,
        top=args.top,
        confidence=args.confidence,
    )
    console.payload["output"] = str(path)
    console.info(f"wrote {path}")
    return _verdict(gates, summary, args, console, about=about)


def _about(
    args: argparse.Namespace, summary: pl.DataFrame, recorded: dict[str, Any]
) -> dict[str, str]:
    """The report's "about this run" lines: what the scoring command recorded in the scored
    file (its data, strategy, judge and time), the files read here, and when."""
    about: dict[str, str] = {"scored data": ", ".join(args.scored)}
    if recorded.get("data"):
        about["response data"] = ", ".join(str(d) for d in recorded["data"])
    for key in ("manifest", "target"):
        if recorded.get(key):
            about[key] = str(recorded[key])
    if recorded.get("strategy"):
        about["strategy"] = str(recorded["strategy"])
    else:
        why = "a pair frame was scored" if recorded else "the scored file does not say"
        about["strategy"] = f"not recorded ({why})"
    metrics = recorded.get("metrics") or list(dict.fromkeys(summary["metric"].to_list()))
    about["metrics"] = ", ".join(str(m) for m in metrics)
    if recorded.get("judge"):
        about["judge"] = str(recorded["judge"])
    if recorded.get("both_orders") is not None:
        about["both orders"] = "yes" if recorded["both_orders"] else "no"
    if recorded.get("scored_at"):
        about["scored"] = str(recorded["scored_at"])
    about["summarised"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    return about
