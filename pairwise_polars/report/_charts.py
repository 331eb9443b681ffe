"""The geometry of the report's charts, as numbers for the templates to draw (the templates do all
the writing and escaping).

Bar charts with intervals and count bars are HTML rows (a label that wraps, a track, a value in
its own column), so labels never overlap bars, whiskers or gate marks and narrow screens reflow
them. Histograms are SVG with a view box: they scale down with the page, and a label that would
not fit its column is left to the bar's tooltip instead of overlapping its neighbour.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

CHAR_PX = 7.0
"""Width of one character of the charts' 11-12px labels, rounded up (for fitting labels)."""


@dataclass(frozen=True)
class Interval:
    """One row of an interval chart: a point value with its interval, and a hover note."""

    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    note: str = ""
    gate: float | None = None


@dataclass(frozen=True)
class IntervalRow:
    """An interval row placed on the chart's axis: positions are percentages of the track."""

    label: str
    text: str
    """The value as shown beside the track ("no scored pairs" for none)."""
    hover: str
    missing: bool
    bar_from: float
    bar_width: float
    low: float | None
    high: float | None
    gate: float | None


@dataclass(frozen=True)
class Tick:
    at: float
    """Position, as a percentage of the track."""
    label: str


@dataclass(frozen=True)
class IntervalChart:
    title: str
    axis_label: str
    rows: tuple[IntervalRow, ...]
    ticks: tuple[Tick, ...]
    zero: float
    """Where 0 is on the track (a percentage): the bars start there."""
    has_gate: bool


def fmt(value: float) -> str:
    """A short number: ``0.25``, ``0``, ``-0.125``."""
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def interval_chart(
    rows: Sequence[Interval],
    *,
    title: str,
    axis_label: str,
    domain: tuple[float, float] = (0.0, 1.0),
) -> IntervalChart:
    """Bars from 0 to each value on the ``domain`` axis, the interval as a whisker and the row's
    gate threshold (if any) as a dashed mark; values outside the domain are clipped to it."""
    lo, hi = domain

    def at(value: float) -> float:
        return round(100 * (min(max(value, lo), hi) - lo) / (hi - lo), 2)

    zero = at(0.0)
    placed = []
    for row in rows:
        hover = f"{row.label}: " + ("no scored pairs" if row.value is None else fmt(row.value))
        if row.low is not None and row.high is not None:
            hover += f" [{fmt(row.low)}, {fmt(row.high)}]"
        if row.note:
            hover += f" ({row.note})"
        if row.gate is not None:
            hover += f"; gate {fmt(row.gate)}"
        if row.value is None:
            placed.append(
                IntervalRow(row.label, "no scored pairs", hover, True, zero, 0.0, None, None, None)
            )
            continue
        end = at(row.value)
        bounds = row.low is not None and row.high is not None
        placed.append(
            IntervalRow(
                label=row.label,
                text=f"{row.value:.3f}",
                hover=hover,
                missing=False,
                bar_from=min(zero, end),
                bar_width=abs(end - zero),
                low=at(row.low) if bounds and row.low is not None else None,
                high=at(row.high) if bounds and row.high is not None else None,
                gate=None if row.gate is None else at(row.gate),
            )
        )
    steps = 4
    ticks = tuple(Tick(at(lo + (hi - lo) * i / steps), fmt(lo + (hi - lo) * i / steps))
                  for i in range(steps + 1))  # fmt: skip
    return IntervalChart(
        title, axis_label, tuple(placed), ticks, zero, any(r.gate is not None for r in rows)
    )


@dataclass(frozen=True)
class CountRow:
    label: str
    count: int
    width: float
    """The bar's width, a percentage of the longest."""


def count_rows(rows: Sequence[tuple[str, int]]) -> tuple[CountRow, ...]:
    """Horizontal count bars, one per (label, count): e.g. errors by kind."""
    peak = max((c for _, c in rows), default=0) or 1
    return tuple(CountRow(label, count, round(100 * count / peak, 2)) for label, count in rows)


@dataclass(frozen=True)
class Column:
    label: str
    """The label under the bar ("" when it would not fit: the tooltip says it)."""
    full_label: str
    count: int
    css: str
    x: float
    y: float
    width: float
    height: float
    value: str
    """The count above the bar (shortened, ``12k``, when the full count would not fit)."""


@dataclass(frozen=True)
class ColumnChart:
    title: str
    axis_label: str
    width: float
    height: float
    left: float
    top: float
    plot_height: float
    columns: tuple[Column, ...]
    grid: tuple[tuple[float, str], ...]
    """Horizontal grid lines: (y, count label)."""


def compact_count(count: int) -> str:
    """A count in at most four characters: ``999``, ``1.2k``, ``45k``, ``3.4M``."""
    for size, unit in ((1_000_000_000, "G"), (1_000_000, "M"), (1_000, "k")):
        if count >= size:
            value = count / size
            return f"{value:.1f}{unit}" if value < 10 else f"{value:.0f}{unit}"
    return str(count)


def column_chart(
    bars: Sequence[tuple[str, int, str]],
    *,
    title: str,
    axis_label: str,
    plot_height: int = 140,
) -> ColumnChart:
    """Vertical bars, one per (label, count, css class): a histogram of discrete values."""
    bar_w = 34 if len(bars) <= 12 else max(12, 420 // max(len(bars), 1))
    longest = max((len(label) for label, _, _ in bars), default=1)
    pitch = max(bar_w + 6, min(longest * CHAR_PX + 8, 72))
    peak = max((c for _, c, _ in bars), default=0) or 1
    left = max(30.0, len(f"{peak:,}") * CHAR_PX + 14)
    top, bottom = 40.0, 46.0
    width = max(left + len(bars) * pitch + 16, len(title) * CHAR_PX + left, 300.0)
    width = max(width, len(axis_label) * CHAR_PX * 0.95 + left)
    columns = []
    for i, (label, count, css) in enumerate(bars):
        x = left + 4 + i * pitch + (pitch - bar_w) / 2 - 3
        h = plot_height * count / peak
        y = top + plot_height - h
        fits = int((pitch - 2) // CHAR_PX)
        value = f"{count:,}" if len(f"{count:,}") <= fits else compact_count(count)
        columns.append(
            Column(
                label=label if len(label) <= fits else "",
                full_label=label,
                count=count,
                css=css,
                x=round(x, 1),
                y=round(y, 1),
                width=bar_w,
                height=round(h, 1),
                value=value,
            )
        )
    grid = tuple(
        (round(top + plot_height * (1 - frac), 1), f"{round(peak * frac):,}")
        for frac in (0.0, 0.5, 1.0)
    )
    return ColumnChart(
        title=title,
        axis_label=axis_label,
        width=round(width),
        height=round(top + plot_height + bottom),
        left=left,
        top=top,
        plot_height=plot_height,
        columns=tuple(columns),
        grid=grid,
    )
