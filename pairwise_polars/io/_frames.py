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
        return as_text(data), False
    if isinstance(data, pl.DataFrame):
        return as_text(data.lazy()), True
    if is_paths(data):
        return as_text(scan_data(data, storage_options)), False
    module = type(data).__module__.split(".")[0]
    if module == "pyarrow":
        return as_text(pl.DataFrame(pl.from_arrow(data)).lazy()), True
    if module == "pandas":
        return as_text(_from_pandas(data).lazy()), True
    raise DataSourceError(
        f"Cannot read data of type {type(data).__name__}. Pass a polars DataFrame or LazyFrame, "
        "a pyarrow Table, a pandas DataFrame, or file path(s) (parquet, CSV, TSV, NDJSON or "
        "JSON), a folder or a glob."
    )


def as_text(frame: pl.LazyFrame) -> pl.LazyFrame:
    """Categorical and enum columns (a pandas category, a dictionary-encoded arrow or parquet
    column) as plain strings: texts from several sources then join and concatenate alike."""
    schema = frame.collect_schema()
    coded = [name for name, dtype in schema.items() if isinstance(dtype, (pl.Categorical, pl.Enum))]
    return frame.with_columns(pl.col(coded).cast(pl.String)) if coded else frame


def _from_pandas(data: Any) -> pl.DataFrame:
    try:
        return pl.from_pandas(data)
    except Exception as exc:  # pyarrow's ArrowInvalid / ArrowTypeError: find the column
        for name in data.columns:
            try:
                pl.from_pandas(data[[name]])
            except Exception:
                kinds = sorted({type(v).__name__ for v in data[name].dropna()})
                raise DataSourceError(
                    f"Cannot read the pandas column {name!r}: it mixes values of types {kinds}. "
                    f"Give it one type, e.g. data[{name!r}] = data[{name!r}].astype(str)."
                ) from exc
        raise DataSourceError(f"Cannot read the pandas frame: {exc}") from exc


def open_data(data: DataLike, storage_options: StorageOptions | None) -> DataLike:
    """``data`` as an entry point passes it on: paths given with ``storage_options`` scanned
    now with them (a LazyFrame, as paths give anyway); anything else unchanged."""
    if storage_options is None or not is_paths(data):
        return data
    return scan_data(cast("PathLike | Sequence[PathLike]", data), storage_options)


def finish(frame: pl.LazyFrame, eager: bool) -> pl.DataFrame | pl.LazyFrame:
    """Give a result back in the kind the caller passed: collected when the input was eager."""
    return frame.collect() if eager else frame
