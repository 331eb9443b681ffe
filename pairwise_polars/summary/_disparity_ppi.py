"""Disparities corrected by people's reading of the outcomes (prediction-powered, PPI++).

A disparity is a mean over groups of each group's mean within-pair difference, so the groups
are the units: the judge measured ``a_g`` in each of ``G`` groups; in ``H`` of them people
labelled some pairs, whose mean difference is ``y_g`` as people read it and ``f_g`` as the
judge read the same pairs. The estimate is :mod:`pairwise_polars.summary._ppi`'s with one unit
per group, ``lambda * mean(a) + mean(y - lambda f)`` over the labelled groups, ``lambda``
power-tuned with each group's held out; its interval is Student's t on ``H - 1`` degrees of
freedom around the cluster-robust variance ``H/(H-1) sum r_g^2`` (for a difference of yes/no
outcomes at least ``0.5 / ((H + 1) H)``, the floor the judge-only figure has: labels that all
agree still leave the rarer reading possible). A group's labelled pairs
must be a random draw of its pairs, and the labelled groups a random draw of the groups
(``sample_for_labelling`` draws them so).
"""

from __future__ import annotations

import polars as pl

from pairwise_polars.summary._ppi import PpiFigure, held_out_lambda
from pairwise_polars.summary._student_t import t_quantile

P = "__pp_disp_"
"""Prefix of the per-pair helper columns (the measures of each pair, side b against a)."""
BINARY = ("decision", "refusal")
LABELLED = {
    "decision": "decision_difference",
    "amount": "amount_relative",
    "refusal": "refusal_difference",
}
"""The measures people can label and the disparity column each corrects."""
COLUMNS = (
    "n_labelled",
    *[
        f"{column}{end}"
        for column in LABELLED.values()
        for end in ("_ppi", "_ppi_low", "_ppi_high")
    ],
)
"""The columns :func:`~pairwise_polars.disparities` adds with ``labels``."""


def label_sums(names: list[str]) -> list[pl.Expr]:
    """Per-group aggregations of the labelled pairs (none when the pairs carry no labels):
    ``n_labelled`` and, per measure, the pairs both read, their label and judge totals."""
    if P + "label_decision" not in names:
        return []
    judged = {
        "decision": pl.col(P + "decision_b") - pl.col(P + "decision_a"),
        "amount": pl.col(P + "amount"),
        "refusal": pl.col(P + "refusal"),
    }
    out = [
        pl.any_horizontal(pl.col(P + f"label_{m}").is_not_null() for m in LABELLED)
        .sum()
        .cast(pl.Int64)
        .alias("n_labelled")
    ]
    for measure, judge in judged.items():
        label = pl.col(P + f"label_{measure}")
        both = judge.is_not_null() & label.is_not_null()
        out += [
            both.sum().cast(pl.Int64).alias(f"{measure}_label_n"),
            label.filter(both).sum().alias(f"{measure}_label_sum"),
            judge.filter(both).sum().alias(f"{measure}_judged_sum"),
        ]
    return out


def group_units() -> list[pl.Expr]:
    """Each group as one unit of the estimate: the judge's group mean (``__<m>``, from
    :func:`~pairwise_polars.summary._disparity_sums.group_means`) and the labelled pairs'
    means as people and as the judge read them."""
    out = []
    for measure in LABELLED:
        n = pl.col(f"{measure}_label_n")
        judge = pl.col(f"__{measure}")
        out += [
            judge.fill_null(0.0).alias(f"__ppi_s_{measure}"),
            judge.is_not_null().cast(pl.Int64).alias(f"__ppi_n_{measure}"),
            (n > 0).cast(pl.Int64).alias(f"__ppi_m_{measure}"),
            pl.when(n > 0).then(pl.col(f"{measure}_label_sum") / n).otherwise(0.0)
            .alias(f"__ppi_l_{measure}"),
            pl.when(n > 0).then(pl.col(f"{measure}_judged_sum") / n).otherwise(0.0)
            .alias(f"__ppi_f_{measure}"),
        ]  # fmt: skip
    return out


def ppi_aggs() -> list[pl.Expr]:
    """Per-slice aggregations over the group units: each estimate and its variance sums."""
    out = [pl.col("n_labelled").sum()]
    for measure, column in LABELLED.items():
        names = (f"__ppi_{x}_{measure}" for x in "snlfm")
        figure = PpiFigure(*names)
        theta, r = figure.estimate(held_out_lambda(*figure.parts()))
        labelled = pl.col(figure.m).sum()
        out += [
            pl.when(labelled > 0).then(theta).alias(f"{column}_ppi"),
            labelled.alias(f"__{column}_ppi_h"),
            (r * r).sum().alias(f"__{column}_ppi_r2"),
        ]
    return out


def with_disparity_ppi(per_slice: pl.DataFrame, confidence: float) -> pl.DataFrame:
    """Bounds for every ``*_ppi`` of :func:`ppi_aggs`: ``theta -/+ t sqrt(H/(H-1) sum r^2)``
    on ``H - 1`` degrees of freedom, null with fewer than two labelled groups."""
    p = 0.5 + confidence / 2
    frame = per_slice
    for measure, column in LABELLED.items():
        h = pl.col(f"__{column}_ppi_h")
        degrees = {int(v) for v in frame[f"__{column}_ppi_h"].to_list() if v is not None and v > 1}
        quantiles = {g: t_quantile(p, g - 1) for g in degrees}
        q = h.replace_strict(quantiles, default=None, return_dtype=pl.Float64)
        g = h.cast(pl.Float64)
        variance = g / (g - 1) * pl.col(f"__{column}_ppi_r2")
        if measure in BINARY:  # the judge-only figure's floor: two pseudo-groups at -/+ 1/2
            variance = pl.max_horizontal(variance, 0.5 / ((g + 1) * g))
        half = q * variance.sqrt()
        estimate = pl.col(f"{column}_ppi")
        frame = frame.with_columns(
            pl.when(h > 1).then(estimate - half).alias(f"{column}_ppi_low"),
            pl.when(h > 1).then(estimate + half).alias(f"{column}_ppi_high"),
        )
    return frame.drop(c for c in frame.columns if c.startswith("__") and "_ppi_" in c)
