"""Reading input files lazily, one reader per format. Every file's schema is read first, so a
truncated file, a file that is not the format its name says, or files that disagree on their
columns are named before any work starts, not found by a crash half-way."""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache

import polars as pl

from pairwise_polars._errors import DataSourceError
from pairwise_polars.io._delimited import check_delimited
from pairwise_polars.io._json_lines import check_json_array, check_json_lines
from pairwise_polars.io._sources import (
    PARQUET_MAGIC,
    Format,
    PathLike,
    Source,
    input_files,
    looks_like,
    starts_with,
)
from pairwise_polars.io._stores import StorageOptions, scan_uri, unreadable_uri

NAMES: dict[Format, str] = {
    "parquet": "parquet",
    "csv": "CSV",
    "tsv": "TSV",
    "ndjson": "NDJSON (JSON Lines)",
    "json": "JSON",
}
_RENAME = {"CSV text": ".csv", "TSV text": ".tsv", "JSON text": ".json or .ndjson"}


def scan_data(
    data: PathLike | Sequence[PathLike], storage_options: StorageOptions | None = None
) -> pl.LazyFrame:
    """The files ``data`` names (a path, a folder, a glob or a list of them) as one LazyFrame,
    every file's schema read and checked now.

    Parquet is scanned as is (files must share one schema: names and types); CSV, TSV and
    NDJSON infer their types from the whole file, as ``pl.read_csv`` would with
    ``infer_schema_length=None``, and files that agree on their column names are combined with
    the types widened where they differ (an id read as integers in one file and as text in
    another becomes text).
    """
    return scan_source(input_files(data, storage_options))


def scan_source(source: Source) -> pl.LazyFrame:
    """:func:`scan_data` for files already expanded."""
    if source.remote:
        return _scan_objects(source)
    if source.format == "parquet":
        schemas = [(path, _parquet_schema(path)) for path in source.files]
        _check_same(schemas, types=True)
        return pl.scan_parquet(list(source.files))
    scans = [(path, _scan_text(path, source.format)) for path in source.files]
    schemas = [(path, _text_schema(path, scan, source.format)) for path, scan in scans]
    _check_same(schemas, types=False)
    frames = [scan for _, scan in scans]
    return frames[0] if len(frames) == 1 else pl.concat(frames, how="diagonal_relaxed")


def _scan_objects(source: Source) -> pl.LazyFrame:
    """Objects in a store: each one's schema read now (for parquet, only its footer)."""
    options = source.storage_options
    scans = [(path, scan_uri(path, options, source.format)) for path in source.files]
    schemas = []
    for path, scan in scans:
        try:
            schemas.append((path, scan.collect_schema()))
        except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
            raise unreadable_uri(path, options, exc) from exc
    _check_same(schemas, types=source.format == "parquet")
    if source.format == "parquet":
        return pl.scan_parquet(list(source.files), storage_options=dict(options or {}) or None)
    frames = [scan for _, scan in scans]
    return frames[0] if len(frames) == 1 else pl.concat(frames, how="diagonal_relaxed")


def _parquet_schema(path: str) -> pl.Schema:
    if not starts_with(path, PARQUET_MAGIC):
        kind = looks_like(path)
        rename = _RENAME.get(kind)
        advice = f" Name it {rename} to read it as such." if rename else ""
        raise DataSourceError(
            f"Cannot read {path!r} as parquet: it holds {kind}, not parquet data.{advice}"
        )
    try:
        return pl.Schema(pl.read_parquet_schema(path))
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise DataSourceError(
            f"Cannot read {path!r} as parquet: {_first_line(exc)}. The file is damaged or was "
            "not written to the end (a truncated copy, a writer that was killed): write it "
            "again, or leave it out."
        ) from exc


def _version(path: str) -> tuple[int, int, int]:
    """What tells one version of a file from another: its inode, modification time and size."""
    found = os.stat(path)
    return found.st_ino, found.st_mtime_ns, found.st_size


@lru_cache(maxsize=64)
def _checked_text(
    path: str, kind: Format, version: tuple[int, int, int]
) -> tuple[tuple[str, pl.DataType], ...]:
    """A CSV, TSV, NDJSON or JSON file's record checks (each reads the whole file), once per
    version of the file in a process: a chunked run scans its source again for every chunk (a
    Ray worker for every slice). Returns the CSV reader's type overrides."""
    if kind == "ndjson":
        check_json_lines(path, NAMES[kind])
        return ()
    if kind == "json":
        check_json_array(path, NAMES[kind])
        return ()
    separator = "\t" if kind == "tsv" else ","
    return tuple(check_delimited(path, separator, NAMES[kind]).items())


def _scan_text(path: str, kind: Format) -> pl.LazyFrame:
    if kind in ("csv", "tsv"):
        separator = "\t" if kind == "tsv" else ","
        types = dict(_checked_text(path, kind, _version(path)))
        return pl.scan_csv(
            path, separator=separator, infer_schema_length=None, schema_overrides=types or None
        )
    if kind == "ndjson":
        _checked_text(path, kind, _version(path))
        return pl.scan_ndjson(path, infer_schema_length=None)
    _checked_text(path, kind, _version(path))
    try:  # JSON (one array of records) has no lazy reader
        return pl.read_json(path, infer_schema_length=None).lazy()
    except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
        raise _unreadable(path, kind, exc) from exc


def _text_schema(path: str, scan: pl.LazyFrame, kind: Format) -> pl.Schema:
    try:
        return scan.collect_schema()
    except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
        raise _unreadable(path, kind, exc) from exc


def _unreadable(path: str, kind: Format, exc: BaseException) -> DataSourceError:
    found = looks_like(path)
    if found == "an empty file":
        return DataSourceError(f"Cannot read {path!r} as {NAMES[kind]}: the file is empty.")
    seen = "" if found in ("CSV text", "TSV text", "text") else f" (it holds {found})"
    return DataSourceError(f"Cannot read {path!r} as {NAMES[kind]}{seen}: {_first_line(exc)}.")


def _check_same(schemas: list[tuple[str, pl.Schema]], *, types: bool) -> None:
    """Every file's columns (and types, for parquet) against the first file's."""
    first_path, first = schemas[0]
    for path, schema in schemas[1:]:
        problems = []
        missing = [c for c in first if c not in schema]
        extra = [c for c in schema if c not in first]
        if missing:
            problems.append(f"it lacks columns {missing}")
        if extra:
            problems.append(f"it has columns {extra} that the first file lacks")
        if types:
            for name, dtype in first.items():
                if name in schema and schema[name] != dtype:
                    problems.append(
                        f"column {name!r} is {schema[name]} here and {dtype} in the first file"
                    )
        if problems:
            cast = " (e.g. cast the column to one type)" if types and not missing + extra else ""
            raise DataSourceError(
                f"{path!r} does not share the schema of {first_path!r} (the first file): "
                + "; ".join(problems)
                + f". Write every file with one schema{cast}, or leave this file out."
            )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__).rstrip(".")
