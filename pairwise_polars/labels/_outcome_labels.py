"""Human labels of outcomes, for :func:`~pairwise_polars.disparities`: what a person reads in
each response of a pair, in the pair-label frame's shape.

A row names one (pair, outcome): ``pair_id`` (or the pair's ``group_id``, ``id_a`` and
``id_b``), ``metric`` (the outcome: ``decision``, ``amount`` or ``refused``, as
:func:`~pairwise_polars.outcome.outcomes` names its columns), and ``label_a`` / ``label_b``,
the person's reading of side a and side b (1 / 0 for a decision or a refusal, a number for an
amount). Both empty: not yet labelled, left out. Anything else that cannot be used is an
error naming the row: a missing column, an unknown outcome, a yes/no outcome that is not 0 or
1, one side empty, a (pair, outcome) labelled twice, a pair the data does not have.
"""

from __future__ import annotations

import polars as pl

from pairwise_polars._errors import ColumnError, DataSourceError
from pairwise_polars.io._frames import DataLike, to_lazy
from pairwise_polars.labels._labels import PAIR_KEYS

OUTCOME_LABELS = ("decision", "amount", "refused")
"""The outcomes a person can label (``metric`` of an outcome label row)."""
SIDES = ("label_a", "label_b")
_ROW = "__label_row"
_SHOWN = 5


def check_outcome_labels(pairs: pl.LazyFrame, labels: DataLike) -> pl.DataFrame:
    """One row per labelled pair: its keys (as text) and ``<outcome>_a`` / ``<outcome>_b``
    for each outcome of :data:`OUTCOME_LABELS` (null where that outcome has no label),
    every label row checked against ``pairs`` first."""
    frame = to_lazy(labels)[0].collect().with_row_index(_ROW, offset=1)
    have = frame.columns[1:]
    keys = ("pair_id",) if "pair_id" in have else PAIR_KEYS
    missing = [c for c in (*keys, "metric", *SIDES) if c not in have]
    if missing:
        raise ColumnError(
            f"Outcome labels need the columns {missing}; the labels have {have}. A row is one "
            "(pair, outcome): pair_id (or group_id, id_a, id_b), metric (decision, amount or "
            "refused) and label_a / label_b, the person's reading of each side."
        )
    text = [pl.col(c).cast(pl.String).str.strip_chars() for c in SIDES]
    frame = frame.with_columns(text).filter(~pl.all_horizontal(pl.col(SIDES).fill_null("") == ""))
    frame = frame.with_columns(pl.col(*keys, "metric").cast(pl.String))
    number = [pl.col(c).cast(pl.Float64, strict=False) for c in SIDES]
    binary = pl.col("metric").is_in(["decision", "refused"])
    checks = {
        f"an outcome other than {', '.join(OUTCOME_LABELS)}": ~pl.col("metric").is_in(
            OUTCOME_LABELS
        ),
        "a side that is empty or not a number": pl.any_horizontal(n.is_null() for n in number),
        "a yes/no outcome that is not 0 or 1": binary
        & pl.any_horizontal(~n.is_in([0.0, 1.0]) for n in number),
        "the same (pair, outcome) more than once": pl.len().over([*keys, "metric"]) > 1,
    }
    for problem, bad in checks.items():
        _refuse(frame.filter(bad), keys, f"{{n}} outcome labels have {problem}")
    known = pairs.select(pl.col(k).cast(pl.String) for k in keys).unique().collect()
    _refuse(
        frame.join(known, on=list(keys), how="anti", nulls_equal=True),
        keys,
        "{n} outcome labels name a pair the data does not have",
    )
    long = frame.select(*keys, "metric", *[n.alias(c) for n, c in zip(number, SIDES, strict=True)])
    wide = long.pivot("metric", index=list(keys), values=list(SIDES))
    return wide.select(
        *keys,
        *[
            (pl.col(f"{side}_{outcome}") if f"{side}_{outcome}" in wide.columns else pl.lit(None))
            .cast(pl.Float64)
            .alias(f"{outcome}_{side[-1]}")
            for outcome in OUTCOME_LABELS
            for side in SIDES
        ],
    )


def _refuse(bad: pl.DataFrame, keys: tuple[str, ...], what: str) -> None:
    if bad.is_empty():
        return
    shown = []
    for row in bad.head(_SHOWN).iter_rows(named=True):
        pair = ", ".join(f"{k}={row[k]}" for k in keys)
        sides = ", ".join(f"{s}={row[s]!r}" for s in SIDES)
        shown.append(f"row {row[_ROW]} ({pair}, metric={row['metric']}, {sides})")
    more = f" and {bad.height - _SHOWN} more" if bad.height > _SHOWN else ""
    raise DataSourceError(
        f"{what.format(n=bad.height)}: {'; '.join(shown)}{more} (rows counted from 1 after the "
        "header). Label decision and refused as 1 or 0 and amount as a number, for both sides, "
        "once per pair, for pairs of this run."
    )
