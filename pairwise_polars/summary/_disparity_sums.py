"""Disparities in two stages, like the summary: mergeable sums per (slice, group), then figures
over groups with cluster-robust intervals.

Each figure is a mean over groups of a within-group mean of a within-pair difference (side b
against side a), so a group counts once however many pairs it has, and re-asking noise, which has
no preferred side, averages out while a disadvantage accumulates. Its interval is Student's t with
``G - 1`` degrees of freedom on the spread of the group means (for differences of yes/no
outcomes, a spread with a floor: see :func:`_floored_var`). ``impact_ratio`` is the ratio of
the two decision rates over the same groups, with a delta-method interval on the log scale
(linearised over groups: ``z_g = (y_g - R x_g) / x̄``).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from pairwise_polars.pairing import PAIR_KIND
from pairwise_polars.summary._disparity_ppi import (
    P,
    group_units,
    label_sums,
    ppi_aggs,
    with_disparity_ppi,
)
from pairwise_polars.summary._student_t import t_quantile

DISPARITY_SUMS = (
    "n_pairs",
    "decision_n",
    "decision_b_sum",
    "decision_a_sum",
    "amount_n",
    "amount_sum",
    "refusal_n",
    "refusal_sum",
    "favour_n",
    "favour_sum",
)
"""The columns of :func:`disparity_sums` besides the keys; each adds up across blocks."""
BINARY = ("decision", "refusal")
"""Measures that are differences of yes/no outcomes: their variance gets a floor."""
_PSEUDO = (0.5, -0.5)
FIGURES = {
    "decision": "decision_difference",
    "amount": "amount_relative",
    "refusal": "refusal_difference",
    "favour": "mean_favour",
}
"""Each measure and the disparity column that reports it."""


def disparity_sums(pairs: pl.LazyFrame, keys: Sequence[str], group_by: str) -> pl.LazyFrame:
    """One row per (``keys``, ``pair_kind``, ``reference``, group) of counts and sums (and of
    the labelled pairs when the pairs carry people's reading of the outcomes)."""
    d_a, d_b = pl.col(P + "decision_a"), pl.col(P + "decision_b")
    decided = d_a.is_not_null() & d_b.is_not_null()
    amount, refusal, favour = pl.col(P + "amount"), pl.col(P + "refusal"), pl.col(P + "favour")
    return pairs.group_by([*keys, PAIR_KIND, P + "reference", group_by]).agg(
        *label_sums(pairs.collect_schema().names()),
        n_pairs=pl.len().cast(pl.Int64),
        decision_n=decided.sum().cast(pl.Int64),
        decision_b_sum=d_b.filter(decided).sum(),
        decision_a_sum=d_a.filter(decided).sum(),
        amount_n=amount.is_not_null().sum().cast(pl.Int64),
        amount_sum=amount.sum(),
        refusal_n=refusal.is_not_null().sum().cast(pl.Int64),
        refusal_sum=refusal.sum(),
        favour_n=favour.is_not_null().sum().cast(pl.Int64),
        favour_sum=favour.sum(),
    )


def group_means(sums: pl.LazyFrame) -> pl.LazyFrame:
    """The sums with each group's means: ``__y`` / ``__x`` (decision rates of b / a) and
    ``__<measure>`` (the within-group mean difference)."""

    def mean(total: str, count: str) -> pl.Expr:
        return pl.when(pl.col(count) > 0).then(pl.col(total) / pl.col(count))

    rate_b = mean("decision_b_sum", "decision_n")
    rate_a = mean("decision_a_sum", "decision_n")
    return sums.with_columns(
        rate_b.alias("__y"),
        rate_a.alias("__x"),
        (rate_b - rate_a).alias("__decision"),
        mean("amount_sum", "amount_n").alias("__amount"),
        mean("refusal_sum", "refusal_n").alias("__refusal"),
        mean("favour_sum", "favour_n").alias("__favour"),
    )


def combine_disparities(
    sums: pl.LazyFrame | pl.DataFrame, keys: Sequence[str], group_by: str, confidence: float
) -> pl.DataFrame:
    """The figures per (``keys``, ``pair_kind``) from (merged) :func:`disparity_sums`, with the
    corrected figures of :mod:`pairwise_polars.summary._disparity_ppi` when labels were summed."""
    slice_keys = [*keys, PAIR_KIND]
    frame = group_means(sums.lazy())
    labelled = "n_labelled" in frame.collect_schema().names()
    if labelled:
        frame = frame.with_columns(group_units())
    per_slice = (
        frame.sort([*slice_keys, group_by], nulls_last=True)
        .group_by(slice_keys, maintain_order=True)
        .agg(
            *(ppi_aggs() if labelled else []),
            n_groups=pl.col(group_by).n_unique().cast(pl.Int64),
            n_pairs=pl.col("n_pairs").sum(),
            reference=pl.col(P + "reference").drop_nulls().mode().sort().first(),
            **_figure_aggs(),
        )
        .collect()
    )
    if labelled:
        per_slice = with_disparity_ppi(per_slice, confidence)
    degrees = {
        int(v)
        for name in FIGURES
        for v in per_slice[f"n_groups_{name}"].to_list()
        if v is not None and v > 1
    }
    p = 0.5 + confidence / 2
    quantiles = {g: t_quantile(p, g - 1) for g in degrees}
    return per_slice.with_columns(_interval_exprs(quantiles)).sort(slice_keys, nulls_last=True)


def _figure_aggs() -> dict[str, pl.Expr]:
    out: dict[str, pl.Expr] = {}
    for name in FIGURES:
        value = pl.col(f"__{name}")
        out[f"n_groups_{name}"] = value.is_not_null().sum().cast(pl.Int64)
        out[f"__{name}_mean"] = value.mean()
        out[f"__{name}_var"] = _floored_var(value) if name in BINARY else value.var(ddof=1)
    y, x = pl.col("__y"), pl.col("__x")
    out["decision_rate"] = y.mean()
    out["reference_decision_rate"] = x.mean()
    ratio = y.mean() / x.mean()
    z = (y - ratio * x) / x.mean()
    out["__ratio_var"] = z.var(ddof=1)
    return out


def _floored_var(value: pl.Expr) -> pl.Expr:
    """The variance of the group means with two pseudo-groups at +-1/2 (and the mean not
    moved): a differences of yes/no outcomes that are rare (refusals at 5%) is mostly 0, and
    its sample variance then falls short often enough to cut the coverage at 30 groups to 0.90
    (``benchmarks/bench_disparities.py``); the floor costs ~10% of width at 30 groups and
    nothing at 200."""
    n = value.is_not_null().sum().cast(pl.Float64)
    total, squares = value.sum(), (value * value).sum()
    augmented = n + len(_PSEUDO)
    squares = squares + sum(p * p for p in _PSEUDO)
    return pl.when(n > 1).then((squares - total * total / augmented) / (augmented - 1))


def _interval_exprs(quantiles: dict[int, float]) -> list[pl.Expr]:
    exprs: list[pl.Expr] = []
    for name, column in FIGURES.items():
        g = pl.col(f"n_groups_{name}")
        q = g.replace_strict(quantiles, default=None, return_dtype=pl.Float64)
        half = q * (pl.col(f"__{name}_var") / g.cast(pl.Float64)).sqrt()
        mean = pl.col(f"__{name}_mean")
        exprs += [
            pl.when(g > 0).then(mean).alias(column),
            pl.when(g > 1).then(mean - half).alias(f"{column}_low"),
            pl.when(g > 1).then(mean + half).alias(f"{column}_high"),
        ]
    g = pl.col("n_groups_decision")
    q = g.replace_strict(quantiles, default=None, return_dtype=pl.Float64)
    rate, reference = pl.col("decision_rate"), pl.col("reference_decision_rate")
    ratio = pl.when(reference > 0).then(rate / reference)
    se = (pl.col("__ratio_var") / g.cast(pl.Float64)).sqrt()
    # On the log scale while the ratio is positive (a ratio's interval is skewed); linear at 0.
    log_half = q * se / ratio
    usable = (g > 1) & ratio.is_not_null()
    exprs += [
        ratio.alias("impact_ratio"),
        pl.when(usable)
        .then(pl.when(ratio > 0).then(ratio * (-log_half).exp()).otherwise(0.0))
        .alias("impact_ratio_low"),
        pl.when(usable)
        .then(pl.when(ratio > 0).then(ratio * log_half.exp()).otherwise(q * se))
        .alias("impact_ratio_high"),
    ]
    return exprs


def holds_zero(column: str) -> pl.Expr:
    """Whether a figure's interval holds 0 (null when it has no interval)."""
    return (pl.col(f"{column}_low") <= 0) & (pl.col(f"{column}_high") >= 0)
