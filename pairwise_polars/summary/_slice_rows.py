"""The per-group rows of each slice, together and in one order: where the per-slice sums are
added (:mod:`pairwise_polars.summary._slice_sums`, the prediction-powered ones of
:mod:`pairwise_polars.summary._ppi`).

The rows are sorted by the slice (a whole number per distinct key values) and then by the
group, or by every column when a slice and group name more than one row,
so each slice's rows sit together in one order whatever order or layout they arrived in (in
memory, chunked parts, Ray blocks). Each sum is numpy's over a slice's rows in that order: it
depends on that order alone, not on where polars places the rows or on its threads.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from pairwise_polars.summary._sums import CODE

SLICE = "__pairwise_slice"
"""The column of :attr:`SliceRows.rows` numbering each row's slice."""


class SliceRows:
    """The sorted per-group rows (``rows``: without the keys, with :data:`SLICE`), the slices
    (``slices``: their keys, one row each) and the row where each slice starts."""

    def __init__(self, rows: pl.DataFrame, slices: pl.DataFrame, starts: np.ndarray) -> None:
        self.rows, self.slices, self.starts = rows, slices, starts
        self.lengths = np.diff(starts, append=rows.height)

    @classmethod
    def sort(
        cls, rows: pl.DataFrame, keys: list[str], groups: list[str], *, unique: bool
    ) -> SliceRows:
        """``rows`` in one order, each slice's together: by the slice and the group when they
        name one row each (``unique``: known to; else checked), else by every column."""
        code, slices = _slice_code(rows, keys)
        coded = rows.drop(c for c in rows.columns if c.startswith(CODE))
        coded = coded.with_columns(pl.Series(SLICE, code))
        unique = unique or _unique(coded, groups)
        group = coded[groups[0]] if len(groups) == 1 else None
        order = None
        if unique and group is not None and group.dtype.is_integer() and not group.has_nulls():
            order = _by_slice_and_group(code, slices, group.to_numpy())  # the cheap sort
        if order is None:
            rest = [c for c in rows.columns if c not in {*keys, *groups}]
            by = [SLICE, *groups, *([] if unique else rest)]
            order = coded.select(pl.arg_sort_by(by, nulls_last=True)).to_series().to_numpy()
        coded = coded.drop(keys)[order]
        starts = np.flatnonzero(np.diff(code[order], prepend=-1))
        return cls(coded, rows.select(keys)[order[starts]], starts)

    def added(self, columns: pl.DataFrame) -> pl.DataFrame:
        """Each column (of :attr:`rows`' height) added up per slice: one row per slice."""
        return pl.DataFrame(
            pl.Series(c, self.summed(_values(columns[c])), dtype=columns[c].dtype)
            for c in columns.columns
        )

    def summed(self, value: np.ndarray) -> np.ndarray:
        """``value`` (one per row) added up per slice, in the rows' order."""
        return np.add.reduceat(value, self.starts)

    def broadcast(self, value: np.ndarray) -> np.ndarray:
        """One value per slice on each of its rows."""
        return np.repeat(value, self.lengths)

    # What PpiFigure computes with (see ``InAggregation``): a column is one value per row, a
    # total the slice's sum on each of its rows.
    def column(self, name: str) -> Any:
        return _values(self.rows[name].cast(pl.Float64))

    def total(self, value: Any) -> Any:
        return self.broadcast(self.summed(value))

    def when(self, condition: Any, then: Any, otherwise: Any) -> Any:
        return np.where(condition, then, np.nan if otherwise is None else otherwise)

    def clip(self, value: Any, low: float, high: float) -> Any:
        return np.clip(value, low, high)

    def per_slice(self, name: str, value: Any, usable: Any) -> pl.Series:
        """A total (the same on every row of a slice) as one value per slice, null where
        ``usable`` is false."""
        at = self.starts
        kept = pl.when(pl.Series(usable[at])).then(pl.Series(value[at], dtype=pl.Float64))
        return pl.select(kept.alias(name)).to_series()


class InAggregation:
    """What :class:`SliceRows` computes with, as polars expressions inside an aggregation per
    slice: each total a scalar of the slice, broadcast where a per-group value meets it."""

    def column(self, name: str) -> Any:
        return pl.col(name).cast(pl.Float64)

    def total(self, value: Any) -> Any:
        return value.sum()

    def when(self, condition: Any, then: Any, otherwise: Any) -> Any:
        return pl.when(condition).then(then).otherwise(otherwise)

    def clip(self, value: Any, low: float, high: float) -> Any:
        return value.clip(low, high)


IN_AGGREGATION = InAggregation()
Slices = InAggregation | SliceRows
"""Where a figure's per-group values and their slice totals are computed: in a polars
aggregation (one expression per figure) or in passes over sorted rows (each value once)."""


def _values(column: pl.Series) -> np.ndarray:
    """A column's values, a null read as 0 (filled only where there is one: a fill is a polars
    query, and its fixed cost, not the values, was most of a small summary's per-slice sums)."""
    return (column.fill_null(0) if column.has_nulls() else column).to_numpy()


def _slice_code(rows: pl.DataFrame, keys: list[str]) -> tuple[np.ndarray, int]:
    """A whole number per distinct key values (from 0; the same number for the same values,
    another for others) and a bound on the numbers. Only which rows share a slice matters:
    each slice's sums run over its rows in the group's order wherever the slice sits among the
    others. Text keys by their codes in a categorical of their own (a third of the time of
    ranking the texts), or by the codes ``rows`` has from
    :func:`~pairwise_polars.summary._sums.coded_group_sums`; other keys by their rank."""
    if not keys:
        return np.zeros(rows.height, np.int64), 1
    texts = _text_code(rows, keys) if all(rows.schema[k] == pl.String for k in keys) else None
    if texts is not None:
        return texts
    code = rows.select(pl.struct(keys).rank("dense")).to_series().to_numpy()
    return code.astype(np.int64), rows.height + 1


def _text_code(rows: pl.DataFrame, keys: list[str]) -> tuple[np.ndarray, int] | None:
    """:func:`_slice_code` of text keys from their categorical codes (a null key numbered 0),
    ``None`` when the numbers would not fit an int64."""
    code, size = np.zeros(rows.height, np.int64), 1
    for k in keys:
        text = (
            pl.col(CODE + k)  # the codes the rows were grouped by: read, not made again
            if CODE + k in rows.columns
            else pl.col(k).cast(pl.Categorical(pl.Categories.random())).to_physical()
        )
        values = rows.select((text.cast(pl.Int64) + 1).fill_null(0)).to_series().to_numpy()
        span = int(values.max(initial=0)) + 1
        if size * span >= 2**62:
            return None
        code, size = code * span + values, size * span
    return code, size


def _by_slice_and_group(code: np.ndarray, slices: int, group: np.ndarray) -> np.ndarray | None:
    """The order of rows by slice, then group, where the pair of numbers fits one int64 (each
    row's is distinct: one order whatever the sort); ``None`` where it does not."""
    if group.size == 0:
        return np.arange(0)
    if group.dtype != np.uint64:
        group = group.astype(np.int64)
    span = int(group.max()) - int(group.min()) + 1
    if slices * span >= 2**63:
        return None
    return np.argsort(code * span + (group - group.min()).astype(np.int64))


def _unique(rows: pl.DataFrame, groups: list[str]) -> bool:
    """Whether the slice and the group name one row each (sums from ``group_sums`` or
    ``merge_sums``: then sorting by them gives the same order as sorting by every column)."""
    if len(groups) != 1:
        return False
    # Hashes: a collision only costs the full sort, which puts rows that are unique by slice
    # and group in the same order (whichever branch a path takes, the same sums).
    return rows.select(pl.struct(SLICE, *groups).hash(seed=0).n_unique() == pl.len()).item()
