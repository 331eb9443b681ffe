"""Normalise every accepted kind of input to one polars LazyFrame, and give results back in kind."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import polars as pl

from pairwise_polars._errors import DataSourceError
from pairwise_polars.io._readers import scan_data
from pairwise_polars.io._sources import PathLike, is_paths
from pairwise_polars.io._stores import StorageOptions

DataLike = pl.DataFrame | pl.LazyFrame | PathLike | Sequence[PathLike] | Any
"""A polars DataFrame or LazyFrame, a pyarrow Table, a pandas DataFrame, or file path(s): parquet,
CSV, TSV, NDJSON or JSON files, folders or globs."""


def to_lazy(
    data: DataLike, storage_options: StorageOptions | None = None
) -> tuple[pl.LazyFrame, bool]:
    """Return ``(lazy_frame, eager)``; ``eager`` says whether results should be collected.

    Paths and LazyFrames stay lazy (every file's schema is read now, so a file that cannot be
    read is named at once); in-memory frames are eager. The caller's object is never modified.
    """
    if isinstance(data, pl.LazyFrame):
        return data, False
    if isinstance(data, pl.DataFrame):
        return data.lazy(), True
    if is_paths(data):
        return scan_data(data, storage_options), False
    module = type(data).__module__.split(".")[0]
    if module == "pyarrow":
        return pl.DataFrame(pl.from_arrow(data)).lazy(), True
    if module == "pandas":
        return pl.from_pandas(cast(Any, data)).lazy(), True
    raise DataSourceError(
        f"Cannot read data of type {type(data).__name__}. Pass a polars DataFrame or LazyFrame, "
        "a pyarrow Table, a pandas DataFrame, or file path(s) (parquet, CSV, TSV, NDJSON or "
        "JSON), a folder or a glob."
    )


def open_data(data: DataLike, storage_options: StorageOptions | None) -> DataLike:
    """``data`` as an entry point passes it on: paths given with ``storage_options`` scanned
    now with them (a LazyFrame, as paths give anyway); anything else unchanged."""
    if storage_options is None or not is_paths(data):
        return data
    return scan_data(cast("PathLike | Sequence[PathLike]", data), storage_options)


def finish(frame: pl.LazyFrame, eager: bool) -> pl.DataFrame | pl.LazyFrame:
    """Give a result back in the kind the caller passed: collected when the input was eager."""
    return frame.collect() if eager else frame
