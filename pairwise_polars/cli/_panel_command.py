"""``score`` with a panel (``--judge`` repeated) or ``--repeats K``: every member judges every
request; the plan counts every member; the scored frame keeps member rows and combined rows.
``summarize`` and ``report`` of a frame with repeats add ``verdict_stability`` under their
gates."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import polars as pl

from pairwise_polars._schemas import REPEAT
from pairwise_polars.cli._console import Console
from pairwise_polars.cli._gate_options import reading_settings
from pairwise_polars.cli._options import interval_settings
from pairwise_polars.judges import Judge, Panel
from pairwise_polars.metrics import Metric
from pairwise_polars.scoring import Prices, plan, score_pairs
from pairwise_polars.scoring._prepare import Order
from pairwise_polars.summary import GATE_NAMES, slice_columns
from pairwise_polars.summary._stability import scoped_stability


def fanned_out(judge: Judge | Panel, args: argparse.Namespace) -> bool:
    return isinstance(judge, Panel) or args.repeats > 1


def first_judge(judge: Judge | Panel) -> Judge:
    """The judge a spec holds (a panel's first; its members are named in the output)."""
    return judge.judges[0] if isinstance(judge, Panel) else judge


def judge_name(judge: Judge | Panel) -> str:
    return f"panel ({', '.join(judge.names)})" if isinstance(judge, Panel) else judge.name


def score_members(
    args: argparse.Namespace,
    console: Console,
    pairs: pl.LazyFrame,
    metrics: Sequence[Metric],
    judge: Judge | Panel,
    cache: bool | str | None,
    prices: Prices,
) -> pl.DataFrame | None:
    """The scored frame of a panel or repeats (None on a dry run, after the plan is shown)."""
    order: Order = args.order
    frame = pairs.collect()  # planned and scored from one read
    planned = plan(
        frame, list(metrics), pairs=True, judge=judge, repeats=args.repeats,
        both_orders=args.both_orders, order=order, audit=args.audit, cache=cache, prices=prices,
    )  # fmt: skip
    console.record("plan", planned)
    if args.dry_run:
        return None
    return score_pairs(
        frame, list(metrics), judge=judge, repeats=args.repeats, both_orders=args.both_orders,
        order=order, audit=args.audit, cache=cache, progress=console.progress,
        labels=args.labels,
    )  # fmt: skip


def with_stability(
    summary: pl.DataFrame, scored: pl.LazyFrame, args: argparse.Namespace
) -> pl.DataFrame:
    """``summary`` with ``verdict_stability`` under the command's gates when the scored frame
    has repeats (each request's repeats drawn again; combined by mean), else as it is."""
    gates = {n: getattr(args, n) for n in GATE_NAMES if getattr(args, n, None) is not None}
    if not gates or REPEAT not in scored.collect_schema():
        return summary
    if not scored.select(pl.col(REPEAT).max()).collect().item():
        return summary
    return scoped_stability(
        scored,
        summary,
        slice_columns(summary),
        overall=gates,
        per_slice=gates,
        **interval_settings(args),
        **reading_settings(args),
    )
