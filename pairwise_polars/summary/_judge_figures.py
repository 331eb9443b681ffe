"""The judge's own figures, from the member rows of a panel or of repeats: how far the judges
agree (Krippendorff's alpha with a bootstrap interval over groups), how many independent judges
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
    rows = []
    for slice_keys, groups in per_group.group_by(keys, maintain_order=True):
        low, high = bootstrap_alpha(groups, confidence)
        rows.append({**dict(zip(keys, slice_keys, strict=True)), "low": low, "high": high})
    bounds = pl.DataFrame(
        rows,
        schema={**{k: per_group.schema[k] for k in keys}, "low": pl.Float64, "high": pl.Float64},
    )
    alpha = per_group.group_by(keys).agg(pl.col(ALPHA_SUMS).sum()).with_columns(a=alpha_expr())
    two = pl.col("judge_count") >= 2
    return (
        spread.join(alpha, on=keys, how="left", nulls_equal=True)
        .join(bounds, on=keys, how="left", nulls_equal=True)
        .select(
            *keys,
            judge_agreement=pl.when(two).then(pl.col("a")),
            judge_agreement_low=pl.when(two).then(pl.col("low")),
            judge_agreement_high=pl.when(two).then(pl.col("high")),
            judge_effective_n=pl.when(two & pl.col("a").is_not_null()).then(
                effective_judges(pl.col("judge_count").cast(pl.Float64), pl.col("a"))
            ),
            judge_repeat_sd=pl.col("judge_repeat_sd"),
        )
    )
