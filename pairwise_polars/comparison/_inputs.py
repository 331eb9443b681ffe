"""The two runs of a comparison, read lazily: frames, scored files, or run directories."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from pairwise_polars.io import DataLike, to_lazy
from pairwise_polars.summary import plain_rows

SCORED_PARTS = ("scored", "part-*.parquet")
"""Where :func:`~pairwise_polars.score_parquet` writes its scored parts in a destination."""
SCORED_FILE = "scored.parquet"
"""The scored frame of a manifest run's target folder (``run -o OUTPUT``: OUTPUT/<target>/)."""


def scan_run(run: DataLike) -> pl.LazyFrame:
    """A scored run as a LazyFrame, nothing read but schemas: a frame as it is; a
    :func:`~pairwise_polars.score_parquet` destination (its ``scored/`` parts); a manifest
    target's output folder (its ``scored.parquet``); any other scored file, folder or glob.
    A masked audit's rows (``view == "masked"``) are left out: they measure the judge."""
    return plain_rows(_scan(run))


def _scan(run: DataLike) -> pl.LazyFrame:
    if isinstance(run, (str, os.PathLike)) and Path(run).is_dir():
        folder = Path(run)
        if (folder / SCORED_PARTS[0]).is_dir():
            return to_lazy(str(folder.joinpath(*SCORED_PARTS)))[0]
        if (folder / SCORED_FILE).is_file():
            return to_lazy(str(folder / SCORED_FILE))[0]
    return to_lazy(run)[0]
