"""Records shared by the report's sections: figures with intervals, slice tables, and how a
summary row is named (the same label a gate check gives it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pairwise_polars.report._tables import FIGURES
from pairwise_polars.summary import SCOPE


@dataclass(frozen=True)
class Figure:
    value: str
    ci: str = ""


@dataclass(frozen=True)
class SliceRow:
    cells: tuple[str, ...]
    overall: bool
    failed: bool
    counts: tuple[str, ...]
    figures: tuple[Figure, ...]


@dataclass(frozen=True)
class Table:
    slice_headings: tuple[str, ...]
    count_headings: tuple[str, ...]
    figure_headings: tuple[str, ...]
    rows: tuple[SliceRow, ...]


def num(value: Any, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def slice_label(row: Mapping[str, Any], slices: Sequence[str]) -> str:
    """The label :func:`~pairwise_polars.gate` gives a slice row."""
    if row.get(SCOPE) == "overall" or not slices:
        return "overall"
    return ", ".join(f"{s}={'null' if row[s] is None else row[s]}" for s in slices)


def short_label(row: Mapping[str, Any], slices: Sequence[str]) -> str:
    label = slice_label(row, slices)
    if len(slices) == 1 and label != "overall":  # one slice column: its value says it all
        return "null" if row[slices[0]] is None else str(row[slices[0]])
    return label


def slice_table(
    records: Sequence[Mapping[str, Any]],
    slices: Sequence[str],
    counts: Mapping[str, str],
    figures: Sequence[str],
    failed: set[str] = frozenset(),  # type: ignore[assignment]
) -> Table:
    rows = []
    for r in records:
        label = slice_label(r, slices)
        overall = label == "overall"
        cells = ("overall",) if overall else tuple(
            "null" if r[s] is None else str(r[s]) for s in slices
        )  # fmt: skip
        rows.append(
            SliceRow(
                cells=cells,
                overall=overall,
                failed=label in failed,
                counts=tuple("—" if r.get(c) is None else f"{r[c]:,}" for c in counts),
                figures=tuple(
                    Figure(
                        num(r.get(f)),
                        ""
                        if r.get(f"{f}_low") is None or r.get(f"{f}_high") is None
                        else f"[{r[f'{f}_low']:.3f}, {r[f'{f}_high']:.3f}]",
                    )
                    for f in figures
                ),
            )
        )
    return Table(
        slice_headings=tuple(slices) or ("slice",),
        count_headings=tuple(counts.values()),
        figure_headings=tuple(FIGURES.get(f, f.replace("_", " ")) for f in figures),
        rows=tuple(rows),
    )
