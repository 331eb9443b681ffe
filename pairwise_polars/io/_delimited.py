"""A CSV or TSV file checked record by record before polars reads it: polars would guess its way
past a malformed file (null-fill a short row, rename a repeated header, stop at an unbalanced
quote with an error that names no line). Here each of those is a named error with the file, the
line and the fix. One streaming pass with Python's C csv reader; nothing is kept."""

from __future__ import annotations

import csv
import io
from collections import Counter

import polars as pl

from pairwise_polars._errors import DataSourceError
from pairwise_polars.io._sources import PARQUET_MAGIC, starts_with
from pairwise_polars.io._stores import PAIR_ID


def check_delimited(path: str, separator: str, name: str) -> dict[str, pl.DataType]:
    """Raise DataSourceError for a file that is not well-formed ``name`` (CSV or TSV) text:
    parquet data, bytes that are not UTF-8, a repeated or empty header, a record with more or
    fewer fields than the header, an unbalanced quote.

    Returns the types to read columns as where inference would fail: a ``pair_id`` that holds
    only unsigned 64-bit integers (the package's pair ids, past the signed range that older
    polars infers) is read as ``UInt64``."""
    if starts_with(path, PARQUET_MAGIC):
        raise DataSourceError(
            f"Cannot read {path!r} as {name}: it holds parquet data. Name it .parquet to read "
            "it as such."
        )
    # A response may be long: the csv module's default cap on a field is 128 KiB.
    csv.field_size_limit(max(csv.field_size_limit(), 2**30))
    with open(path, "rb") as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")
        reader = csv.reader(text, delimiter=separator, strict=True)
        try:
            start = 1
            header = next(reader, None)
            if header is None:
                return {}
            _check_header(path, name, header)
            start = reader.line_num + 1
            ids = header.index(PAIR_ID) if PAIR_ID in header else -1
            unsigned = ids >= 0
            for record in reader:
                if len(record) != len(header) and record:
                    _ragged(path, name, reader.line_num, len(record), len(header), separator)
                if unsigned and record:
                    unsigned = _is_u64(record[ids])
                start = reader.line_num + 1
        except UnicodeDecodeError:
            line, byte = _first_undecodable(path)
            raise DataSourceError(
                f"Cannot read {path!r} as {name}: line {line} is not UTF-8 text (byte {byte!r}). "
                "Save the file as UTF-8 (e.g. iconv -f latin1 -t utf-8)."
            ) from None
        except csv.Error as exc:
            raise DataSourceError(
                f"Cannot read {path!r} as {name}: the record starting on line {start}: {exc} "
                "(an unbalanced quote?). Quote every field that holds a quote, a separator or a "
                'line break, and double the quotes inside it ("").'
            ) from None
    return {PAIR_ID: pl.UInt64()} if unsigned else {}


_U64_MAX = 2**64 - 1


def _is_u64(value: str) -> bool:
    return value == "" or (value.isascii() and value.isdigit() and int(value) <= _U64_MAX)


def _check_header(path: str, name: str, header: list[str]) -> None:
    repeated = [column for column, n in Counter(header).items() if n > 1]
    if repeated:
        raise DataSourceError(
            f"Cannot read {path!r} as {name}: the header names {repeated} more than once (line "
            "1). Give every column its own name."
        )
    if any(not column.strip() for column in header):
        raise DataSourceError(
            f"Cannot read {path!r} as {name}: the header has an empty column name (line 1). "
            "Give every column a name."
        )


def _ragged(path: str, name: str, line: int, got: int, expected: int, separator: str) -> None:
    shown = "a tab" if separator == "\t" else repr(separator)
    raise DataSourceError(
        f"Cannot read {path!r} as {name}: the record ending on line {line} has {got} fields, "
        f"the header {expected}. A field holding {shown}, a quote or a line break must be "
        "quoted; a row must give every column (empty fields are fine)."
    )


def _first_undecodable(path: str) -> tuple[int, bytes]:
    """The line and byte where UTF-8 decoding first fails."""
    with open(path, "rb") as raw:
        for number, line in enumerate(raw, start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as exc:
                return number, line[exc.start : exc.start + 1]
    return 0, b""
