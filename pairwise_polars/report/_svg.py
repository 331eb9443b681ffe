"""Small inline SVG charts: bars with interval whiskers, histograms, count bars.

Plain strings built from numbers; every text goes through ``html.escape``. Colours live in the
report's CSS (classes ``bar``, ``whisker``, ``gate-line``, ...), so charts follow the page style.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

_CHAR_PX = 6.6  # average width of a 12px sans-serif character
_ROW = 24
_LABEL_MAX = 34


@dataclass(frozen=True)
class Interval:
    """One row of an interval chart: a point value with its interval, and a hover note."""

    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    note: str = ""
    gate: float | None = None


def _short(label: str) -> str:
    return label if len(label) <= _LABEL_MAX else label[: _LABEL_MAX - 1] + "…"


def _fmt(value: float) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".") if value else "0"


def _svg(width: float, height: float, label: str, body: list[str]) -> str:
    return (
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
        f'aria-label="{escape(label)}"><title>{escape(label)}</title>' + "".join(body) + "</svg>"
    )


def interval_chart(
    rows: Sequence[Interval],
    *,
    title: str,
    axis_label: str,
    plot_width: int = 300,
) -> str:
    """Horizontal bars from 0 to each value on a [0, 1] axis, with the interval as a whisker and
    the row's gate threshold (if any) as a dashed red mark. A row without a value says so."""
    label_w = min(_LABEL_MAX, max((len(r.label) for r in rows), default=4)) * _CHAR_PX + 12
    left, top, right = label_w, 26, 56
    if any(r.gate is not None for r in rows):
        top = 40
    height = top + _ROW * len(rows) + 34
    width = left + plot_width + right

    def x(v: float) -> float:
        return left + max(0.0, min(1.0, v)) * plot_width

    body = [f'<text class="chart-title" x="{left:.0f}" y="15">{escape(title)}</text>']
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        body.append(
            f'<line class="grid" x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="{top - 4}" '
            f'y2="{height - 30}"/><text class="tick" x="{x(tick):.1f}" y="{height - 16}" '
            f'text-anchor="middle">{_fmt(tick)}</text>'
        )
    body.append(
        f'<text class="axis-label" x="{left + plot_width / 2:.0f}" y="{height - 3}" '
        f'text-anchor="middle">{escape(axis_label)}</text>'
    )
    for i, row in enumerate(rows):
        y = top + i * _ROW
        mid = y + _ROW / 2
        hover = f"{row.label}: " + ("no scored pairs" if row.value is None else _fmt(row.value))
        if row.low is not None and row.high is not None:
            hover += f" [{_fmt(row.low)}, {_fmt(row.high)}]"
        if row.note:
            hover += f" ({row.note})"
        if row.gate is not None:
            hover += f"; gate {_fmt(row.gate)}"
        body.append(f'<g class="row"><title>{escape(hover)}</title>')
        body.append(
            f'<text class="label" x="{left - 8:.0f}" y="{mid + 4:.1f}" '
            f'text-anchor="end">{escape(_short(row.label))}</text>'
        )
        if row.value is None:
            body.append(
                f'<text class="missing" x="{left + 4:.0f}" y="{mid + 4:.1f}">'
                "no scored pairs</text></g>"
            )
            continue
        body.append(
            f'<rect class="bar" x="{left:.1f}" y="{y + 5:.1f}" '
            f'width="{x(row.value) - left:.1f}" height="{_ROW - 10}"/>'
        )
        if row.low is not None and row.high is not None:
            x1, x2 = x(row.low), x(row.high)
            body.append(
                f'<line class="whisker" x1="{x1:.1f}" x2="{x2:.1f}" y1="{mid:.1f}" y2="{mid:.1f}"/>'
                f'<line class="whisker" x1="{x1:.1f}" x2="{x1:.1f}" y1="{mid - 5:.1f}" '
                f'y2="{mid + 5:.1f}"/><line class="whisker" x1="{x2:.1f}" x2="{x2:.1f}" '
                f'y1="{mid - 5:.1f}" y2="{mid + 5:.1f}"/>'
            )
        end = x(max(row.value, row.high or 0.0))
        body.append(
            f'<text class="value" x="{end + 5:.1f}" y="{mid + 4:.1f}">{_fmt(row.value)}</text>'
        )
        if row.gate is not None:
            gx = x(row.gate)
            body.append(
                f'<line class="gate-line" x1="{gx:.1f}" x2="{gx:.1f}" y1="{y + 1}" '
                f'y2="{y + _ROW - 1}"/>'
            )
        body.append("</g>")
    if any(r.gate is not None for r in rows):
        body.append(
            f'<line class="gate-line" x1="{left:.0f}" x2="{left + 18:.0f}" y1="28" y2="28"/>'
            f'<text class="gate-text" x="{left + 24:.0f}" y="32">gate threshold</text>'
        )
    return _svg(width, height, title, body)


def column_chart(
    bars: Sequence[tuple[str, int, str]],
    *,
    title: str,
    axis_label: str,
    plot_height: int = 140,
) -> str:
    """Vertical bars, one per (label, count, css class): a histogram of discrete values."""
    bar_w = 34 if len(bars) <= 12 else max(12, 420 // max(len(bars), 1))
    left, top, bottom = 44, 38, 46
    width = max(left + len(bars) * (bar_w + 6) + 16, 320)  # room for the axis label
    height = top + plot_height + bottom
    peak = max((c for _, c, _ in bars), default=0) or 1
    body = [f'<text class="chart-title" x="{left}" y="15">{escape(title)}</text>']
    for frac in (0.0, 0.5, 1.0):
        y = top + plot_height * (1 - frac)
        body.append(
            f'<line class="grid" x1="{left - 4}" x2="{width - 10}" y1="{y:.1f}" '
            f'y2="{y:.1f}"/><text class="tick" x="{left - 8}" y="{y + 4:.1f}" '
            f'text-anchor="end">{round(peak * frac)}</text>'
        )
    for i, (label, count, css) in enumerate(bars):
        x = left + 4 + i * (bar_w + 6)
        h = plot_height * count / peak
        y = top + plot_height - h
        body.append(
            f'<g class="row"><title>{escape(label)}: {count:,}</title>'
            f'<rect class="{escape(css)}" x="{x:.1f}" y="{y:.1f}" width="{bar_w}" '
            f'height="{h:.1f}"/><text class="tick" x="{x + bar_w / 2:.1f}" '
            f'y="{top + plot_height + 14}" text-anchor="middle">{escape(_short(label)[:8])}</text>'
            f'<text class="value" x="{x + bar_w / 2:.1f}" y="{y - 3:.1f}" '
            f'text-anchor="middle">{count:,}</text></g>'
        )
    body.append(
        f'<text class="axis-label" x="{left + (width - left) / 2:.0f}" '
        f'y="{height - 6}" text-anchor="middle">{escape(axis_label)}</text>'
    )
    return _svg(width, height, title, body)


def count_chart(rows: Sequence[tuple[str, int]], *, title: str, plot_width: int = 300) -> str:
    """Horizontal bars of counts, one per (label, count): e.g. errors by kind."""
    label_w = min(_LABEL_MAX, max((len(label) for label, _ in rows), default=4)) * _CHAR_PX + 12
    left, top = label_w, 24
    height = top + _ROW * len(rows) + 8
    width = left + plot_width + 60
    peak = max((c for _, c in rows), default=0) or 1
    body = [f'<text class="chart-title" x="{left:.0f}" y="15">{escape(title)}</text>']
    for i, (label, count) in enumerate(rows):
        y = top + i * _ROW
        w = plot_width * count / peak
        body.append(
            f'<g class="row"><title>{escape(label)}: {count:,}</title>'
            f'<text class="label" x="{left - 8:.0f}" y="{y + _ROW / 2 + 4:.1f}" '
            f'text-anchor="end">{escape(_short(label))}</text>'
            f'<rect class="bar error-bar" x="{left:.1f}" y="{y + 5:.1f}" width="{w:.1f}" '
            f'height="{_ROW - 10}"/><text class="value" x="{left + w + 5:.1f}" '
            f'y="{y + _ROW / 2 + 4:.1f}">{count:,}</text></g>'
        )
    return _svg(width, height, title, body)
