"""``run``, ``plan`` and ``validate``: the manifest commands."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from pairwise_polars.cli._console import Console, markdown_table, readable_summary
from pairwise_polars.cli._judge_options import add_price_option, prices_from
from pairwise_polars.cli._options import (
    add_cache_options,
    add_ci_options,
    add_top_option,
    add_trust_options,
    cache_setting,
)
from pairwise_polars.cli._power_options import add_power_options, with_power
from pairwise_polars.cli._verdicts import EXIT_INCONCLUSIVE, exit_code, targets_verdict
from pairwise_polars.manifest import TargetRun, TargetSpec, load_manifest, run_manifest
from pairwise_polars.manifest._manifest_run import DEFAULT_OUTPUT
from pairwise_polars.manifest._outputs import judge_name
from pairwise_polars.report._comparison import readable_comparison, unmatched_line


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    _register_run(subparsers, common)
    _register_plan(subparsers, common)
    validate = subparsers.add_parser(
        "validate",
        parents=[common],
        help="check a manifest without reading any data",
        description="Check a manifest: every problem at once, with file, line and key. Reads "
        "no data (it only checks that data and metric files exist).",
    )
    validate.add_argument("manifest", metavar="MANIFEST", help="the manifest (YAML)")
    add_trust_options(validate)
    validate.set_defaults(handler=_validate, dialect="manifest")


def _register_run(subparsers: Any, common: argparse.ArgumentParser) -> None:
    run = subparsers.add_parser(
        "run",
        parents=[common],
        help="validate, plan, score, summarise and gate a manifest",
        description="Run a manifest's targets: validate it, form pairs, plan the judge calls, "
        "score, summarise and gate. Writes scored.parquet, summary.parquet, summary.csv (or "
        "summary.md) and report.html into OUTPUT/<target>/. Exit 0 when every gate passes, "
        "1 when a fairness gate fails, 2 for invalid input or configuration, 4 when "
        "judgements failed beyond max_error_rate or nothing was scored (no verdict).",
    )
    _manifest_options(run)
    run.add_argument(
        "-o",
        "--output",
        default=DEFAULT_OUTPUT,
        metavar="DIR",
        help="write each target's outputs into DIR/<target>/ (default: "
        "%(default)s, relative to the current folder)",
    )
    run.add_argument(
        "--dry-run",
        action="store_true",
        help="validate and plan only: count pairs, unique requests, cache hits and "
        "tokens; call no judge, write nothing",
    )
    run.add_argument(
        "--table",
        choices=("csv", "md"),
        default="csv",
        help="format of the readable summary file (default: %(default)s)",
    )
    add_top_option(run, where=" in the report")
    add_ci_options(run)
    run.set_defaults(handler=_run, dialect="manifest")


def _register_plan(subparsers: Any, common: argparse.ArgumentParser) -> None:
    plan = subparsers.add_parser(
        "plan",
        parents=[common],
        help="what `run` would do, spending nothing (= run --dry-run)",
        description="Validate a manifest and plan its targets: pairs, unique judge requests "
        "after deduplication, cache hits and a token estimate; with --detect or --pilot, what "
        "each slice can detect. Calls no judge.",
    )
    _manifest_options(plan)
    add_power_options(plan)
    plan.set_defaults(
        handler=_run,
        dialect="manifest",
        dry_run=True,
        output=DEFAULT_OUTPUT,
        table="csv",
        top=5,
        junit_xml=None,
    )


def _manifest_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("manifest", metavar="MANIFEST", help="the manifest (YAML)")
    parser.add_argument(
        "-t",
        "--target",
        action="append",
        metavar="NAME",
        help="run only this target; repeat for several (default: all)",
    )
    add_cache_options(parser, what="judgement", default="the manifest's cache setting")
    add_price_option(parser)
    add_trust_options(parser)


def _validate(args: argparse.Namespace, console: Console) -> int:
    manifest = load_manifest(args.manifest, allow_key_env=args.allow_key_env)
    names = list(manifest.targets)
    console.payload.update(valid=True, manifest=args.manifest, targets=names)
    console.verdict(
        f"OK: {args.manifest} is valid ({len(names)} target"
        f"{'s' if len(names) != 1 else ''}: {', '.join(names)})."
    )
    return 0


def _run(args: argparse.Namespace, console: Console) -> int:
    # Validation comes before any data is read.
    manifest = load_manifest(args.manifest, allow_key_env=args.allow_key_env)
    console.payload.update(manifest=args.manifest, dry_run=args.dry_run, targets={})
    run = run_manifest(
        manifest,
        targets=args.target,
        output=args.output,
        table=args.table,
        top=args.top,
        junit_xml=args.junit_xml,
        cache=cache_setting(args, default=None),
        progress=console.progress,
        dry_run=args.dry_run,
        prices=lambda target: prices_from(args, target.judge.model),
        on_start=lambda target: console.info(f"== {target.name}: {_describe(target)}"),
        on_target=lambda target_run: _show(console, with_power(target_run, args)),
    )
    if "junit_xml" in run.outputs:
        console.payload["junit_xml"] = run.outputs["junit_xml"]
        console.info(f"wrote {run.outputs['junit_xml']}")
    if args.dry_run:
        console.verdict(
            f"Dry run: {len(run.runs)} target(s) planned; nothing was judged or written."
        )
        console.payload["passed"] = None
        return 0
    code = exit_code(o.gates for o in run.outcomes)
    console.payload["passed"] = run.passed
    if len(run.runs) > 1:
        if run.passed:
            console.verdict(f"ALL PASS: {len(run.runs)} targets")
        else:
            word = "INCONCLUSIVE" if code == EXIT_INCONCLUSIVE else "FAIL"
            statuses = {o.name: o.gates.status for o in run.outcomes}
            console.verdict(f"{word}: {targets_verdict(statuses, len(run.runs))}")
    return code


def _show(console: Console, run: TargetRun) -> None:
    """Print one target's plan, spending and verdict, and record them in the JSON payload."""
    target = run.target
    record: dict[str, Any] = {"plan": dataclasses.asdict(run.plan)}
    console.payload["targets"][target.name] = record
    console.info(_indent(str(run.plan)))
    if run.usage is not None:
        record["usage"] = dataclasses.asdict(run.usage)
        console.info(_indent(str(run.usage)))
    if run.gates is None or run.summary is None:
        console.info()
        return
    console.info("\n" + markdown_table(readable_summary(run.summary)) + "\n")
    if run.comparison is not None:
        console.info(
            f"since the baseline {target.baseline}: {unmatched_line(run.comparison)}\n\n"
            + markdown_table(readable_comparison(run.comparison))
            + "\n"
        )
    # The printed verdict and the exit code come from the same GateResult.
    verdict = run.gates.verdict()
    console.verdict(f"{target.name}: {verdict}")
    console.info("wrote " + ", ".join(str(p) for p in run.outputs.values()) + "\n")
    record.update(
        passed=run.gates.passed,
        status=run.gates.status,
        verdict=verdict,
        outputs=dict(run.outputs),
        checks=run.gates.checks.to_dicts(),
    )


def _describe(target: TargetSpec) -> str:
    metrics = ", ".join(m.name for m in target.metrics)
    return f"{target.strategy} pairs, metrics {metrics}, judge {judge_name(target)}"


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())
