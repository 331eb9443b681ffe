"""An NDJSON file (or a JSON array of records) checked for records that give a key twice before
polars reads it: polars keeps one of the values silently (``{"output": "b", "output": "c"}``
reads as one output). Here such a record is a named error with the file, the line (for an
array, also the record's place), the key and the fix.

Parsing every line in Python would cost about three times polars' own read, so polars first
finds the lines that may repeat a key, in one pass over the lines: a line whose count of keys
(every ``"...":``) exceeds the count of distinct known keys it holds (the first record's keys,
at any depth, each written as JSON writes it). A record without a repeated key whose keys are all
known counts the same; a repeated key always counts more. Only those lines are parsed, with
Python's json module, to confirm (a list of objects, a key the first record lacks or a key
written with an escape makes a line a suspect too)."""

from __future__ import annotations

import json
import re

import polars as pl

from pairwise_polars._errors import DataSourceError

_LINE = "line"
_SPACE = " \t\r\n"
_ENDS = r'"\s*:'  # how every key ends (a string in a value ends so only as \":, an escape)


class _Repeated(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def check_json_lines(path: str, name: str) -> None:
    """Raise DataSourceError when a record of the NDJSON file ``path`` gives a key more than
    once (at any depth). Lines that are not JSON are left to the reader to name."""
    for number, line in _suspects(path, _first_keys(path)).iter_rows():
        key = _repeated_key(line)
        if key is not None:
            raise DataSourceError(
                f"Cannot read {path!r} as {name}: the record on line {number} gives the key "
                f"{key!r} more than once, and only one of its values would be read. Give every "
                "key of a record once (rename or drop the extra one)."
            )


def check_json_array(path: str, name: str) -> None:
    """As :func:`check_json_lines` for a JSON file holding one array of records, each record
    parsed by Python's json (polars reads such a file whole, in memory, anyway). A file that is
    not an array of JSON values is left to the reader to name."""
    with open(path, encoding="utf-8") as handle:
        try:
            text = handle.read()
        except UnicodeDecodeError:
            return
    decoder = json.JSONDecoder(object_pairs_hook=_unique)
    at = _skip_space(text, 0)
    if not text.startswith("[", at):
        return
    at, number = _skip_space(text, at + 1), 0
    while at < len(text) and text[at] != "]":
        number += 1
        try:
            _, end = decoder.raw_decode(text, at)
        except _Repeated as repeated:
            raise DataSourceError(
                f"Cannot read {path!r} as {name}: record {number} of the array (from line "
                f"{text.count(chr(10), 0, at) + 1}) gives the key {repeated.key!r} more than "
                "once, and only one of its values would be read. Give every key of a record "
                "once (rename or drop the extra one)."
            ) from None
        except ValueError:  # not JSON: the reader names it
            return
        at = _skip_space(text, end)
        if text.startswith(",", at):
            at = _skip_space(text, at + 1)


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in _SPACE:
        at += 1
    return at


def _first_keys(path: str) -> set[str]:
    """The keys of the file's first record, at any depth (none when it is not JSON)."""
    keys: set[str] = set()

    def collect(pairs: list[tuple[str, object]]) -> None:
        keys.update(key for key, _ in pairs)

    with open(path, "rb") as handle:
        for line in handle:
            if line.strip():
                try:
                    json.loads(line, object_pairs_hook=collect)
                except ValueError:
                    return set()
                return keys
    return keys


def _suspects(path: str, known: set[str]) -> pl.DataFrame:
    """The lines (number, text) that may repeat a key, in file order."""
    lines = pl.scan_csv(  # one column of raw lines: no quoting, a separator JSON text never has
        path,
        has_header=False,
        separator="\x1f",
        quote_char=None,
        schema={_LINE: pl.String},
        truncate_ragged_lines=True,
    )
    line = pl.col(_LINE)
    distinct: pl.Expr = pl.lit(0, pl.UInt32)
    if known:
        # After "{" or ",", a quote opens a key: a quote inside a string is escaped.
        written = "|".join(re.escape(json.dumps(k, ensure_ascii=False)) for k in sorted(known))
        distinct = (
            line.str.extract_all(rf"[{{,]\s*(?:{written})\s*:")
            .list.eval(
                pl.element().str.strip_chars_start("{," + _SPACE).str.strip_chars_end(":" + _SPACE)
            )
            .list.n_unique()
        )
    return (
        lines.with_row_index("number", offset=1)
        .filter(line.str.count_matches(_ENDS) > distinct)
        .select("number", _LINE)
        .collect(engine="streaming")
    )


def _repeated_key(line: str) -> str | None:
    """The first key a record gives twice (in any of its objects), or None."""
    try:
        json.loads(line, object_pairs_hook=_unique)
    except _Repeated as repeated:
        return repeated.key
    except ValueError:  # not JSON: the reader names it
        return None
    return None


def _unique(pairs: list[tuple[str, object]]) -> dict[str, object]:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise _Repeated(key)
        seen.add(key)
    return dict(pairs)
