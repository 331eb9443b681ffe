"""Member rows and combined rows: a scored frame judged by a panel or with repeats.

Such a frame has a ``repeat`` column: each judgement by one judge at one repeat is a *member*
row (``repeat`` 0, 1, ...; ``judge_model`` names its judge); one *combined* row per (pair,
metric) has ``repeat`` null and is the row every figure of :func:`aggregate` uses
(``judge_model = "panel"`` for a panel). Repeats of a judge are combined first, then judges, by
the same rule: ``mean``, ``median`` or ``majority`` (the commonest answer; a tie goes to the
larger, so a split vote never reads fairer than its members).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from pairwise_polars._schemas import PANEL_MODEL, REPEAT

UNIT = "__judge_unit"
"""Helper column: which (pair, metric) a member row judged (its row of the combined frame)."""
_SCORES = ("score", "raw_score", "score_ab", "score_ba")
_SUMS = ("attempts", "latency_s", "input_tokens", "output_tokens", "cached_tokens")


def has_members(schema: pl.Schema | Sequence[str]) -> bool:
    """Whether a scored frame holds member rows (a panel or repeats)."""
    return REPEAT in schema


def combined_only(frame: pl.LazyFrame) -> pl.LazyFrame:
    """The combined rows (all rows of a frame without members), without the ``repeat`` column."""
    if not has_members(frame.collect_schema()):
        return frame
    return frame.filter(pl.col(REPEAT).is_null()).drop(REPEAT)


def members_only(frame: pl.LazyFrame) -> pl.LazyFrame:
    """The member rows of a frame with a ``repeat`` column."""
    return frame.filter(pl.col(REPEAT).is_not_null())


def _reduce(column: str, rule: str) -> pl.Expr:
    values = pl.col(column).drop_nulls()
    if rule == "median":
        return values.median()
    if rule == "majority":
        return values.mode().max()
    return values.mean()


def combine_members(
    members: pl.DataFrame, rule: str, *, panel: bool, unit: str = UNIT
) -> pl.DataFrame:
    """One combined row per ``unit`` from member rows (``unit``, ``judge_model``, ``repeat``
    and the scored columns): repeats first, then judges, by ``rule``. A unit where any member
    failed gets no score (an error saying how many failed): a panel short of a judge is another
    panel, and a broken judgement must never look fair."""
    columns = members.columns
    scores = [c for c in _SCORES if c in columns]
    failed = pl.col("error").is_not_null()
    per_judge = members.group_by(unit, "judge_model", maintain_order=True).agg(
        *[_reduce(c, rule).alias(c) for c in scores],
        __n=pl.len(),
        __failed=failed.sum(),
    )
    judged = per_judge.group_by(unit, maintain_order=True).agg(
        *[_reduce(c, rule).alias(c) for c in scores],
        __n=pl.col("__n").sum(),
        __failed=pl.col("__failed").sum(),
    )
    first_error = pl.col("error").drop_nulls().first()
    rest = members.group_by(unit, maintain_order=True).agg(
        *[pl.col(c).first() for c in columns if c not in (unit, *scores, *_SUMS)],
        *[pl.col(c).sum() for c in _SUMS if c in columns],
        __error=first_error,
        __same=pl.col("error").drop_nulls().n_unique() == 1,
        __cached=pl.col("cached").all() if "cached" in columns else pl.lit(False),
    )
    n, k = pl.col("__n"), pl.col("__failed")
    error = (
        pl.when(k == 0)
        .then(pl.lit(None, pl.String))
        .when((k == n) & pl.col("__same"))
        .then(pl.col("__error"))
        .otherwise(
            pl.concat_str(
                k.cast(pl.String),
                pl.lit(" of "),
                n.cast(pl.String),
                pl.lit(" member judgements failed; first: "),
                pl.col("__error"),
            )
        )
    )
    ok = k == 0
    out = rest.join(judged, on=unit, how="left").with_columns(
        *[pl.when(ok).then(pl.col(c)).alias(c) for c in scores],
        error=error,
        reason=pl.when(ok).then(
            pl.lit(f"{rule} of ") + n.cast(pl.String) + pl.lit(" member judgements")
        ),
        **({"cached": pl.col("__cached")} if "cached" in columns else {}),
        **({"judge_model": pl.lit(PANEL_MODEL)} if panel else {}),
        **{REPEAT: pl.lit(None, members.schema[REPEAT])},
    )
    if {"score_ab", "score_ba", "position_gap"} <= set(columns):
        out = out.with_columns(position_gap=(pl.col("score_ab") - pl.col("score_ba")).abs())
    if "reason_ba" in columns:
        out = out.with_columns(reason_ba=pl.lit(None, pl.String))
    return out.select([pl.col(c).cast(members.schema[c]) for c in columns])
