"""``run``, ``plan`` and ``validate``: the manifest commands."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import time
from pathlib import Path
from typing import Any

from pairwise_polars._errors import ManifestError, PairwiseError
from pairwise_polars.cli._advice import say
from pairwise_polars.cli._ci_outputs import check_ci_outputs, write_ci_outputs
from pairwise_polars.cli._console import Console, markdown_table, readable_summary
from pairwise_polars.cli._options import (
    add_cache_options,
    add_ci_options,
    add_price_option,
    add_trust_options,
    cache_setting,
    prices_from,
    whole,
)
from pairwise_polars.cli._verdicts import EXIT_INCONCLUSIVE, exit_code, targets_verdict
from pairwise_polars.io import PROVENANCE_KEY, check_folder_writable, write_parquet, write_text
from pairwise_polars.manifest import Manifest, TargetRun, TargetSpec, load_manifest, run_target
from pairwise_polars.report import Outcome, write_report
from pairwise_polars.report._comparison import readable_comparison, unmatched_line

DEFAULT_OUTPUT = "pairwise-results"


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
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
    run.add_argument(
        "--top",
        type=whole(0),
        default=5,
        metavar="N",
        help="most divergent pairs shown per metric in the report (default: 5)",
    )
    add_ci_options(run)
    run.set_defaults(handler=_run, dialect="manifest")

    plan = subparsers.add_parser(
        "plan",
        parents=[common],
        help="what `run` would do, spending nothing (= run --dry-run)",
        description="Validate a manifest and plan its targets: pairs, unique judge requests "
        "after deduplication, cache hits and a token estimate. Calls no judge.",
    )
    _manifest_options(plan)
    plan.set_defaults(
        handler=_run,
        dialect="manifest",
        dry_run=True,
        output=DEFAULT_OUTPUT,
        table="csv",
        top=5,
        junit_xml=None,
    )

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


def _selected(manifest: Manifest, wanted: list[str] | None) -> list[TargetSpec]:
    if not wanted:
        return list(manifest.targets.values())
    unknown = [name for name in wanted if name not in manifest.targets]
    if unknown:
        raise ManifestError(
            f"Manifest {manifest.path!r} has no target {unknown[0]!r}; its targets are: "
            f"{', '.join(manifest.targets)}."
        )
    return [manifest.targets[name] for name in dict.fromkeys(wanted)]


def _run(args: argparse.Namespace, console: Console) -> int:
    # Validation comes before any data is read.
    manifest = load_manifest(args.manifest, allow_key_env=args.allow_key_env)
    targets = _selected(manifest, args.target)
    if not args.dry_run:  # every output can be written before anything is paid for
        for target in targets:
            check_folder_writable(Path(args.output) / target.name, what="the output folder (-o)")
        check_ci_outputs(args)
    console.payload.update(manifest=args.manifest, dry_run=args.dry_run, targets={})
    failed: list[str] = []
    outcomes: list[Outcome] = []
    for target in targets:
        try:
            if not _run_one(args, console, manifest, target, outcomes):
                failed.append(target.name)
        except (Exception, KeyboardInterrupt) as exc:
            # The targets already judged keep their CI outputs; the one that stopped says why.
            if not args.dry_run:
                message = say(exc, "manifest") if isinstance(exc, PairwiseError) else str(exc)
                about = _about(target, manifest.path)
                failed_run = Outcome.failed(target.name, message or type(exc).__name__, about=about)
                title = f"pairwise-polars run {args.manifest}"
                with contextlib.suppress(PairwiseError):  # the error to report is the first one
                    write_ci_outputs(args, [*outcomes, failed_run], title=title, console=console)
            raise
    if args.dry_run:
        console.verdict(
            f"Dry run: {len(targets)} target(s) planned; nothing was judged or written."
        )
        console.payload["passed"] = None
        return 0
    write_ci_outputs(args, outcomes, title=f"pairwise-polars run {args.manifest}", console=console)
    passed = not failed
    code = exit_code(o.gates for o in outcomes)
    console.payload["passed"] = passed
    if len(targets) > 1:
        if passed:
            console.verdict(f"ALL PASS: {len(targets)} targets")
        else:
            word = "INCONCLUSIVE" if code == EXIT_INCONCLUSIVE else "FAIL"
            statuses = {o.name: o.gates.status for o in outcomes}
            console.verdict(f"{word}: {targets_verdict(statuses, len(targets))}")
    return code


def _judge_name(target: TargetSpec) -> str:
    names = [
        "heuristic" if j.kind == "heuristic" else str(j.model)
        for j in (target.panel or (target.judge,))
    ]
    name = f"panel ({', '.join(names)}; {target.combine})" if target.panel else names[0]
    return name + (f" x {target.repeats} repeats" if target.repeats > 1 else "")


def _run_one(
    args: argparse.Namespace,
    console: Console,
    manifest: Manifest,
    target: TargetSpec,
    outcomes: list[Outcome],
) -> bool:
    """Run one target, print and record it; False when a gate failed."""
    console.info(f"== {target.name}: {_describe(target)}")
    started = time.monotonic()
    run = run_target(
        target,
        cache=cache_setting(args, default=None),
        progress=console.progress,
        dry_run=args.dry_run,
        prices=prices_from(args, target.judge.model),
        run_dir=Path(args.output) / target.name / "run",  # used by runner: ray
    )
    record: dict[str, Any] = {"plan": dataclasses.asdict(run.plan)}
    console.payload["targets"][target.name] = record
    console.info(_indent(str(run.plan)))
    if run.usage is not None:
        record["usage"] = dataclasses.asdict(run.usage)
        console.info(_indent(str(run.usage)))
    if args.dry_run or run.gates is None or run.summary is None:
        console.info()
        return True
    folder = Path(args.output) / target.name
    outputs = _write(run, folder, table=args.table, top=args.top, manifest=manifest.path)
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
    console.info("wrote " + ", ".join(str(p) for p in outputs.values()) + "\n")
    record.update(
        passed=run.gates.passed,
        status=run.gates.status,
        verdict=verdict,
        outputs=outputs,
        checks=run.gates.checks.to_dicts(),
    )
    outcomes.append(
        Outcome(
            target.name,
            run.summary,
            run.gates,
            seconds=time.monotonic() - started,
            about=_about(target, manifest.path),
            comparison=run.comparison,
        )
    )
    return run.gates.passed


def _describe(target: TargetSpec) -> str:
    metrics = ", ".join(m.name for m in target.metrics)
    return f"{target.strategy} pairs, metrics {metrics}, judge {_judge_name(target)}"


def _about(target: TargetSpec, manifest: str) -> dict[str, str]:
    """What was run, for the report's header and the CI outputs."""
    return {
        "manifest": manifest,
        "target": target.name + (f": {target.description}" if target.description else ""),
        "data": ", ".join(target.data),
        "strategy": target.strategy,
        "metrics": ", ".join(m.name for m in target.metrics),
        "judge": _judge_name(target),
        "both orders": "yes" if target.both_orders else f"no (order: {target.order})",
        "thresholds": f"equivalent when score <= {target.equivalence_threshold}, divergent when "
        f"score >= {target.divergence_threshold}",
    }


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def _write(run: TargetRun, folder: Path, *, table: str, top: int, manifest: str) -> dict[str, str]:
    assert run.scored is not None and run.summary is not None
    target = run.target
    names = ["scored.parquet", "summary.parquet", f"summary.{table}", "report.html"]
    names += ["comparison.parquet"] if run.comparison is not None else []
    paths = {name: folder / name for name in names}
    about = _about(target, manifest)
    recorded = {
        "data": list(target.data),
        "strategy": target.strategy,
        "metrics": [m.name for m in target.metrics],
        "judge": _judge_name(target),
        "both_orders": target.both_orders,
        "manifest": manifest,
        "target": target.name,
        "scored_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    write_parquet(
        run.scored,
        paths["scored.parquet"],
        what="the scored frame",
        metadata={PROVENANCE_KEY: json.dumps(recorded)},
        rescue=True,
    )
    write_parquet(run.summary, paths["summary.parquet"], what="the summary")
    if run.comparison is not None:
        comparison = run.comparison
        write_parquet(comparison, paths["comparison.parquet"], what="the comparison")
    if table == "csv":
        write_text(paths["summary.csv"], _csv(run.summary), what="the summary table")
    else:
        text = f"# {target.name}\n\n{markdown_table(readable_summary(run.summary))}\n\n"
        verdict = run.gates.verdict() if run.gates is not None else "no gates"
        write_text(paths["summary.md"], text + f"```\n{verdict}\n```\n", what="the summary table")
    write_report(
        paths["report.html"],
        run.scored,
        summary=run.summary,
        gates=run.gates,
        title=f"Pairwise fairness report: {target.name}",
        about={**about, "scored": recorded["scored_at"]},
        group_by=target.columns.group_by,
        top=top,
        confidence=target.confidence,
        comparison=run.comparison,
        disparities=run.disparities,
    )
    keys = {
        "scored.parquet": "scored",
        "summary.parquet": "summary",
        f"summary.{table}": "table",
        "report.html": "report",
        "comparison.parquet": "comparison",
    }
    return {keys[name]: str(path) for name, path in paths.items()}


def _csv(summary: Any) -> str:
    return str(summary.write_csv())
