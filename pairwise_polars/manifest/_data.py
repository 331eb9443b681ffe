"""The data of a pairwise block: files (or object URIs) of response rows, and the non-secret
settings of the object store they live in."""

from __future__ import annotations

import glob
import os
from pathlib import Path
from typing import Any

from pairwise_polars._errors import DataSourceError
from pairwise_polars.io import FOLDER_FORMATS, SUFFIXES, input_files, is_secret_option, is_uri
from pairwise_polars.manifest._checks import Checker, at, describe, join
from pairwise_polars.manifest._yaml import Mapping, Sequence

_GLOB_CHARS = ("*", "?", "[")


def check_storage_options(check: Checker, raw: Any, line: int, path: str) -> dict[str, str] | None:
    """Non-secret object-store settings (endpoint, region, ...): a secret in a manifest is
    refused, since manifests are committed and shared; credentials come from the environment."""
    if not isinstance(raw, Mapping):
        check.add(line, path, f"expected a mapping of option names to strings, got {describe(raw)}")
        return None
    out: dict[str, str] = {}
    for key, item in raw.items():
        _, where = at(raw, str(key))
        if is_secret_option(str(key)):
            check.add(
                where,
                join(path, str(key)),
                "a manifest may not hold a secret: set it in the environment (e.g. "
                "AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AZURE_STORAGE_ACCOUNT_KEY) or pass it "
                "as storage_options from Python",
            )
        elif isinstance(item, (str, int, float, bool)):
            out[str(key)] = str(item).lower() if isinstance(item, bool) else str(item)
        else:
            check.add(where, join(path, str(key)), f"expected a string, got {describe(item)}")
    return out


def check_data(check: Checker, base: str, raw: Any, line: int, path: str) -> tuple[str, ...] | None:
    entries = check.strings(raw, line, path)
    if entries is None:
        return None
    lines = raw.lines if isinstance(raw, Sequence) else [line] * len(entries)
    resolved = []
    found_all = True
    for i, (entry, where) in enumerate(zip(entries, lines, strict=True)):
        key = path if isinstance(raw, str) else f"{path}[{i}]"
        if is_uri(entry):  # an object in a store: read when the target runs, not validated
            resolved.append(entry)
            continue
        full = os.path.join(base, entry)
        resolved.append(full)
        missing = _missing(full)
        if missing:
            check.add(where, key, missing)
            found_all = False
            continue
        try:
            input_files(full)  # a known format (nothing is read)
        except DataSourceError as exc:
            check.add(where, key, str(exc))
            found_all = False
    if found_all and len(resolved) > 1:
        try:
            input_files(resolved)  # one format for all
        except DataSourceError as exc:
            check.add(line, path, str(exc))
    return tuple(resolved)


def _missing(full: str) -> str | None:
    """Why a data path names no file (None when it names some)."""
    relative = "(paths are relative to the manifest's folder)"
    if any(c in full for c in _GLOB_CHARS):
        if not glob.glob(full, recursive=True):
            return f"no file matches the glob {full!r} {relative}"
        return None
    if Path(full).is_dir():
        if not any(
            p.suffix.lower() in SUFFIXES and SUFFIXES[p.suffix.lower()] in FOLDER_FORMATS
            for p in Path(full).rglob("*")
        ):
            return f"the folder {full!r} holds no .parquet, .csv, .tsv, .ndjson or .jsonl file"
        return None
    if not Path(full).is_file():
        return f"data file {full!r} does not exist {relative}"
    return None
