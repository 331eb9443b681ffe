"""A parquet run's disparities, from the outcome columns its parts carry beside the scores
(each chunk reads them from its pairs' texts before the texts are left out)."""

from __future__ import annotations

import polars as pl

from pairwise_polars.outcome import disparities
from pairwise_polars.outcome._sided import SIDED
from pairwise_polars.summary import plain_rows


def run_disparities(parts: pl.LazyFrame | None, group_by: str) -> pl.DataFrame | None:
    """:func:`~pairwise_polars.disparities` of the parts (``journal.scan_parts()``), or None
    when they carry no outcomes (parts written before outcomes were kept, or no part)."""
    if parts is None:
        return None
    if not set(SIDED) <= set(parts.collect_schema().names()):
        return None
    return disparities(plain_rows(parts), group_by=group_by)  # not a masked audit's rows
