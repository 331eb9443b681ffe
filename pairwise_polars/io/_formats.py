"""Output formats: every frame written to a path takes its format from the path's suffix
(parquet, CSV, TSV, NDJSON/JSON Lines, JSON), the same names the readers accept, and an output
never takes the place of an input. Both are checked before any work starts."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import polars as pl

from pairwise_polars._errors import DataSourceError, OptionError
from pairwise_polars.io._outputs import output_error, write_parquet
from pairwise_polars.io._sources import KNOWN, SUFFIXES, Format, PathLike, input_files

_NESTED = (pl.List, pl.Array, pl.Struct)


def output_format(path: PathLike, *, what: str) -> Format:
    """The format ``path``'s suffix names (``.parquet``/``.pq``, ``.csv``, ``.tsv``,
    ``.ndjson``/``.jsonl``, ``.json``); any other suffix raises :class:`OptionError` naming
    ``what``, so nothing is written in a format the name does not say. A device or a pipe
    without a suffix (``/dev/stdout``) gets parquet.

    >>> output_format("scored.csv", what="the scored frame")
    'csv'
    """
    name = os.fspath(path).lower()
    for suffix, kind in SUFFIXES.items():
        if name.endswith(suffix):
            return kind
    target = Path(path)
    if target.exists() and not target.is_file() and not target.is_dir():
        return "parquet"
    raise OptionError(
        f"Cannot write {what} {os.fspath(path)!r}: its suffix picks the format, so name it {KNOWN}."
    )


def write_frame(
    frame: pl.DataFrame,
    path: PathLike,
    *,
    what: str,
    metadata: Mapping[str, str] | None = None,
) -> Path:
    """Write ``frame`` in the format of ``path``'s suffix (see :func:`output_format`), its
    folder created. ``metadata`` goes into a parquet file's footer (other formats have none).
    CSV and TSV cannot hold a nested column (a list, a struct): it is written as JSON text.
    An I/O failure is an :class:`~pairwise_polars.OutputError` naming ``what``."""
    kind = output_format(path, what=what)
    if kind == "parquet":
        return write_parquet(frame, path, what=what, metadata=metadata)
    target = Path(path)
    writers: dict[str, Callable[[Path], None]] = {
        "csv": lambda p: _flat(frame).write_csv(p),
        "tsv": lambda p: _flat(frame).write_csv(p, separator="\t"),
        "ndjson": frame.write_ndjson,
        "json": frame.write_json,
    }
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        writers[kind](target)
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise output_error(exc, target, what) from exc
    return target


def refuse_overwriting_inputs(
    outputs: Mapping[str, PathLike | None], inputs: PathLike | Sequence[PathLike]
) -> None:
    """Raise :class:`OptionError` when an output path is one of the input files (``inputs``:
    paths, folders, globs) or another output's path: writing it would destroy the data being
    read, or one output would replace another. ``outputs`` maps what each output is to its
    path (``{"the pair frame (-o)": "pairs.csv"}``; ``None`` for one not asked for)."""
    try:
        files = {_same(f) for f in input_files(inputs).files}
    except DataSourceError:  # the command names a missing or unreadable input itself
        files = set()
    seen: dict[str, str] = {}
    for what, path in outputs.items():
        if path is None:
            continue
        key = _same(path)
        if key in files:
            raise OptionError(
                f"Cannot write {what} {os.fspath(path)!r}: it is also an input, and writing "
                "it would overwrite the data being read. Name another output file."
            )
        if key in seen and seen[key] != what:
            raise OptionError(
                f"Cannot write {what} {os.fspath(path)!r}: {seen[key]} is the same file, and "
                "one would overwrite the other. Name two files."
            )
        seen[key] = what


def _same(path: PathLike) -> str:
    return str(Path(path).expanduser().resolve())


def _flat(frame: pl.DataFrame) -> pl.DataFrame:
    """Nested columns as JSON text (CSV and TSV have no lists or structs)."""
    nested = [name for name, dtype in frame.schema.items() if isinstance(dtype, _NESTED)]
    if not nested:
        return frame
    return frame.with_columns(
        pl.struct(pl.col(name).alias("v"))
        .struct.json_encode()
        .str.strip_prefix('{"v":')
        .str.strip_suffix("}")
        .alias(name)
        for name in nested
    )
