"""Three-way verdicts of the fairness gates: pass, fail or inconclusive, read from an interval.

A check **passes** when its interval's unfavourable bound (the upper one for a maximum, the
lower one for a minimum) is within the threshold and its slice has at least ``min_groups``
groups; it **fails** when even the favourable bound is beyond the threshold; otherwise it is
**inconclusive**, and its note says about how many more groups would likely decide it.
``conservative=True`` is the one-sided reading: it fails whenever the unfavourable bound is
beyond (and still needs ``min_groups`` to pass). Whatever the reading, an estimate or bound that
is null or NaN, or an interval of zero width, is inconclusive: an interval that cannot honestly
exist vouches for nothing.

Failed judgements (``errors_as="worst"``, the default) count at their worst for a pass and at
their best for a fail: the bound that could pass reads every unscored pair as divergent (score
1, not equivalent; for the excess, a failed control judgement as 0), the bound that could fail
reads it as equivalent. So losing exactly the divergent pairs cannot pass, and a failure never
rests on guessed scores. ``"ignore"`` reads the scored pairs only. The shift moves the judge's
(or the corrected) figure and both its bounds by the same map, with the count of failures held
fixed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import polars as pl

from pairwise_polars._errors import OptionError

MIN_GROUPS = 30
"""The fewest groups a slice needs for a fairness check to pass (``min_groups``)."""
ErrorsAs = Literal["worst", "ignore"]
ERRORS_AS = ("worst", "ignore")
EXCESS = "excess_divergence"
SCALING = "a rough guide: the half-width scaled by 1/sqrt(groups)"


@dataclass(frozen=True)
class Reading:
    """How the fairness checks read an interval: one-sided or three-way, the groups a pass
    needs, and how failed judgements count."""

    conservative: bool = False
    min_groups: int = MIN_GROUPS
    errors_as: ErrorsAs = "worst"


def check_errors_as(value: object) -> ErrorsAs:
    """``value`` when it is ``"worst"`` or ``"ignore"``, else :class:`OptionError`."""
    if value == "worst":
        return "worst"
    if value == "ignore":
        return "ignore"
    raise OptionError(
        f"errors_as must be 'worst' or 'ignore', got {value!r}: 'worst' counts each failed "
        "judgement against a pass (divergent) and against a fail (equivalent)."
    )


def check_min_groups(value: object) -> int:
    """``value`` when it is a whole number of at least 1, else :class:`OptionError`."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    raise OptionError(
        f"min_groups must be a whole number of at least 1, got {value!r}: a slice needs that "
        f"many groups for a fairness check to pass (default {MIN_GROUPS})."
    )


def counted(
    columns: Sequence[str], point: str, direction: str, figure: pl.Expr, *, worst: bool
) -> pl.Expr:
    """``figure`` (the estimate or a bound of ``point``) with the unscored pairs counted at
    their worst (``worst``) or best for a ``direction`` (``"max"`` / ``"min"``) gate."""
    if not {"n_pairs", "n_scored"} <= set(columns):
        return figure
    n = pl.col("n_pairs").cast(pl.Float64)
    scored = pl.col("n_scored").cast(pl.Float64)
    failed = (n - scored).clip(lower_bound=0)
    if point == EXCESS:
        if "mean_divergence" in columns:
            mean = pl.col("mean_divergence")
            shift = failed * ((1 - mean) if worst else -mean) / n
        else:  # the mean unknown: the largest shift it could make
            shift = failed * (1.0 if worst else -1.0) / n
        if {"n_control", "n_control_errors", "control_mean_divergence"} <= set(columns):
            controls = pl.col("n_control").cast(pl.Float64)
            lost = pl.col("n_control_errors").cast(pl.Float64)
            floor = pl.col("control_mean_divergence")
            # A failed control read as 0 lowers the floor (raises the excess): worst for a pass.
            moved = lost * (floor if worst else floor - 1) / controls
            shift = shift + pl.when((controls > 0) & floor.is_not_null()).then(moved).otherwise(0)
        return pl.when(n > 0).then(figure + shift).otherwise(figure)
    as_one = worst == (direction == "max")  # a failure read as divergent (not equivalent)
    extra = failed if as_one else pl.lit(0.0)
    return pl.when(n > 0).then((figure * scored + extra) / n).otherwise(figure)


def _bad(x: pl.Expr) -> pl.Expr:
    """No measurement: null, NaN or infinite (a hand-edited summary is no pass)."""
    return x.is_null() | ~x.is_finite().fill_null(True)


def _num(x: pl.Expr) -> pl.Expr:
    return x.round(4).cast(pl.String).fill_null("?")


def three_way(
    *,
    estimate: pl.Expr,
    unfavourable: pl.Expr,
    favourable: pl.Expr,
    low: pl.Expr,
    high: pl.Expr,
    threshold: pl.Expr,
    direction: str,
    groups: pl.Expr,
    conservative: bool,
    min_groups: int,
    bound: str,
) -> tuple[pl.Expr, pl.Expr]:
    """The check's ``status`` and the note that says why, for one fairness gate.

    ``estimate`` is the figure, ``unfavourable`` / ``favourable`` its bounds with failures
    counted (worst / best), ``low`` / ``high`` the interval as measured (for its width).
    ``bound`` names the unfavourable bound's column (for the notes)."""

    def ok(x: pl.Expr) -> pl.Expr:
        return _within(x, threshold, direction)

    zero_width = (high - low).abs() <= 1e-12
    unknown = _bad(estimate) | _bad(unfavourable) | _bad(favourable) | zero_width.fill_null(True)
    failing = ~ok(unfavourable) if conservative else ~ok(favourable)
    enough = groups.fill_null(0) >= min_groups
    status = (
        pl.when(unknown)
        .then(pl.lit("inconclusive"))
        .when(failing)
        .then(pl.lit("fail"))
        .when(ok(unfavourable) & enough)
        .then(pl.lit("pass"))
        .otherwise(pl.lit("inconclusive"))
    )
    interval = pl.format("interval [{}, {}]", _num(low), _num(high))
    on_bound = pl.lit(f"on the interval bound {bound}")
    straddles = _straddles(
        interval,
        estimate=estimate,
        unfavourable=unfavourable,
        favourable=favourable,
        threshold=threshold,
        direction=direction,
        groups=groups,
        min_groups=min_groups,
    )
    note = (
        pl.when(_bad(estimate))
        .then(pl.lit(None, pl.String))  # the caller says why the figure is missing
        .when((_bad(unfavourable) | _bad(favourable)) & (groups.fill_null(0) <= 1))
        .then(pl.lit(f"no {bound} (one group: no interval): unknown is not fair"))
        .when(_bad(unfavourable) | _bad(favourable))
        .then(
            pl.lit(
                f"no {bound} (the slice is too small or shows no spread for an honest "
                "interval): unknown is not fair; add groups"
            )
        )
        .when(zero_width)
        .then(
            pl.format(
                "a zero-width {}: no spread to measure, so it cannot vouch for fairness; "
                "add groups",
                interval,
            )
        )
        .when(status == "fail")
        .then(on_bound if conservative else pl.format("{} is beyond the threshold", interval))
        .when(status == "pass")
        .then(on_bound if conservative else pl.lit(None, pl.String))
        .when(ok(unfavourable) & ~enough)
        .then(_too_few(groups, min_groups))
        .otherwise(straddles)
    )
    return status, note


def _within(x: pl.Expr, threshold: pl.Expr, direction: str) -> pl.Expr:
    """``x`` on the fair side of the threshold (at most a maximum, at least a minimum)."""
    return x <= threshold if direction == "max" else x >= threshold


def _straddles(
    interval: pl.Expr,
    *,
    estimate: pl.Expr,
    unfavourable: pl.Expr,
    favourable: pl.Expr,
    threshold: pl.Expr,
    direction: str,
    groups: pl.Expr,
    min_groups: int,
) -> pl.Expr:
    """The note of an interval across the threshold: about how many more groups would likely
    decide it (the interval's half-width scaled by 1/sqrt(groups))."""
    n_groups = groups.cast(pl.Float64)
    distance = (estimate - threshold).abs()
    fair = _within(estimate, threshold, direction)
    half = pl.when(fair).then(unfavourable - estimate).otherwise(estimate - favourable)
    needed = (n_groups * (half.abs() / distance) ** 2).ceil()
    floor = pl.when(fair).then(pl.lit(min_groups, pl.Float64)).otherwise(0.0)
    more = pl.max_horizontal(needed, floor, n_groups + 1) - n_groups
    return (
        pl.when(distance <= 1e-12)
        .then(
            pl.format(
                "{} straddles the threshold with the estimate on it: more groups are "
                "unlikely to decide it",
                interval,
            )
        )
        .otherwise(
            pl.format(
                "{} straddles the threshold: about {} more groups would likely decide it ({})",
                interval,
                # NaN / inf where the branch is not taken: polars evaluates both sides
                more.cast(pl.Int64, strict=False),
                pl.lit(SCALING),
            )
        )
    )


def _too_few(groups: pl.Expr, min_groups: int) -> pl.Expr:
    """The note of a slice within the threshold on too few groups to pass."""
    return pl.format(
        "{} groups, under min_groups={}: at least {} more groups for a pass",
        groups.fill_null(0),
        pl.lit(min_groups),
        (pl.lit(min_groups) - groups.fill_null(0)),
    )


def unscored_note(columns: Sequence[str], errors_as: ErrorsAs) -> pl.Expr | None:
    """The note that unscored pairs were counted (worst for a pass, best for a fail)."""
    if errors_as == "ignore" or not {"n_pairs", "n_scored"} <= set(columns):
        return None
    failed = pl.col("n_pairs") - pl.col("n_scored")
    return pl.when(failed > 0).then(
        pl.format("{} unscored pairs counted at their worst for a pass, best for a fail", failed)
    )
