"""Role values that take no part in pairs: which they are, in which groups, and the known role
each was probably meant to be."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

import polars as pl

DETAIL = "detail"
_CLOSE = 0.8  # difflib ratio above which a role value reads as a typo of a known role


def unknown_roles(
    frame: pl.LazyFrame,
    g: str,
    role: pl.Expr,
    strategy: str,
    reference: str,
    poles: Sequence[str],
    control: str,
    values: Sequence[str | None] | None = None,
) -> pl.LazyFrame:
    """One ``unknown_role`` row per (group, unknown role value), with the value's row count.
    Role values are few: they are judged once each, from ``values`` (the frame's role values,
    when known) or from the unique values of every batch (``map_batches``)."""
    known = [reference, control] if strategy == "group" else [*poles, control]
    rows = frame.select(g, role.alias("__role"))
    if values is None:

        def judge(column: pl.Series) -> pl.Series:
            verdicts = {v: _role_detail(v, strategy, known) for v in column.unique().drop_nulls()}
            return column.replace_strict(verdicts, default=None, return_dtype=pl.String)

        rows = rows.with_columns(
            pl.col("__role")
            .map_batches(judge, return_dtype=pl.String, is_elementwise=True)
            .alias(DETAIL)
        )
    else:  # only the rows of unknown values are read again (usually none)
        verdicts = {v: _role_detail(v, strategy, known) for v in values if v is not None}
        unknown = {v: d for v, d in verdicts.items() if d is not None}
        rows = rows.filter(pl.col("__role").is_in(list(unknown))).with_columns(
            pl.col("__role")
            .replace_strict(unknown, default=None, return_dtype=pl.String)
            .alias(DETAIL)
        )
    # Judged per row before grouping, so only the (usually no) rows of unknown roles are grouped.
    return (
        rows.filter(pl.col(DETAIL).is_not_null() & pl.col(g).is_not_null())
        .group_by(g, "__role", DETAIL)
        .agg(n_rows=pl.len().cast(pl.Int64))
        .select(g, problem=pl.lit("unknown_role"), n_rows="n_rows", detail=DETAIL)
    )


def _role_detail(value: str, strategy: str, known: list[str]) -> str | None:
    """Why a role value is unknown, with a near match; None when the value is fine. With the
    group strategy every value but the reference is a variant, so only a near match of the
    reference (a typo) is unknown."""
    if value in known:
        return None
    close = near_role(value, known)
    if strategy == "group":
        return None if close is None else f"role {value!r}: did you mean {close!r}?"
    hint = (
        f"did you mean {close!r}?"
        if close
        else "roles of this strategy: " + ", ".join(repr(k) for k in known)
    )
    return f"role {value!r} takes no part in pairs; {hint}"


def near_role(value: str, known: Sequence[str]) -> str | None:
    """The known role ``value`` was probably meant to be: equal but for case, spaces, ``-`` and
    ``_``, or close in spelling (``"refrence"`` -> ``"reference"``)."""

    def norm(text: str) -> str:
        return "".join(c for c in text.casefold() if c not in " -_\t")

    for candidate in known:
        if norm(value) == norm(candidate):
            return candidate
    close = difflib.get_close_matches(value, list(known), n=1, cutoff=_CLOSE)
    return close[0] if close else None
