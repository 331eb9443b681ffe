"""The judge's own figures, from the member rows of a panel or of repeats: how far the judges
agree (Krippendorff's alpha at the rubric's ordinal level, with a bootstrap interval over
groups; see :mod:`pairwise_polars.summary._ordinal`), how many independent judges
the panel is worth, and how much one judge's repeated answers to the same request spread."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from pairwise_polars.pairing import PAIR_KIND
from pairwise_polars.summary._judge_rows import members_only
from pairwise_polars.summary._krippendorff import (
    ALPHA_SUMS,
    alpha_expr,
    bootstrap_alpha,
    effective_judges,
    unit_sums,
)
from pairwise_polars.summary._ordinal import coincidences, ordinal_figures

JUDGE_COLUMNS = (
    "judge_agreement",
    "judge_agreement_low",
    "judge_agreement_high",
    "judge_effective_n",
    "judge_repeat_sd",
)
"""Summary columns of a frame with member rows (a panel or repeats)."""


def judge_figures(
    frame: pl.LazyFrame, keys: Sequence[str], group_by: str, confidence: float
) -> pl.DataFrame:
    """One row per ``keys`` with the ``JUDGE_COLUMNS`` (nulls where a figure has no basis:
    agreement needs two judges, the repeat spread two repeats)."""
    keys = list(keys)
    schema = frame.collect_schema()
    counterfactual = (
        ~pl.col(PAIR_KIND).cast(pl.String).eq_missing("control")
        if PAIR_KIND in schema
        else pl.lit(True)
    )
    unit = list(dict.fromkeys([*keys, group_by, "pair_id"]))  # group_by may be the pair
    score = pl.col("score")
    per_judge = (
        members_only(frame)
        .filter(counterfactual & score.is_not_null())
        .group_by(*unit, "judge_model")
        .agg(
            value=score.mean(),
            r_n=pl.len(),
            r_ss=(score * score).sum() - score.sum() ** 2 / pl.len(),
        )
        .collect()
    )
    spread = per_judge.group_by(keys).agg(
        judge_repeat_sd=pl.when((pl.col("r_n") - 1).sum() > 0).then(
            (pl.col("r_ss").clip(0.0).sum() / (pl.col("r_n") - 1).sum()).sqrt()
        ),
        judge_count=pl.col("judge_model").n_unique(),
    )
    per_group = (
        per_judge.group_by(*unit)
        .agg(unit_sums(pl.col("value"), pl.len()))
        .group_by(*keys, group_by)
        .agg(pl.col(ALPHA_SUMS).sum())
        .sort([*keys, group_by], nulls_last=True)
    )
    alpha = _alphas(per_judge, per_group, unit, keys, group_by, confidence)
    two = pl.col("judge_count") >= 2
    return spread.join(alpha, on=keys, how="left", nulls_equal=True).select(
        *keys,
        judge_agreement=pl.when(two).then(pl.col("a")),
        judge_agreement_low=pl.when(two).then(pl.col("low")),
        judge_agreement_high=pl.when(two).then(pl.col("high")),
        judge_effective_n=pl.when(two & pl.col("a").is_not_null()).then(
            effective_judges(pl.col("judge_count").cast(pl.Float64), pl.col("a"))
        ),
        judge_repeat_sd=pl.col("judge_repeat_sd"),
    )


def _alphas(
    per_judge: pl.DataFrame,
    per_group: pl.DataFrame,
    unit: list[str],
    keys: list[str],
    group_by: str,
    confidence: float,
) -> pl.DataFrame:
    """Per slice of ``keys``: alpha at the rubric's (ordinal) level, ``a``, with its bootstrap
    interval, ``low`` and ``high``; at the interval level where the scores are continuous."""
    table = coincidences(per_judge, unit, list(dict.fromkeys([*keys, group_by])))
    rows = []
    for slice_keys, groups in per_group.group_by(keys, maintain_order=True):
        where = dict(zip(keys, slice_keys, strict=True))
        mine = table.filter(*(pl.col(k).eq_missing(v) for k, v in where.items()))
        ordinal = ordinal_figures(mine, group_by, confidence)
        if ordinal is None:  # continuous scores: the interval level, from the sums
            low, high = bootstrap_alpha(groups, confidence)
            ordinal = (_interval_alpha(groups), low, high)
        rows.append({**where, "a": ordinal[0], "low": ordinal[1], "high": ordinal[2]})
    schema = {k: per_group.schema[k] for k in keys}
    return pl.DataFrame(
        rows, schema={**schema, "a": pl.Float64, "low": pl.Float64, "high": pl.Float64}
    )


def _interval_alpha(groups: pl.DataFrame) -> float | None:
    value = groups.select(pl.col(ALPHA_SUMS).sum()).select(alpha_expr()).item()
    return None if value is None else float(value)
