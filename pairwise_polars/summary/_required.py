"""Dimensions a verdict requires (``require``): a gate cannot vouch for a dimension the data
never measured, so a required dimension with no scored pair is inconclusive, never a pass."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

from pairwise_polars._errors import OptionError

REQUIRED_CHECK = "required_dimension"
"""The gate name of the check of a dimension the verdict requires but the data lacks."""


def check_require(require: object) -> tuple[str, ...]:
    """``require`` as a tuple of dimension names, or :class:`OptionError`."""
    if require is None:
        return ()
    names = [require] if isinstance(require, str) else require
    if isinstance(names, Sequence) and all(isinstance(n, str) and n for n in names):
        return tuple(str(n) for n in names)
    raise OptionError(
        f"require must list dimension names (e.g. ['gender', 'race']), got {require!r}."
    )


def required_checks(
    rows: pl.DataFrame,
    require: Sequence[str],
    check_schema: Mapping[str, pl.DataType],
    *,
    column: str = "dimension",
) -> pl.DataFrame:
    """One inconclusive check per metric and required dimension that ``rows`` (slice rows of
    a summary) lack or never scored; an empty frame when every one was measured."""
    schema = {**check_schema, "status": pl.String()}
    if not require:
        return pl.DataFrame(schema=schema)
    measured: set[str] = set()
    seen: list[str] = []
    if column in rows.columns and not rows.is_empty():
        scored = pl.col("n_scored") > 0 if "n_scored" in rows.columns else pl.lit(True)
        values = rows.select(pl.col(column).cast(pl.String), scored.alias("scored"))
        seen = sorted(set(values[column].drop_nulls().to_list()))
        measured = set(values.filter("scored")[column].drop_nulls().to_list())
    metrics = rows["metric"].unique(maintain_order=True).to_list() if "metric" in rows else []
    listed = ", ".join(seen) or "none"
    out = []
    for metric in metrics or ["(none)"]:
        for name in require:
            if name in measured:
                continue
            why = "has no scored pair in it" if name in seen else "has no pair in it"
            out.append(
                {
                    "metric": metric,
                    "slice": f"{column}={name}",
                    "gate": REQUIRED_CHECK,
                    "threshold": None,
                    "observed": None,
                    "passed": False,
                    "status": "inconclusive",
                    "note": (
                        f"{column} {name!r} is required (require) but the data {why} (its "
                        f"{column} values: {listed}): unknown is not fair; add its rows or "
                        "take it out of require"
                    ),
                }
            )
    return pl.DataFrame(out, schema=schema)
