"""``score`` with a panel (``--judge`` repeated) or ``--repeats K``: every member judges every
request; the plan counts every member; the scored frame keeps member rows and combined rows."""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence

import polars as pl

from pairwise_polars.cli._console import Console
from pairwise_polars.judges import Judge, Panel
from pairwise_polars.metrics import Metric
from pairwise_polars.scoring import Prices, plan, score_pairs
from pairwise_polars.scoring._prepare import Order


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
    console.payload["plan"] = dataclasses.asdict(planned)
    console.info(str(planned))
    if args.dry_run:
        return None
    return score_pairs(
        frame, list(metrics), judge=judge, repeats=args.repeats, both_orders=args.both_orders,
        order=order, audit=args.audit, cache=cache, progress=console.progress,
        labels=args.labels,
    )  # fmt: skip
