"""A parquet run's disparities, from the outcome columns its parts carry beside the scores
(each chunk reads them from its pairs' texts before the texts are left out)."""

from __future__ import annotations

import polars as pl

from pairwise_polars.outcome import disparities
from pairwise_polars.outcome._sided import SIDED
from pairwise_polars.summary import plain_rows
from pairwise_polars.summary._judge_rows import combined_only


def run_disparities(parts: pl.LazyFrame | None, group_by: str) -> pl.DataFrame | None:
    """:func:`~pairwise_polars.disparities` of the parts (``journal.scan_parts()``), or None
    when they carry no outcomes (parts written before outcomes were kept, or no part)."""
    if parts is None:
        return None
    if not set(SIDED) <= set(parts.collect_schema().names()):
        return None
    # Not a masked audit's rows; a panel's or repeats' member rows repeat each pair: its
    # combined rows count it once.
    return disparities(combined_only(plain_rows(parts)), group_by=group_by)
