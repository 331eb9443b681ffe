"""Column names of the input, and the checks that the input has them with usable types."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Literal, TypedDict

import polars as pl

from pairwise_polars._errors import ColumnError, Fix

ROW_INDEX = "__pairwise_row_index"
"""Name of the helper column holding a row's position when the data has no id column."""


@dataclass(frozen=True, kw_only=True)
class Columns:
    """Names of the input columns. Every function that reads response rows takes them as
    ``columns=Columns(...)`` or as the same keywords (keywords win over ``columns``).

    >>> Columns(group_by="prompt_id", output="response").output
    'response'
    """

    group_by: str = "group_id"
    role: str = "role"
    dimension: str = "dimension"
    attribute: str = "attribute"
    input: str = "input"
    output: str = "output"
    id: str = "id"

    @classmethod
    def of(
        cls,
        columns: Columns | None = None,
        names: Mapping[str, Any] | None = None,
        *,
        caller: str = "form_pairs",
    ) -> Columns:
        """``columns`` (default: the default names) with the keywords in ``names`` applied;
        an unknown keyword is a TypeError naming the ones that exist."""
        names = dict(names or {})
        known = [f.name for f in fields(cls)]
        unknown = [n for n in names if n not in known]
        if unknown:
            raise unknown_keyword(caller, unknown[0], known)
        return replace(columns or cls(), **names)


def unknown_keyword(caller: str, name: str, known: Sequence[str]) -> TypeError:
    """The error for a keyword ``caller`` does not take: the nearest of ``known``, if any, and
    the column keywords."""
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else "."
    return TypeError(
        f"{caller}() got an unexpected keyword argument {name!r}{hint} Column keywords: "
        f"{', '.join(f.name for f in fields(Columns))}."
    )


class ColumnNames(TypedDict, total=False):
    """The column keywords (the fields of :class:`Columns`), for ``**names`` parameters."""

    group_by: str
    role: str
    dimension: str
    attribute: str
    input: str
    output: str
    id: str


OnInvalid = Literal["raise", "skip"]


class PairingOptions(ColumnNames, total=False):
    """How rows form pairs, beside the strategy: the keywords :func:`form_pairs` takes and
    that :func:`score`, :func:`plan` and :func:`score_parquet` pass on to it."""

    columns: Columns
    reference: str
    poles: Sequence[str]
    control: str
    on_invalid: OnInvalid
    storage_options: Mapping[str, str] | None
    """How to reach object URIs (``s3://``, ``gs://``, ...): passed to polars, never recorded."""


PAIR_FIELDS = ("group_by", "role", "input", "output")
KEY_FIELDS = ("group_by", "role")
DEFAULT_DIMENSION = "dimension"
"""The dimension column is optional under its default name (no column: no dimension, and the
summary is overall only); a name the caller chose must exist."""

_PURPOSE = {
    "group_by": "the group of rows sent for the same request",
    "role": "each row's place in its group",
    "dimension": "the attribute under test",
    "input": "the prompt",
    "output": "the response to judge",
}
_STRING_TYPES = (pl.String, pl.Categorical, pl.Enum, pl.Null)


def _is_string(dtype: pl.DataType) -> bool:
    return isinstance(dtype, _STRING_TYPES) or dtype == pl.String


def check_columns(
    schema: pl.Schema,
    columns: Columns,
    *,
    required: tuple[str, ...] = PAIR_FIELDS,
    caller: str = "form_pairs",
) -> None:
    """Raise one ColumnError listing every missing or mistyped column, with the fix."""
    problems: list[str] = []
    fixes_named: list[str] = []
    mistyped: list[str] = []
    fields = list(required)
    if columns.dimension != DEFAULT_DIMENSION or columns.dimension in schema:
        fields.append("dimension")
    for field in fields:
        name = getattr(columns, field)
        if name not in schema:
            problems.append(f"missing column {name!r} ({_PURPOSE[field]})")
            fixes_named.append(field)
        elif field != "group_by" and not _is_string(schema[name]):
            mistyped.append(name)
    if columns.attribute in schema and not _is_string(schema[columns.attribute]):
        mistyped.append(columns.attribute)
    problems += [f"column {n!r} has type {schema[n]}, expected a string column" for n in mistyped]
    group = columns.group_by
    if group in schema and isinstance(schema[group], (pl.List, pl.Struct, pl.Array)):
        problems.append(f"column {group!r} has type {schema[group]}, expected a scalar key")
    if not problems:
        return
    detail = "; ".join(problems) + f". The data has columns: {list(schema.names())}."
    detail = detail[0].upper() + detail[1:]
    advice = ""
    fixes = []
    if fixes_named:
        advice += f" Map your column names with keywords, e.g. {caller}(data, "
        advice += ", ".join(f'{field}="<your column>"' for field in fixes_named) + ")."
        fixes.append(Fix("columns", dict.fromkeys(fixes_named, "<your column>")))
    if mistyped:
        cast = f"pl.col({mistyped[0]!r}).cast(pl.String)"
        advice += f" Cast it first, e.g. data.with_columns({cast})."
        fixes.append(Fix("cast", {"column": mistyped[0]}))
    raise ColumnError(detail + advice, detail=detail, fixes=fixes)


def has_dimension(schema: pl.Schema, columns: Columns) -> bool:
    """Whether the rows name their dimension (see :data:`DEFAULT_DIMENSION`)."""
    return columns.dimension in schema


def with_ids(frame: pl.LazyFrame, columns: Columns) -> tuple[pl.LazyFrame, str]:
    """Return the frame with an id column: the data's own, or the row position (Int64)."""
    if columns.id in frame.collect_schema():
        return frame, columns.id
    return frame.with_row_index(ROW_INDEX).with_columns(pl.col(ROW_INDEX).cast(pl.Int64)), ROW_INDEX
