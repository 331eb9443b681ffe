"""A parquet run's disparities, from the outcome columns its parts carry beside the scores
(each chunk reads them from its pairs' texts before the texts are left out)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import polars as pl

from pairwise_polars.outcome import disparities
from pairwise_polars.outcome._sided import SIDED


def run_disparities(parts: Sequence[Path], group_by: str) -> pl.DataFrame | None:
    """:func:`~pairwise_polars.disparities` of the parts, or None when they carry no outcomes
    (parts written before outcomes were kept, or an empty run)."""
    if not parts:
        return None
    scan = pl.scan_parquet(list(parts))
    if not set(SIDED) <= set(scan.collect_schema().names()):
        return None
    return disparities(scan, group_by=group_by)
