"""Input files: a file, a folder, a glob or a list of them, expanded and checked before anything
is read, each file's format told by its name (or, for parquet, by its first bytes)."""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pairwise_polars._errors import DataSourceError
from pairwise_polars.io._stores import StorageOptions, checked_options, expand_uri, is_uri

PathLike = str | os.PathLike[str]
"""A path as a string or a path object."""
Format = Literal["parquet", "csv", "tsv", "ndjson", "json"]

SUFFIXES: dict[str, Format] = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".tsv": "tsv",
    ".ndjson": "ndjson",
    ".jsonl": "ndjson",
    ".json": "json",
}
"""File name endings and the format they name."""
FOLDER_FORMATS: tuple[Format, ...] = ("parquet", "csv", "tsv", "ndjson")
"""Formats a folder is searched for (a ``.json`` file in a folder is usually metadata, such as a
run's ``run.json``, so folders are not searched for JSON)."""
KNOWN = ".parquet, .csv, .tsv, .ndjson/.jsonl or .json"
_GLOB_CHARS = ("*", "?", "[")
PARQUET_MAGIC = b"PAR1"
_SCORED, _SUMMARY = "scored.parquet", "summary.parquet"  # what every run writes to its folder
RESULTS_FOLDER = "pairwise-results"
"""A manifest run's default output folder: a data folder's search passes over any folder of
this name, so a manifest whose ``data:`` is its own folder reads the same files on a rerun."""


@dataclass(frozen=True)
class Source:
    """Input files of one format, in order, and how the caller named them (for messages)."""

    files: tuple[str, ...]
    format: Format
    shown: str
    storage_options: StorageOptions | None = field(default=None, repr=False, compare=False)
    """How to reach objects in a store (never recorded: it may hold credentials)."""

    def resolved(self) -> Source:
        """The same files as absolute paths (object URIs as they are)."""
        files = tuple(f if is_uri(f) else str(Path(f).resolve()) for f in self.files)
        return Source(files, self.format, self.shown, self.storage_options)

    @property
    def remote(self) -> bool:
        """Whether the files are objects in a store."""
        return any(is_uri(f) for f in self.files)


def is_paths(data: Any) -> bool:  # object URIs are strings too
    """Whether ``data`` names files: a path, or a non-empty list of paths."""
    if isinstance(data, (str, os.PathLike)):
        return True
    return (
        isinstance(data, Sequence)
        and not isinstance(data, (bytes, bytearray))
        and bool(data)
        and all(isinstance(p, (str, os.PathLike)) for p in data)
    )


def input_files(
    data: PathLike | Sequence[PathLike], storage_options: StorageOptions | None = None
) -> Source:
    """Expand paths, folders and globs into the files they name; all must share one format.

    A folder gives its parquet, CSV, TSV and NDJSON files (searched recursively, hidden files
    and names starting with ``_`` left out); a glob gives the files it matches, sorted. An object
    URI (``s3://bucket/runs/*.parquet``, ``gs://``, ``az://``, ``hf://``, ``https://``) is read
    through polars with ``storage_options``; a glob of parquet objects is expanded there.
    """
    options = checked_options(storage_options)
    items = [data] if isinstance(data, (str, os.PathLike)) else list(data)
    if not items:
        raise DataSourceError("No input file given: pass a file, a folder, a glob or a list.")
    shown = os.fspath(items[0]) if len(items) == 1 else f"{len(items)} paths"
    named: list[str] = []
    for raw in items:
        path = os.fspath(raw)
        named.extend([path] if is_uri(path) else _expand(path))
    formats: dict[Format, list[str]] = {}
    for path in named:
        kind = uri_format(path) if is_uri(path) else file_format(path)
        formats.setdefault(kind, []).append(path)
    if len(formats) > 1:
        found = ", ".join(
            f"{len(paths)} {kind} (e.g. {paths[0]!r})" for kind, paths in formats.items()
        )
        raise DataSourceError(
            f"The input mixes file formats: {found}. Pass files of one format (e.g. a glob "
            "such as 'runs/*.parquet'), or convert them to one."
        )
    kind = next(iter(formats))
    files = [f for path in named for f in _objects(path, options, kind)]
    return Source(tuple(files), kind, shown, options)


def _objects(path: str, options: StorageOptions | None, kind: Format) -> list[str]:
    return expand_uri(path, options, kind == "parquet") if is_uri(path) else [path]


def uri_format(uri: str) -> Format:
    """The format an object URI's name (or its glob's) says; parquet when it says none."""
    name = uri.split("?", 1)[0].lower()
    for suffix, kind in SUFFIXES.items():
        if name.endswith(suffix):
            return kind
    return "parquet"


def file_format(path: str) -> Format:
    """The format a file's name says; a name without a known ending is parquet only if the file
    starts like one (as parquet was the only format read before)."""
    lower = path.lower()
    for suffix, kind in SUFFIXES.items():
        if lower.endswith(suffix):
            return kind
    if starts_with(path, PARQUET_MAGIC):
        return "parquet"
    raise DataSourceError(
        f"Cannot tell the format of {path!r} from its name: name it {KNOWN} (parquet files are "
        "also recognised by their content)."
    )


def _expand(path: str) -> list[str]:
    if any(c in path for c in _GLOB_CHARS):
        found = sorted(p for p in glob.glob(path, recursive=True) if Path(p).is_file())
        if not found:
            raise DataSourceError(f"No file matches the glob {path!r}.")
        return found
    if Path(path).is_dir():
        found = sorted(
            str(p)
            for p in Path(path).rglob("*")
            if p.is_file()
            and not p.name.startswith((".", "_"))
            and SUFFIXES.get(p.suffix.lower()) in FOLDER_FORMATS
            and RESULTS_FOLDER not in p.relative_to(path).parts[:-1]
        )
        if not found:
            raise DataSourceError(
                f"The folder {path!r} holds no .parquet, .csv, .tsv, .ndjson or .jsonl file."
            )
        _refuse_run_outputs(path, found)
        return found
    if Path(path).is_file():
        return [path]
    raise DataSourceError(
        f"Input file {path!r} does not exist. Check the path, or pass a folder or a glob such "
        "as 'runs/*.parquet'."
    )


def _refuse_run_outputs(folder: str, found: list[str]) -> None:
    """Raise DataSourceError when ``folder`` holds a run's output folder (its scored and summary
    frames): a rerun would read the last run's outputs as responses."""
    names = {(str(Path(f).parent), Path(f).name) for f in found}
    outputs = [p for p, name in names if name == _SCORED and (p, _SUMMARY) in names]
    if outputs:
        raise DataSourceError(
            f"The folder {folder!r} holds {min(outputs)!r}, the output folder of a run (its "
            f"{_SCORED} and {_SUMMARY}): read as input, the run's outputs would be mixed into "
            "its data. Point data at the input files (e.g. a glob such as "
            f"{os.path.join(folder, '*.csv')!r}), or write the outputs outside the data folder "
            "(run -o)."
        )


def starts_with(path: str, magic: bytes) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(len(magic)) == magic
    except OSError:
        return False


def looks_like(path: str) -> str:
    """What a file that failed to read looks like, for the message: ``"parquet"``, ``"JSON"``,
    ``"text"`` or ``"binary data"``."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(512)
    except OSError:
        return "an unreadable file"
    if head.startswith(PARQUET_MAGIC):
        return "a parquet file"
    if not head:
        return "an empty file"
    stripped = head.lstrip()
    if stripped[:1] in (b"{", b"["):
        return "JSON text"
    if b"\x00" in head:
        return "binary data"
    text = head.decode("utf-8", errors="ignore")
    first = text.splitlines()[0] if text.splitlines() else ""
    if "," in first:
        return "CSV text"
    if "\t" in first:
        return "TSV text"
    return "text"


def source_files(
    source: object,
    *,
    caller: str = "score_parquet",
    storage_options: StorageOptions | None = None,
) -> Source:
    """The input files of a chunked run, as absolute paths (a frame in memory is refused)."""
    if not is_paths(source):
        raise DataSourceError(
            f"{caller} reads files (parquet, CSV, TSV or NDJSON); got "
            f"{type(source).__name__}. Pass a file, a folder, a glob such as 'runs/*.parquet', "
            "or a list of them. For a frame in memory use score(...), or write it first with "
            "frame.write_parquet(path)."
        )
    return input_files(source, storage_options).resolved()  # type: ignore[arg-type]
