"""Duplicate judgements: a scored frame with the same (pair, metric, view) row twice counts that
judgement twice, and narrows every interval as if it were new evidence (twenty copies of a
failing run pass). ``aggregate`` and ``summarize`` refuse such a frame and name the rows."""

from __future__ import annotations

import operator
from functools import reduce

import numpy as np
import polars as pl

from pairwise_polars._errors import ScoreError

VIEW = "view"
"""The column that tells views of one judgement apart (order, judge of a panel, masked, repeat),
when the scored frame has it."""
_COUNT = "__pairwise_copies"
_HASH = "__pairwise_judgement_hash"


def judgement_keys(names: list[str]) -> list[str]:
    """The columns that identify one judgement in a scored frame: ``pair_id`` and ``metric``,
    and ``view`` when present; empty when the frame has no ``pair_id`` (it cannot be checked)."""
    if "pair_id" not in names or "metric" not in names:
        return []
    return ["pair_id", "metric", *([VIEW] if VIEW in names else [])]


def refuse_duplicates(frame: pl.LazyFrame) -> None:
    """:class:`ScoreError` naming the duplicated judgements, when ``frame`` has any."""
    keys = judgement_keys(frame.collect_schema().names())
    if not keys:
        return
    # First one 64-bit hash per row: copies hash alike, so only rows whose hash repeats can be
    # copies (none, as a rule), and only those are grouped by their keys. Grouping every row
    # by the keys themselves (a text among them) took twice the time and memory; a repeated
    # hash is found by sorting the hashes (8 bytes a row), cheaper than grouping by them. The
    # row's hash is its keys' hashes (each with a seed of its own) combined by exclusive or:
    # a third of the time of hashing a struct of the keys.
    judgement = reduce(operator.xor, (pl.col(k).hash(seed=i) for i, k in enumerate(keys)))
    hashes = np.sort(frame.select(judgement).collect().to_series().to_numpy())
    repeated_hashes = np.unique(hashes[1:][hashes[1:] == hashes[:-1]])
    if repeated_hashes.size == 0:
        return
    repeated = pl.DataFrame({_HASH: repeated_hashes})
    copies = (
        frame.filter(judgement.is_in(repeated[_HASH].implode()))
        .group_by(keys)
        .agg(pl.len().alias(_COUNT))
        .filter(pl.col(_COUNT) > 1)
        .sort(_COUNT, *keys, descending=[True, *([False] * len(keys))], nulls_last=True)
        .collect()
    )
    if copies.is_empty():
        return
    extra = int((copies[_COUNT] - 1).sum())
    shown = "; ".join(
        ", ".join(f"{k}={row[k]!r}" for k in keys) + f" ({row[_COUNT]} rows)"
        for row in copies.head(5).iter_rows(named=True)
    )
    more = f" and {copies.height - 5} more" if copies.height > 5 else ""
    raise ScoreError(
        f"The scored frame holds {copies.height} judgements more than once ({extra} extra rows "
        f"by {', '.join(keys)}): {shown}{more}. Each copy would count as new evidence and "
        "narrow the intervals. Keep one row per judgement: scored.unique(subset="
        f"{keys!r})."
    )
