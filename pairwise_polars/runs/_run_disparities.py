"""A parquet run's disparities, from the outcome columns its parts carry beside the scores
(each chunk reads them from its pairs' texts before the texts are left out)."""

from __future__ import annotations

import polars as pl

from pairwise_polars.outcome import disparities
from pairwise_polars.outcome._sided import SIDED, SIDED_ERRORS
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


def outcome_errors(parts: pl.LazyFrame | None) -> int:
    """Responses of the run's pairs whose outcome the judge failed to read (each side of each
    pair once; 0 when the heuristic read them)."""
    if parts is None or not set(SIDED_ERRORS) <= set(parts.collect_schema().names()):
        return 0
    counted = parts.unique("pair_id").select(
        pl.sum_horizontal(pl.col(c).is_not_null().sum() for c in SIDED_ERRORS)
    )
    return int(counted.collect().item())
