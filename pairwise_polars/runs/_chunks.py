"""Planning a large run: pair keys from a lazy scan, cut into chunks that never split a group.

Only key columns are read to layout (group, role, dimension, ids: no text). Groups are taken in
file order (by their first row), so when a group's rows sit together in the file, as runs are
usually written, a chunk's rows are one contiguous range of the file and reading it decodes
little more than those rows.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import polars as pl

from pairwise_polars.io import Source, is_uri, scan_data, scan_source
from pairwise_polars.pairing import PairingOptions, Strategy, form_pairs

POS = "__pairwise_run_pos"
"""A row's position in the whole source (all files, in order)."""
_FIRST, _LAST, _PAIRS, _CHUNK = (f"__pairwise_run_{n}" for n in ("first", "last", "pairs", "chunk"))
_LO, _HI = "__pairwise_run_lo", "__pairwise_run_hi"


@dataclass(frozen=True)
class Chunk:
    """One chunk: its groups, the source rows that hold them, and how many pairs they make."""

    index: int
    groups: pl.Series
    first_row: int
    last_row: int
    n_pairs: int


@dataclass(frozen=True)
class ChunkLayout:
    files: list[str]
    chunks: list[Chunk]
    n_rows: int
    n_pairs: int
    n_groups: int
    largest_group: int
    digest: str
    """A stable digest of every pair id (order-free): same source and pairing, same digest."""
    rows_read: int
    """Rows the chunks' row ranges cover together: about n_rows when each group's rows sit
    together in the file, up to n_rows times the number of chunks when they are scattered."""
    storage_options: Mapping[str, str] | None = field(default=None, repr=False, compare=False)
    """How to reach the source's objects in a store (never recorded)."""


def file_fingerprint(
    files: list[str], storage_options: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    """Size and modification time of every file: a rewritten file is a different input. An
    object in a store gives its row count as its size and no time (polars reads no object
    metadata), so an object rewritten with as many rows is not told apart: the pair digest
    still refuses one whose pairs changed."""
    out = []
    for path in files:
        if is_uri(path):
            rows = scan_data(path, storage_options).select(pl.len()).collect().item()
            out.append({"path": path, "size": int(rows), "mtime_ns": 0})
            continue
        stat = os.stat(path)
        out.append({"path": path, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns})
    return out


def scan_rows(source: Source, id_column: str) -> pl.LazyFrame:
    """The source with its global row position, and ``id_column`` filled from it when absent
    (the same ids pairing a whole frame would give, so pair ids match an in-memory run)."""
    scan = scan_source(source).with_row_index(POS)
    if id_column not in scan.collect_schema():
        scan = scan.with_columns(pl.col(POS).cast(pl.Int64).alias(id_column))
    return scan


def lay_out_chunks(
    scan: pl.LazyFrame,
    files: list[str],
    strategy: Strategy,
    chunk_size: int,
    pairing: PairingOptions,
    group_by: str,
) -> ChunkLayout:
    """Pair keys per group, groups in file order, cut into chunks of about ``chunk_size``
    pairs: a chunk holds at most ``chunk_size + largest group - 1`` pairs."""
    g = group_by
    keys = form_pairs(scan, strategy, keys_only=True, **pairing)
    pid = pl.col("pair_id")
    per_group = keys.group_by(g).agg(
        pl.len().alias(_PAIRS),
        (pid % 4294967296).sum().alias(_LO),
        (pid // 4294967296).sum().alias(_HI),
    )
    spans = scan.group_by(g).agg(pl.col(POS).min().alias(_FIRST), pl.col(POS).max().alias(_LAST))
    per_group, spans, n_rows = pl.collect_all([per_group, spans, scan.select(pl.len())])
    groups = (
        per_group.join(spans, on=g, how="inner", nulls_equal=True)
        .sort(_FIRST)
        .with_columns(((pl.col(_PAIRS).cum_sum() - pl.col(_PAIRS)) // chunk_size).alias(_CHUNK))
    )
    chunks = [
        Chunk(
            i,
            part[g],
            _int(part[_FIRST].min()),
            _int(part[_LAST].max()),
            _int(part[_PAIRS].sum()),
        )
        for i, part in enumerate(groups.partition_by(_CHUNK, maintain_order=True))
    ]
    if not chunks:  # nothing to judge: one empty chunk still writes the (empty) scored frame
        chunks = [Chunk(0, groups[g], 0, -1, 0)]
    lo = _int(groups[_LO].sum())
    hi = _int(groups[_HI].sum())
    n_pairs = _int(groups[_PAIRS].sum())
    return ChunkLayout(
        storage_options=pairing.get("storage_options"),
        files=files,
        chunks=chunks,
        n_rows=_int(n_rows.item()),
        n_pairs=n_pairs,
        n_groups=groups.height,
        largest_group=_int(groups[_PAIRS].max()),
        digest=f"{n_pairs:x}-{lo:x}-{hi:x}",
        rows_read=sum(c.last_row - c.first_row + 1 for c in chunks),
    )


def _int(value: object) -> int:
    """A polars aggregate (an integer, or None for an empty column) as an int."""
    return int(cast(int, value or 0))


def read_chunk(scan: pl.LazyFrame, chunk: Chunk, group_by: str) -> pl.DataFrame:
    """The source rows of one chunk's groups: a slice of the file, filtered to those groups."""
    rows = scan.slice(chunk.first_row, chunk.last_row - chunk.first_row + 1)
    return rows.filter(pl.col(group_by).is_in(chunk.groups.implode())).drop(POS).collect()
