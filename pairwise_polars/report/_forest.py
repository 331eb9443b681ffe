"""Forest plots of disparities: per dimension and outcome, each attribute's signed difference
against the reference with its interval around the zero line, labelled with who is favoured,
and the control's interval (the reference against a second answer to itself) beside it. With
people's outcome labels, each corrected (prediction-powered) figure is drawn under the judge's."""

from __future__ import annotations

import math
from dataclasses import replace

import polars as pl

from pairwise_polars.pairing import PAIR_KIND
from pairwise_polars.report._charts import Interval, IntervalChart, interval_chart

FIGURES = {
    "amount_relative": ("Amount offered, relative to the reference", 1.0),
    "decision_difference": ("Decision rate, difference from the reference", 1.0),
    "refusal_difference": ("Refusal rate, difference from the reference", -1.0),
    "mean_favour": ("Favour (pairwise-favour), against the reference", 1.0),
}
"""Each figure drawn, its title and whether more is better (+1) or worse (-1) for the person."""


def forest_charts(disparities: pl.DataFrame | None) -> tuple[IntervalChart, ...]:
    """One chart per (dimension, measured figure) of a :func:`~pairwise_polars.disparities`
    frame; none without one."""
    if disparities is None or disparities.is_empty() or PAIR_KIND not in disparities.columns:
        return ()
    frame = disparities
    if "dimension" not in frame.columns:
        frame = frame.with_columns(dimension=pl.lit(None, pl.String))
    charts = []
    for (dimension,), rows in frame.group_by("dimension", maintain_order=True):
        for column, (title, better) in FIGURES.items():
            measured = rows.filter(pl.col(column).is_not_null())
            if measured.is_empty():
                continue
            name = f"{title}: {dimension}" if dimension is not None else title
            charts.append(_chart(measured, column, better, name))
    return tuple(charts)


def _chart(rows: pl.DataFrame, column: str, better: float, title: str) -> IntervalChart:
    items = []
    reach = 0.0
    for row in rows.sort(PAIR_KIND, descending=True).iter_rows(named=True):
        value, low, high = row[column], row[f"{column}_low"], row[f"{column}_high"]
        reach = max(reach, *(abs(v) for v in (value, low, high) if v is not None))
        reference = row.get("reference") or "the reference"
        attribute = row.get("attribute") or "b"
        if row[PAIR_KIND] == "control":
            label, note = f"control: {reference} vs {reference}", "should hold 0"
        else:
            favoured = attribute if value * better > 0 else reference if value * better < 0 else ""
            label = f"{attribute} vs {reference}"
            note = f"favours {favoured}" if favoured else "no difference"
            if low is not None and high is not None and low <= 0 <= high:
                note += " (the interval holds 0)"
        items.append(Interval(label, value, low, high, note=note))
        corrected = _corrected(row, column, label, better, reference, attribute)
        if corrected is not None:
            items.append(corrected)
            ends = (corrected.value, corrected.low, corrected.high)
            reach = max(reach, *(abs(v) for v in ends if v is not None))
    edge = _nice(reach * 1.1 or 0.1)
    axis = "relative difference (b - a) / a" if column == "amount_relative" else "difference"
    chart = interval_chart(items, title=title, axis_label=axis, domain=(-edge, edge))
    return replace(chart, zero_line=True)


def _corrected(
    row: dict[str, object], column: str, label: str, better: float, reference: str, attribute: str
) -> Interval | None:
    """The row's prediction-powered figure (``<column>_ppi``, with people's outcome labels)
    drawn under the judge's, or None where the row has none."""
    value = row.get(f"{column}_ppi")
    if not isinstance(value, float):
        return None
    low, high = row.get(f"{column}_ppi_low"), row.get(f"{column}_ppi_high")
    favoured = attribute if value * better > 0 else reference if value * better < 0 else ""
    note = f"corrected by human labels (n_labelled={row.get('n_labelled')}); "
    note += f"favours {favoured}" if favoured else "no difference"
    return Interval(
        f"{label}, corrected by labels", value,
        low if isinstance(low, float) else None, high if isinstance(high, float) else None,
        note=note,
    )  # fmt: skip


def _nice(value: float) -> float:
    """A round axis end at or above ``value``: 0.05, 0.1, 0.2, 0.25, 0.5, 1, 2 ..."""
    power = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if step * power >= value:
            return step * power
    return 10 * power
