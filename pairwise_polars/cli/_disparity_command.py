"""``disparities``: who is disadvantaged, per attribute, from response rows or a scored frame,
printed as a table and written to a file."""

from __future__ import annotations

import argparse
from typing import Any

import polars as pl

from pairwise_polars._errors import OptionError
from pairwise_polars.cli._console import Console, markdown_table
from pairwise_polars.cli._judge_options import add_judge_options, judge_from
from pairwise_polars.cli._numbers import share
from pairwise_polars.cli._options import (
    add_cache_options,
    add_pairing_options,
    cache_setting,
    pairing_from,
)
from pairwise_polars.cli._output_paths import (
    FRAME_FORMATS,
    check_frame_or_table,
    one_or_many,
    show_and_write,
)
from pairwise_polars.io import input_files, scan_source
from pairwise_polars.judges import HeuristicJudge, Panel
from pairwise_polars.outcome import (
    DISPARITY_COLUMNS,
    DISPARITY_PPI_COLUMNS,
    OUTCOME_COLUMNS,
    disparities,
    outcomes,
)

SHOWN = (
    "n_groups",
    "decision_rate",
    "reference_decision_rate",
    "impact_ratio",
    "amount_relative",
    "amount_relative_low",
    "amount_relative_high",
    "refusal_difference",
    "mean_favour",
    "control_ok",
)
"""The table's figures after the slice columns (the file written has every column)."""


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    command = subparsers.add_parser(
        "disparities",
        parents=[common],
        help="who is disadvantaged: signed disparities per attribute, with intervals",
        description="Per dimension and attribute, each attribute against the group's "
        "reference (or pole_b against pole_a): decision rates and the impact ratio, the "
        "relative difference of offered amounts, the refusal difference and the mean favour "
        "(from a scored pairwise-favour), each with an interval over groups; control rows "
        "give the same figures for the reference against itself (control_ok). DATA is "
        "response rows (outcomes read by --judge: the heuristic by default, or an LLM judge "
        "on the outcome metric through the cache) or a scored frame from `score` / `run`.",
    )
    command.add_argument("data", nargs="+", metavar="DATA", help="file(s), folder(s) or glob(s)")
    command.add_argument(
        "-o", "--out", metavar="FILE",
        help=f"write the disparities: {FRAME_FORMATS} (every column), or .md (the table shown)",
    )  # fmt: skip
    command.add_argument(
        "--by", nargs="+", metavar="COLUMN",
        help="the slice columns (default: dimension and attribute, those the data has)",
    )  # fmt: skip
    command.add_argument(
        "--against", metavar="VALUE",
        help="compare every attribute with the row whose attribute is VALUE in each group, "
        "instead of the reference role (controls are then left out)",
    )  # fmt: skip
    command.add_argument(
        "--outcome-metric", default="outcome", metavar="NAME|FILE",
        help="the outcome metric an LLM judge reads (default: %(default)s)",
    )  # fmt: skip
    command.add_argument(
        "--confidence", type=share, default=0.95, help="of the intervals (default: %(default)s)"
    )
    command.add_argument(
        "--labels", metavar="FILE",
        help="people's reading of the outcomes (pair_id, metric = decision, amount or refused, "
        "label_a, label_b): adds the corrected *_ppi figures and n_labelled",
    )  # fmt: skip
    add_pairing_options(command)
    add_judge_options(command)
    add_cache_options(command, what="judgement", default="the user cache directory")
    command.set_defaults(handler=_disparities)


def _disparities(args: argparse.Namespace, console: Console) -> int:
    check_frame_or_table(args.data, args.out, "the disparities")
    strategy, pairing = pairing_from(args)
    columns = pairing.get("columns")
    source = input_files(one_or_many(args.data))
    data: pl.LazyFrame | pl.DataFrame = scan_source(source)
    schema = data.collect_schema()
    judge = judge_from(args)
    if isinstance(judge, Panel):
        raise OptionError(
            "disparities reads each response's outcome with one judge: pass --judge once "
            "(a panel of judges scores pairs, not outcomes)."
        )
    is_rows = not {"pair_id", "metric"} <= set(schema.names())
    if is_rows and not isinstance(judge, HeuristicJudge) and not set(OUTCOME_COLUMNS) & set(schema):
        # Read here, through the cache the flags name, with the progress bar
        data = outcomes(
            data.collect(), judge, args.outcome_metric, columns=columns,
            cache=cache_setting(args), progress=console.progress,
        )  # fmt: skip
        assert isinstance(data, pl.DataFrame)
        failed = data.filter(pl.col("outcome_error").is_not_null())
        if failed.height:
            console.warn(
                f"{failed.height} responses have no outcome (their judgement failed: see the "
                f"outcome_error column); the figures leave them out. First: "
                f"{failed['outcome_error'][0]}"
            )
    found = disparities(
        data,
        by=args.by or ("dimension", "attribute"),
        reference=args.against,
        judge=judge,
        strategy=strategy,
        confidence=args.confidence,
        columns=columns,
        labels=args.labels,
    )
    console.payload["disparities"] = found.to_dicts()
    corrected = [c for c in found.columns if c == "n_labelled" or c.endswith("_ppi")]
    keys = [c for c in found.columns if c not in {*DISPARITY_COLUMNS, *DISPARITY_PPI_COLUMNS}]
    shown = found.select(*keys, "pair_kind", "reference", *SHOWN, *corrected).with_columns(
        pl.selectors.float().round(4)
    )
    show_and_write(console, found, markdown_table(shown), args.out, "the disparities")
    return 0
