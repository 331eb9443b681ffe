"""``compare``: did the new release get worse? Two scored runs compared pair by pair, a table of
what changed, and the regression gate with the exit codes of ``run``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pairwise_polars._errors import DataSourceError
from pairwise_polars.cli._ci_outputs import check_ci_outputs, write_ci_outputs
from pairwise_polars.cli._console import Console, markdown_table
from pairwise_polars.cli._numbers import share, whole
from pairwise_polars.cli._options import add_ci_options, interval_settings
from pairwise_polars.cli._verdicts import exit_code, threshold
from pairwise_polars.comparison import compare, gate_compare
from pairwise_polars.comparison._gate import DEFAULT_MIN_GROUPS
from pairwise_polars.comparison._match import MATCHES
from pairwise_polars.io import write_parquet, write_text
from pairwise_polars.report import Outcome
from pairwise_polars.report._comparison import readable_comparison, unmatched_line
from pairwise_polars.summary._paired import FIGURES


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "compare",
        parents=[common],
        help="did the new release get worse? compare two scored runs pair by pair",
        description="Compare two scored runs of the same prompts (scored files, score_parquet "
        "run folders or a `run` target's output folder): per metric and slice, each figure "
        "before and after, the change with a paired interval over the groups both runs "
        "measured, p-values adjusted over every slice and figure, and what got worse. Exit 0 "
        "when no slice got worse beyond --max-regression, 1 when one did, 4 when the "
        "comparison cannot tell (too few groups, a slice measured in one run only), 2 for "
        "invalid input.",
    )
    parser.add_argument("before", metavar="BEFORE", help="the baseline run")
    parser.add_argument("after", metavar="AFTER", help="the new run")
    parser.add_argument(
        "--by",
        nargs="*",
        action="extend",
        metavar="COLUMN",
        help="slice columns (default: dimension; --by alone: overall only)",
    )
    parser.add_argument("--group-by", default="group_id", metavar="COLUMN")
    parser.add_argument(
        "--match", choices=MATCHES, default="auto", help="match pairs by pair_id or attributes"
    )
    parser.add_argument(
        "--adjust",
        choices=("holm", "bh", "none"),
        default="holm",
        help="p-value adjustment over every slice and figure (default: holm)",
    )
    parser.add_argument("--equivalence-threshold", type=float, default=0.0, metavar="X")
    parser.add_argument("--divergence-threshold", type=float, default=0.5, metavar="X")
    parser.add_argument("--confidence", type=share, default=0.95, metavar="X")
    _add_gate_options(parser)
    parser.add_argument(
        "-o", "--out", metavar="FILE", help="write the comparison: .parquet, .csv or .md"
    )
    add_ci_options(parser)
    parser.set_defaults(handler=_compare)


def _add_gate_options(parser: argparse.ArgumentParser) -> None:
    gates = parser.add_argument_group("the regression gate")
    gates.add_argument(
        "--max-regression",
        type=threshold,
        default=0.05,
        metavar="X",
        help="how much worse a slice may get (default: %(default)s): it fails when the change "
        "exceeds it with evidence, passes when the interval's bound stays within it",
    )
    gates.add_argument(
        "--familywise",
        choices=("holm", "bh", "none"),
        default="holm",
        help="adjust the gate's evidence over the slices checked (default: holm)",
    )
    gates.add_argument(
        "--figure",
        action="append",
        choices=tuple(FIGURES),
        help="gate these figures (default: the excess divergence, or the mean divergence "
        "without control pairs)",
    )
    gates.add_argument(
        "--min-groups",
        type=whole(2),
        default=DEFAULT_MIN_GROUPS,
        metavar="N",
        help="paired groups a slice needs to pass (default: %(default)s)",
    )


def _compare(args: argparse.Namespace, console: Console) -> int:
    if args.out and Path(args.out).suffix not in (".parquet", ".csv", ".md"):
        raise DataSourceError(f"-o {args.out!r}: use a .parquet, .csv or .md file name.")
    check_ci_outputs(args)
    by = ("dimension",) if args.by is None else tuple(args.by)
    comparison = compare(
        args.before,
        args.after,
        by,
        None if args.adjust == "none" else args.adjust,
        match=args.match,
        **interval_settings(args),
    )
    table = markdown_table(readable_comparison(comparison))
    console.payload["comparison"] = comparison.to_dicts()
    console.info(f"{args.before} -> {args.after}: {unmatched_line(comparison)}\n\n{table}\n")
    if args.out:
        out, what = Path(args.out), "the comparison (-o)"
        if out.suffix == ".parquet":
            write_parquet(comparison, out, what=what)
        elif out.suffix == ".csv":
            write_text(out, comparison.write_csv(), what=what)
        else:
            write_text(out, table + "\n", what=what)
        console.info(f"wrote {out}")
    gates = gate_compare(
        comparison,
        args.max_regression,
        figures=args.figure,
        familywise=None if args.familywise == "none" else args.familywise,
        confidence=args.confidence,
        min_groups=args.min_groups,
    )
    verdict = gates.verdict()
    console.payload.update(passed=gates.passed, verdict=verdict, checks=gates.checks.to_dicts())
    console.verdict(verdict)
    about = {"baseline": args.before, "new run": args.after, "adjust": args.adjust,
             "familywise": args.familywise}  # fmt: skip
    outcome = Outcome(f"{args.before} -> {args.after}", comparison.clear(), gates, about=about)
    write_ci_outputs(args, [outcome], title="pairwise-polars compare", console=console)
    return exit_code([gates])
