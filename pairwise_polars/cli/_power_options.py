"""``plan --detect X --pilot FILE``: a manifest plan with its power per metric and slice."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from pairwise_polars.cli._numbers import positive
from pairwise_polars.io import to_lazy
from pairwise_polars.manifest import TargetRun
from pairwise_polars.summary import default_slices, slice_power


def add_power_options(parser: argparse.ArgumentParser) -> None:
    """``--detect`` and ``--pilot``: what the run can detect, as ``plan(detect=, pilot=)``."""
    group = parser.add_argument_group("power")
    group.add_argument(
        "--detect",
        type=positive,
        metavar="X",
        help="the excess divergence to detect: adds, per metric and slice, the smallest effect "
        "the run detects (80%% power, 95%% confidence), its power at X and the groups X needs",
    )
    group.add_argument(
        "--pilot",
        metavar="FILE",
        help="a scored file of an earlier or smaller run: its spread and within-group "
        "correlation (default: a score sd of 0.25 and a correlation of 0.3, stated)",
    )


def with_power(run: TargetRun, args: Any) -> TargetRun:
    """The target's planned run with its power when ``--detect`` or ``--pilot`` was given."""
    detect, pilot = getattr(args, "detect", None), getattr(args, "pilot", None)
    if detect is None and pilot is None:
        return run
    target = run.target
    slices = list(target.slices) if target.slices is not None else default_slices(run.pairs.columns)
    metrics = [m.load().name for m in target.metrics]
    frame = to_lazy(pilot)[0] if pilot is not None else None
    rows = slice_power(
        run.pairs, metrics, slices, target.columns.group_by, detect=detect, pilot=frame
    )
    return dataclasses.replace(run, plan=dataclasses.replace(run.plan, power=rows))
