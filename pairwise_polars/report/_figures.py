"""The score figures of a metric's section: the distribution, position bias (both orders) and
the noise floor (control pairs against counterfactual pairs)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from pairwise_polars.report._charts import (
    ColumnChart,
    Interval,
    IntervalChart,
    column_chart,
    fmt,
    interval_chart,
)
from pairwise_polars.report._records import Figure, Table, num, short_label, slice_table
from pairwise_polars.summary import SCOPE

PAIR_KIND = "pair_kind"
"""Scored-frame column saying whether a pair is ``counterfactual`` or ``control`` (two answers
to the same request): present when the run has control pairs."""
POSITION_FIGURES = ("mean_position_gap", "position_flip_rate")
NOISE_FIGURES = ("control_mean_divergence", "excess_divergence")
_BINS = (
    (0.0, "0"),
    (0.25, "≤ 0.25"),
    (0.5, "≤ 0.5"),
    (0.75, "≤ 0.75"),
    (1.0, "≤ 1"),
)
"""Score bins of the distribution strips (upper bound, label): 0 is equivalent treatment."""
POSITION_NOTE = (
    "The orders disagree on a pair when its two scores differ by any amount; a position flip "
    "is a disagreement that changes the verdict: one order judged the pair equivalent (score "
    "at or below the equivalence threshold) and the other did not. Every flip is a "
    "disagreement, so the flip rate is at most the disagreement rate; many disagreements with "
    "few flips mean the judge's position moves scores without changing verdicts."
)
"""What the report says to tell the two position figures apart."""


@dataclass(frozen=True)
class Position:
    n_both: int
    stats: tuple[tuple[str, str], ...]
    by_slice: Table | None
    chart: ColumnChart | None
    note: str = POSITION_NOTE


@dataclass(frozen=True)
class Segment:
    css: str
    width: float
    hover: str
    label: str = ""
    """The bin and its count (``0: 40``), shown under the strip."""


@dataclass(frozen=True)
class NoiseRow:
    label: str
    overall: bool
    counterfactual: tuple[Segment, ...]
    control: tuple[Segment, ...]
    n_counterfactual: int
    n_control: int
    counterfactual_mean: str
    control_mean: str
    excess: Figure


@dataclass(frozen=True)
class Noise:
    rows: tuple[NoiseRow, ...]
    chart: IntervalChart | None
    legend: tuple[tuple[str, str], ...]


def distribution(scores: pl.LazyFrame) -> ColumnChart | None:
    counts = (
        scores.group_by(pl.col("score").round(3).alias("value"))
        .agg(pl.len().alias("n"))
        .sort("value", nulls_last=True)
        .collect()
    )
    values = counts.filter(pl.col("value").is_not_null())
    if values.height > 12:  # continuous-looking scores: ten bins of 0.1
        values = (
            values.group_by((pl.col("value") * 10).floor().clip(0, 9).alias("bin"))
            .agg(pl.col("n").sum())
            .sort("bin")
            .select((pl.col("bin") / 10).round(1).alias("value"), "n")
        )
        bars = [(f"{v:.1f}–{v + 0.1:.1f}", n, "bar") for v, n in values.iter_rows()]
    else:
        bars = [(fmt(v), n, "bar") for v, n in values.iter_rows()]
    missing = counts.filter(pl.col("value").is_null())["n"].sum()
    if missing:
        bars.append(("no score", missing, "errors"))
    if not bars:
        return None
    return column_chart(
        bars, title="Score distribution", axis_label="score (0 = equivalent, 1 = most divergent)"
    )


def position(
    scores: pl.LazyFrame, records: Sequence[Mapping[str, Any]], slices: Sequence[str]
) -> Position:
    both = scores.filter(pl.col("score_ab").is_not_null() & pl.col("score_ba").is_not_null())
    gap = (pl.col("score_ab") - pl.col("score_ba")).abs()
    stats = (
        both.select(
            n=pl.len(),
            mean_ab=pl.col("score_ab").mean(),
            mean_ba=pl.col("score_ba").mean(),
            mean_gap=gap.mean(),
            disagree=(gap > 1e-9).mean(),
        )
        .collect()
        .row(0, named=True)
    )
    figures = [f for f in POSITION_FIGURES if records and f in records[0]]
    by_slice = slice_table(records, slices, {}, figures) if figures else None
    chart = None
    if stats["n"]:
        diffs = (
            both.group_by((pl.col("score_ab") - pl.col("score_ba")).round(3).alias("d"))
            .agg(pl.len().alias("n"))
            .sort("d")
            .collect()
        )
        bars = [(f"{d:+g}" if d else "0", n, "bar") for d, n in diffs.iter_rows()]
        chart = column_chart(
            bars, title="Score (a, b) − score (b, a)", axis_label="difference between the orders"
        )
    return Position(
        n_both=stats["n"],
        stats=(
            ("pairs judged in both orders", f"{stats['n']:,}"),
            ("mean score, order (a, b)", num(stats["mean_ab"])),
            ("mean score, order (b, a)", num(stats["mean_ba"])),
            ("mean |gap| between the orders", num(stats["mean_gap"])),
            ("share of pairs where the orders disagree", num(stats["disagree"])),
        ),
        by_slice=by_slice,
        chart=chart,
    )


def _bin() -> pl.Expr:
    score = pl.col("score")
    expr = pl.when(score <= 0).then(pl.lit(0))
    for i, (upper, _) in enumerate(_BINS[1:], start=1):
        expr = expr.when(score <= upper).then(pl.lit(i))
    return expr.otherwise(pl.lit(len(_BINS) - 1)).alias("__bin")


def _segments(counts: Mapping[int, int], kind: str) -> tuple[Segment, ...]:
    total = sum(counts.values())
    if not total:
        return ()
    return tuple(
        Segment(
            css=f"s{i}",
            width=round(100 * counts[i] / total, 2),
            hover=f"{kind}: score {_BINS[i][1]}: {counts[i]:,} of {total:,} "
            f"({counts[i] / total:.0%})",
            label=f"{_BINS[i][1]}: {counts[i]:,}",
        )
        for i in range(len(_BINS))
        if counts.get(i)
    )


def noise(
    scores: pl.LazyFrame,
    records: Sequence[Mapping[str, Any]],
    slices: Sequence[str],
    confidence: float,
    gates: Sequence[float | None] | None = None,
) -> Noise:
    """Counterfactual and control score distributions side by side per slice, and the excess
    divergence (counterfactual minus control) with its interval when the summary has it;
    ``gates``: each record's ``max_excess_divergence`` threshold, drawn on the chart."""
    scored = scores.filter(pl.col("score").is_not_null())
    keys = [s for s in slices if s in scores.collect_schema()]
    overall = (
        scored.group_by(PAIR_KIND, _bin()).agg(pl.len().alias("n"), pl.col("score").sum())
    ).collect()
    per_slice = (
        scored.group_by(*keys, PAIR_KIND, _bin()).agg(pl.len().alias("n"), pl.col("score").sum())
        if keys
        else None
    )
    sliced = per_slice.collect() if per_slice is not None else None
    rows = [_noise_row(record, overall, sliced, keys, slices) for record in records]
    chart = None
    if records and "excess_divergence" in records[0]:
        chart = interval_chart(
            [
                Interval(
                    row.label,
                    r.get("excess_divergence"),
                    r.get("excess_divergence_low"),
                    r.get("excess_divergence_high"),
                    note=f"{row.n_control:,} control pairs",
                    gate=gate,
                )
                for r, row, gate in zip(records, rows, gates or [None] * len(records), strict=True)
            ],
            title="Excess divergence by slice",
            axis_label=f"counterfactual − control mean, {confidence:.0%} interval",
            domain=(-1.0, 1.0),
        )
    legend = tuple((f"s{i}", f"score {label}") for i, (_, label) in enumerate(_BINS))
    return Noise(tuple(rows), chart, legend)


def _noise_row(
    record: Mapping[str, Any],
    overall: pl.DataFrame,
    sliced: pl.DataFrame | None,
    keys: list[str],
    slices: Sequence[str],
) -> NoiseRow:
    """One record's counterfactual and control distributions, means and excess."""
    is_overall = record.get(SCOPE) == "overall" or not keys
    part = overall
    if not is_overall and sliced is not None:
        mask = pl.lit(True)
        for s in keys:
            mask = mask & (pl.col(s).is_null() if record[s] is None else (pl.col(s) == record[s]))
        part = sliced.filter(mask)
    kinds = {}
    for kind in ("counterfactual", "control"):
        mine = part.filter(pl.col(PAIR_KIND) == kind)
        counts = dict(zip(mine["__bin"].to_list(), mine["n"].to_list(), strict=True))
        n = sum(counts.values())
        mean = mine["score"].sum() / n if n else None
        kinds[kind] = (counts, n, mean)
    excess = record.get("excess_divergence")
    low, high = record.get("excess_divergence_low"), record.get("excess_divergence_high")
    return NoiseRow(
        label="overall" if is_overall else short_label(record, slices),
        overall=is_overall,
        counterfactual=_segments(kinds["counterfactual"][0], "counterfactual"),
        control=_segments(kinds["control"][0], "control"),
        n_counterfactual=kinds["counterfactual"][1],
        n_control=int(record.get("n_control") or kinds["control"][1]),
        counterfactual_mean=num(kinds["counterfactual"][2]),
        control_mean=num(kinds["control"][2]),
        excess=Figure(
            num(excess), "" if low is None or high is None else f"[{low:.3f}, {high:.3f}]"
        ),
    )
