"""The judge's reaction to the attribute itself, from the masked audit (``audit="mask"``).

Every pair judged with ``audit="mask"`` has two rows: ``view == "plain"`` (the pair as it is)
and ``view == "masked"`` (the attribute's terms masked in both requests and responses). The
summary's figures use the plain rows only; the masked ones give, per slice,

``judge_attribute_effect = mean over pairs with both scores of (|plain| - |masked|)``

the divergence the judge adds when it can see the attribute. A judge that scores treatment
only gives 0 up to noise; one that counts "the two responses mention different genders" as
divergence gives a positive effect: its scores measure the judge, not the system.

The interval treats groups as independent and a group's pairs as correlated, as every figure
of the summary does: with ``d`` the per-pair differences, ``s_g`` and ``n_g`` a group's sum and
count of them, ``m = sum s_g / N`` and ``r_g = s_g - m n_g``, the variance is
``V = G/(G-1) sum r_g^2 / N^2`` and the bounds ``m -/+ t sqrt(V)`` with a Student t on
Satterthwaite's degrees of freedom (:func:`~pairwise_polars.summary._intervals.satterthwaite`),
clipped to [-1, 1]; with one group they are null. Coverage is simulated in
``benchmarks/bench_judge_trial.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from pairwise_polars.summary._intervals import residual_sums, satterthwaite
from pairwise_polars.summary._slice_sums import ENGINE
from pairwise_polars.summary._student_t import t_quantile
from pairwise_polars.summary._sums import exact_sum

VIEW, PLAIN, MASKED = "view", "plain", "masked"
EFFECT = "judge_attribute_effect"
EFFECT_COLUMNS = (EFFECT, f"{EFFECT}_low", f"{EFFECT}_high", "n_judge_attribute", "n_not_masked")
"""Summary columns of the masked audit: the effect, its bounds, the pairs it is measured on,
and the pairs with no attribute term to mask (so no masked judgement)."""
JUDGE_GATE = "max_judge_attribute_effect"
NOT_MASKED = "term found to mask"
"""The end of a masked row's error when nothing was masked (see ``scoring``)."""
_D, _N = "__effect_sum", "__effect_n"


def is_audited(schema: pl.Schema) -> bool:
    """Whether a scored frame holds masked-audit rows (a ``view`` column)."""
    return VIEW in schema and "pair_id" in schema


def plain_rows(frame: pl.LazyFrame) -> pl.LazyFrame:
    """The rows every other figure is computed from: all but the masked view's."""
    if VIEW not in frame.collect_schema():
        return frame
    return frame.filter(pl.col(VIEW).cast(pl.String).ne_missing(MASKED))


def attribute_effect(
    frame: pl.LazyFrame, keys: Sequence[str], group_by: str, *, confidence: float
) -> pl.DataFrame:
    """One row per ``keys`` with :data:`EFFECT_COLUMNS`, from an audited scored frame."""
    keys = list(keys)
    schema = frame.collect_schema()
    score = pl.col("score").cast(pl.Float64).abs()
    counterfactual = (
        ~pl.col("pair_kind").cast(pl.String).eq_missing("control")
        if "pair_kind" in schema
        else pl.lit(True)
    )
    frame = frame.filter(counterfactual)
    on = list(dict.fromkeys(["pair_id", *keys, group_by]))
    view = pl.col(VIEW).cast(pl.String)
    plain = frame.filter(view == PLAIN).select(*on, score.alias("__plain"))
    masked_rows = frame.filter(view == MASKED)
    masked = masked_rows.select(*on, score.alias("__masked"))
    error = pl.col("error") if "error" in schema else pl.lit(None, pl.String)
    not_masked = masked_rows.group_by(keys).agg(
        n_not_masked=error.cast(pl.String).str.ends_with(NOT_MASKED).sum().cast(pl.Int64)
    )
    both = plain.join(masked, on=on, how="inner", nulls_equal=True).filter(
        pl.col("__plain").is_not_null() & pl.col("__masked").is_not_null()
    )
    per_group = both.group_by([*keys, group_by]).agg(
        exact_sum(pl.col("__plain") - pl.col("__masked")).alias(_D),  # in any row order
        pl.len().cast(pl.Int64).alias(_N),
    )
    per_slice = (
        per_group.sort([*keys, group_by], nulls_last=True)
        .group_by(keys, maintain_order=True)
        .agg(
            pl.col(_D).sum(),
            pl.col(_N).sum().alias("n_judge_attribute"),
            pl.len().cast(pl.Int64).alias("__groups"),
            *residual_sums(_D, _N, "__effect", fourth=True),
        )
        .collect(engine=ENGINE)
    )
    out = _with_bounds(per_slice, confidence)
    counts = not_masked.collect()
    out = (
        counts.join(out, on=keys, how="left", nulls_equal=True)
        if keys
        else counts.join(out, how="cross")
    )
    return out.select(
        *keys,
        pl.col(EFFECT).cast(pl.Float64),
        pl.col(f"{EFFECT}_low").cast(pl.Float64),
        pl.col(f"{EFFECT}_high").cast(pl.Float64),
        pl.col("n_judge_attribute").fill_null(0).cast(pl.Int64),
        pl.col("n_not_masked").fill_null(0).cast(pl.Int64),
    )


def _with_bounds(per_slice: pl.DataFrame, confidence: float) -> pl.DataFrame:
    groups = pl.col("__groups")
    df = satterthwaite(pl.col("__effect_r2"), pl.col("__effect_r4"), groups).cast(pl.Int64)
    frame = per_slice.with_columns(df.alias("__df"))
    p = 0.5 + confidence / 2
    degrees = sorted({int(v) for v in frame["__df"].drop_nulls().unique().to_list()})
    quantiles = {d: t_quantile(p, d) for d in degrees}
    q = pl.col("__df").replace_strict(quantiles, default=None, return_dtype=pl.Float64)
    n = pl.col("n_judge_attribute").cast(pl.Float64)
    g = groups.cast(pl.Float64)
    m = pl.col(_D) / n
    half = q * (g / (g - 1) * pl.col("__effect_r2") / (n * n)).sqrt()
    bounded = (n > 0) & (g > 1)
    return frame.with_columns(
        pl.when(n > 0).then(m).alias(EFFECT),
        pl.when(bounded).then((m - half).clip(-1.0, 1.0)).alias(f"{EFFECT}_low"),
        pl.when(bounded).then((m + half).clip(-1.0, 1.0)).alias(f"{EFFECT}_high"),
    )


def judge_notes(summary: pl.DataFrame, slices: Sequence[str]) -> list[str]:
    """One sentence per slice whose effect's interval excludes 0: the judge named as the
    reason its scores cannot be read as the system's."""
    if f"{EFFECT}_low" not in summary.columns:
        return []
    low, high = pl.col(f"{EFFECT}_low"), pl.col(f"{EFFECT}_high")
    reacting = summary.filter((low > 0) | (high < 0))
    notes = []
    for row in reacting.iter_rows(named=True):
        where = ", ".join(str(row[s]) for s in slices if row.get(s) is not None) or "overall"
        notes.append(
            f"{row['metric']}: the judge reacts to the attribute itself: "
            f"{row[EFFECT]:+.2f} [{row[f'{EFFECT}_low']:.2f}, {row[f'{EFFECT}_high']:.2f}] on "
            f"{where}; its scores are not a measure of the system"
        )
    return notes


def effect_checks(summary: pl.DataFrame, slice_label: pl.Expr, limit: pl.Expr) -> pl.DataFrame:
    """``max_judge_attribute_effect`` checks: the bound of the effect's interval farthest from
    0 at most ``limit`` (the unfavourable bound, like every gate: an interval that straddles
    the threshold has not shown the judge blind to the attribute). A slice without the masked
    audit, or without an interval (one group), is unmeasured."""
    if EFFECT not in summary.columns:
        observed = pl.lit(None, pl.Float64)
        why = pl.lit(
            'no masked audit: score with audit="mask" (manifest audit: mask, CLI --audit '
            "mask) to measure the judge's reaction to the attribute"
        )
    else:
        point = pl.col(EFFECT).abs()
        observed = pl.max_horizontal(
            pl.col(f"{EFFECT}_low").abs(), pl.col(f"{EFFECT}_high").abs()
        ).cast(pl.Float64)
        why = (
            pl.when(point.is_null())
            .then(pl.lit("no pair judged both plain and masked: unknown is not fair"))
            .when(observed.is_null())
            .then(pl.lit(f"{EFFECT} has no interval (one group): unknown is not fair"))
            .when(point > limit)
            .then(
                pl.lit(
                    "the judge reacts to the attribute itself: its scores are not a measure of "
                    "the system"
                )
            )
            .when(observed > limit)
            .then(
                pl.lit(
                    "the interval straddles the threshold: its bound farthest from 0 is beyond "
                    "it; add groups"
                )
            )
            .otherwise(pl.lit(f"on the interval bound farthest from 0 ({EFFECT}_low/_high)"))
        )
    return summary.filter(limit.is_not_null()).select(
        metric=pl.col("metric"),
        slice=slice_label,
        gate=pl.lit(JUDGE_GATE),
        threshold=limit.cast(pl.Float64),
        observed=observed.cast(pl.Float64),
        passed=pl.when(observed.is_null()).then(False).otherwise(observed <= limit),
        note=why,
    )
