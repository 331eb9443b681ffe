"""``label-sample``: which scored pairs people should label, as a CSV they fill in."""

from __future__ import annotations

import argparse
from typing import Any

from pairwise_polars.cli._console import Console
from pairwise_polars.cli._numbers import whole
from pairwise_polars.cli._output_paths import one_or_many
from pairwise_polars.io import check_writable, scan_data, write_text
from pairwise_polars.labels import sample_for_labelling


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    sample = subparsers.add_parser(
        "label-sample",
        parents=[common],
        help="draw scored pairs for people to label (a CSV to fill in)",
        description="Draw about N scored pairs for people to label: whole groups at random, "
        "in proportion to each slice and band of judge score, the same for the same --seed. "
        "Writes a CSV with both requests and responses, the rubric and an empty label column "
        "(the judge's score is left out: people label blind). Fill in the labels and pass the "
        "file to summarize, report or score as --labels, or as labels: in a manifest.",
    )
    sample.add_argument(
        "scored", nargs="+", metavar="SCORED", help="scored file(s) with texts (from `score`)"
    )
    sample.add_argument("-o", "--out", required=True, metavar="FILE", help="the CSV to write")
    sample.add_argument(
        "-n", type=whole(1), default=200, metavar="N", help="pairs to label (default: 200)"
    )
    sample.add_argument(
        "--by", nargs="*", action="extend", metavar="COLUMN",
        help="slice columns to draw in proportion to (default: dimension when there)",
    )  # fmt: skip
    sample.add_argument("-m", "--metric", metavar="NAME", help="the metric (when several)")
    sample.add_argument(
        "--per-group", type=whole(1), metavar="K",
        help="at most K pairs of each drawn group (default: whole groups)",
    )  # fmt: skip
    sample.add_argument("--seed", type=int, default=0, help="the draw's seed (default: 0)")
    sample.add_argument(
        "--group-by", default="group_id", metavar="COLUMN",
        help="the group column (default: %(default)s)",
    )  # fmt: skip
    sample.set_defaults(handler=_label_sample)


def _label_sample(args: argparse.Namespace, console: Console) -> int:
    check_writable(args.out, what="the labelling sheet (-o)")
    scored = scan_data(one_or_many(args.scored))
    drawn = sample_for_labelling(
        scored,
        n=args.n,
        by=args.by,
        metric=args.metric,
        per_group=args.per_group,
        seed=args.seed,
        group_by=args.group_by,
    )
    write_text(args.out, drawn.write_csv(), what="the labelling sheet (-o)")
    groups = drawn[args.group_by].n_unique()
    console.payload.update(output=args.out, n_pairs=drawn.height, n_groups=groups)
    console.verdict(
        f"{drawn.height:,} pairs of {groups:,} groups to label -> {args.out} (fill in the label "
        "column on the rubric, then pass the file as --labels)"
    )
    return 0
