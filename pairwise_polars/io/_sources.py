"""Input files: a file, a folder, a glob or a list of them, expanded and checked before anything
is read, each file's format told by its name (or, for parquet, by its first bytes)."""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pairwise_polars._errors import DataSourceError

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


@dataclass(frozen=True)
class Source:
    """Input files of one format, in order, and how the caller named them (for messages)."""

    files: tuple[str, ...]
    format: Format
    shown: str

    def resolved(self) -> Source:
        """The same files as absolute paths."""
        return Source(tuple(str(Path(f).resolve()) for f in self.files), self.format, self.shown)


def is_paths(data: Any) -> bool:
    """Whether ``data`` names files: a path, or a non-empty list of paths."""
    if isinstance(data, (str, os.PathLike)):
        return True
    return (
        isinstance(data, Sequence)
        and not isinstance(data, (bytes, bytearray))
        and bool(data)
        and all(isinstance(p, (str, os.PathLike)) for p in data)
    )


def input_files(data: PathLike | Sequence[PathLike]) -> Source:
    """Expand paths, folders and globs into the files they name; all must share one format.

    A folder gives its parquet, CSV, TSV and NDJSON files (searched recursively, hidden files
    and names starting with ``_`` left out); a glob gives the files it matches, sorted.
    """
    items = [data] if isinstance(data, (str, os.PathLike)) else list(data)
    if not items:
        raise DataSourceError("No input file given: pass a file, a folder, a glob or a list.")
    shown = os.fspath(items[0]) if len(items) == 1 else f"{len(items)} paths"
    files: list[str] = []
    for raw in items:
        files.extend(_expand(os.fspath(raw)))
    formats: dict[Format, list[str]] = {}
    for path in files:
        formats.setdefault(file_format(path), []).append(path)
    if len(formats) > 1:
        found = ", ".join(
            f"{len(paths)} {kind} (e.g. {paths[0]!r})" for kind, paths in formats.items()
        )
        raise DataSourceError(
            f"The input mixes file formats: {found}. Pass files of one format (e.g. a glob "
            "such as 'runs/*.parquet'), or convert them to one."
        )
    return Source(tuple(files), next(iter(formats)), shown)


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
        )
        if not found:
            raise DataSourceError(
                f"The folder {path!r} holds no .parquet, .csv, .tsv, .ndjson or .jsonl file."
            )
        return found
    if Path(path).is_file():
        return [path]
    raise DataSourceError(
        f"Input file {path!r} does not exist. Check the path, or pass a folder or a glob such "
        "as 'runs/*.parquet'."
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


def source_files(source: object, *, caller: str = "score_parquet") -> Source:
    """The input files of a chunked run, as absolute paths (a frame in memory is refused)."""
    if not is_paths(source):
        raise DataSourceError(
            f"{caller} reads files (parquet, CSV, TSV or NDJSON); got "
            f"{type(source).__name__}. Pass a file, a folder, a glob such as 'runs/*.parquet', "
            "or a list of them. For a frame in memory use score(...), or write it first with "
            "frame.write_parquet(path)."
        )
    return input_files(source).resolved()  # type: ignore[arg-type]
