"""The checks of the gates that put the judge on trial: how far people agree with it
(``min_label_agreement``) and how far a panel's judges agree with each other
(``min_judge_agreement``). One builder; each gate is data: its column, its unfavourable bound,
and what to say when the column or the figure is missing.

A trust check never fails a run: an instrument that cannot be trusted cannot vouch for fairness
either way, so it is inconclusive. Like every fairness gate it reads the unfavourable bound of
its figure's interval (the lower one), whatever ``conservative`` says: a panel whose agreement
interval straddles the threshold has not shown that it agrees, so it is inconclusive, not pass.
A figure that has no interval (``label_agreement``) is read as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from pairwise_polars._errors import ColumnError


@dataclass(frozen=True)
class Trust:
    """One trust gate: the summary column it checks and its unfavourable (lower) bound."""

    gate: str
    point: str
    bound: str
    """The lower bound of ``point``'s interval; ``point`` itself when it has none."""
    absent: str
    """The error when the summary has no ``point`` column (how to get one)."""
    unmeasured: str
    """The note of a row whose figure is null (why there is none)."""


def trust_checks(
    summary: pl.DataFrame, trust: Trust, *, label: pl.Expr, limit: str
) -> pl.DataFrame:
    """One check per row of ``summary`` (already limited to the rows with a threshold, in
    column ``limit``): pass when the figure's lower bound reaches the threshold, else
    inconclusive with a note that says why."""
    columns = summary.columns
    if trust.point not in columns:
        raise ColumnError(f"gate {trust.gate} needs {trust.absent}")
    point = pl.col(trust.point).cast(pl.Float64)
    bound = pl.col(trust.bound).cast(pl.Float64) if trust.bound in columns else pl.lit(None)
    threshold = pl.col(limit)
    bad = bound.is_null() | bound.is_nan().fill_null(False)
    passed = ~bad & (bound >= threshold).fill_null(False)
    unscored = pl.col("n_scored") == 0 if "n_scored" in columns else pl.lit(False)
    shown = bound.round(4).cast(pl.String)
    note = (
        pl.when(point.is_null() & unscored)
        .then(pl.lit("no scored pairs: unknown is not fair"))
        .when(point.is_null())
        .then(pl.lit(f"no {trust.point} ({trust.unmeasured}): unknown is not fair"))
        .when(bad)
        .then(
            pl.lit(
                f"{trust.point} has no interval (one group, or nothing to agree on): "
                "an agreement not measured cannot vouch; add groups"
            )
        )
        .when(~passed & (point >= threshold))
        .then(
            pl.lit(f"the interval straddles the threshold: its lower bound {trust.bound} ")
            + shown
            + pl.lit(" is below it; add groups")
        )
        .when(~passed)
        .then(pl.lit(f"{trust.point} is below the threshold: the judge cannot vouch"))
    )
    if trust.bound != trust.point:
        note = note.when(pl.lit(True)).then(pl.lit(f"on the interval bound {trust.bound}"))
    return summary.select(
        metric=pl.col("metric"),
        slice=label,
        gate=pl.lit(trust.gate),
        threshold=threshold,
        observed=bound,
        passed=passed,
        status=pl.when(passed).then(pl.lit("pass")).otherwise(pl.lit("inconclusive")),
        note=note,
    )
