"""Prediction-powered estimates: a few human labels correct the judge's figures (PPI++).

The judge scored all ``N`` pairs of a slice; people labelled ``M`` of them. For a figure that is
a mean of ``x`` over pairs (``x`` = the score for ``mean_divergence``, an indicator for the
rates), with ``S`` the judge's total over the ``N`` pairs and ``L``, ``F`` the label's and the
judge's totals over the ``M`` labelled ones, the estimate is

``theta(lambda) = lambda * S / N + (L - lambda * F) / M``

the judge's figure on every pair plus the labels' correction of it (Angelopoulos et al.,
"PPI++: Efficient Prediction-Powered Inference", 2023). It estimates what people would say of
all pairs whatever the judge's bias: ``lambda = 0`` is the labels alone, ``lambda = 1`` the
plain prediction-powered estimate.

Groups are the unit, as for every interval of the summary. ``theta`` is a smooth function of
per-group sums, so its cluster-robust (linearised) variance is ``V = H/(H-1) * sum_g r_g^2``
(``H``: the groups with a labelled pair, whose residuals carry nearly all of ``V``; the
small-sample factor of all ``G`` groups would be too small) with

``r_g = u_g - lambda * (v_g - w_g)``, ``u_g = (l_g - m_g L/M) / M``,
``v_g = (f_g - m_g F/M) / M``, ``w_g = (s_g - n_g S/N) / N``

(``l_g``, ``f_g``, ``m_g``: the group's label total, judge total and count over labelled
pairs; ``s_g``, ``n_g``: over all its scored pairs). ``lambda`` is power-tuned: the value that
minimises ``V``, ``sum u d / sum d^2`` with ``d = v - w``, clipped to ``[0, 1]`` as ppi_py's
``_calc_lam_glm`` clips; without independent samples this is the clustered form of its
``Cov(Y, Yhat) / ((1 + n/N) Var(Yhat))``. A judge that tells nothing gets ``lambda`` near 0,
so the estimate falls back to the labels.

**Cross-fitted, one group held out.** Tuned on the same labels it corrects, ``lambda`` leans
towards the draw's own noise and ``V`` comes out optimistic: with 100 labels ppi_py's way
covered 92-93% (``bench_ppi.py``; ppi_py tunes on the same data; cross-prediction-powered
inference, Zrnic and Candès 2023, cross-fits the predictor rather than ``lambda``). So each
labelled group ``g`` gets ``lambda_g``, tuned without its own terms (``(sum u d - u_g d_g) /
(sum d^2 - d_g^2)``, clipped), and the estimate is

``theta = J a + sum_g (l_g - lambda_g f_g) / M``, ``a = sum_g lambda_g m_g / M``, ``J = S/N``

whose per-group residuals ``r_g = (l_g - lambda_g (f_g - m_g J) - m_g theta) / M + a w_g``
give ``V`` as above (with one ``lambda`` they are the ``r_g`` above). No group's correction
uses a ``lambda`` its own labels chose, and leaving one group out needs no fold assignment:
the figures do not depend on the order of the rows or on a seed. ``excess_divergence`` is
the counterfactual estimate minus the control one with one ``lambda_g`` per group: ``r_g`` is
the difference of the two.

Held out, ``lambda`` no longer biases the estimate, but it still varies from draw to draw, and
the error it carries is ``(lambda - lambda*) * gap`` (``gap``: the judge's mean on all pairs
minus on the labelled ones). ``V`` adds ``H/(H-1) * gap^2 * sum r^2 d^2 / (sum d^2)^2``, the
sandwich variance of ``lambda`` times ``gap^2`` (zero when ``lambda`` on all groups sits on 0
or 1). Measured on simulation cells not used to choose it (``bench_ppi.py``, RESULTS.md): an
over-calling judge with 50 labels covers 0.942-0.948 with both, 0.932-0.942 held out alone,
0.924-0.936 with neither.

Bounds for the rates and the mean are a Wilson interval on the effective sample size
``theta (1 - theta) / V`` (at most ``N``; the number of labelled pairs when the labels show
no spread: all alike, so nothing says the judge is right on rarer pairs), with a Student t
quantile on Satterthwaite's degrees of freedom (``A = sum r^2``, ``B = sum r^4``), as
:mod:`pairwise_polars.summary._intervals` does for the judge-only figures; the excess has
``theta -/+ t sqrt(V)`` clipped to ``[-1, 1]``. With labels in fewer than two groups the bounds
are null: the labels' spread cannot be told. ``benchmarks/bench_ppi.py`` simulates coverage.

**Labels that never disagree with the judge.** When no labelled pair of a slice is read
differently by the judge (for the figure: the same side of its threshold, or the same score),
the correction has no spread and ``V`` holds only the judge's own noise, however wrong the
judge is on the pairs nobody labelled. ``M`` pairs that show no error bound the judge's error
rate, and so its bias on a figure of [0, 1] values, only to ``b = 1 - (alpha/2)^(1/M)`` (the
exact one-sided binomial bound of 0 in ``M``), so ``V`` is then at least ``(b / t)^2``. It was
the whole shortfall of the under-calling judge's 10% divergence rate at 50 labels: in the 7%
of draws whose labels showed no missed pair the interval covered 18%, in the rest 99%.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from pairwise_polars.labels import LABEL
from pairwise_polars.summary._intervals import satterthwaite
from pairwise_polars.summary._slice_rows import IN_AGGREGATION, SliceRows, Slices
from pairwise_polars.summary._student_t import t_quantile
from pairwise_polars.summary._sums import PAIR_KIND, exact_sum, on_whole_groups, per_group

FIGURES = {
    # figure: (judge total over all scored pairs, label total, judge total over labelled)
    "equivalence_rate": ("n_equivalent", "label_equivalent", "judged_equivalent"),
    "divergence_rate": ("n_divergent", "label_divergent", "judged_divergent"),
    "mean_divergence": ("score_sum", "label_sum", "judged_sum"),
}
OFF = {
    "equivalence_rate": "label_off_equivalent",
    "divergence_rate": "label_off_divergent",
    "mean_divergence": "label_off",
}
"""Per figure, the per-group count of labelled pairs where the judge's reading differs from
the person's (the bounds' floor when it is 0 over a slice)."""
EXCESS = "excess_divergence"
AGREEMENT = "label_agreement"
PPI_COLUMNS = (
    "n_labelled",
    *[f"{name}{end}" for name in (*FIGURES, EXCESS) for end in ("_ppi", "_ppi_low", "_ppi_high")],
    AGREEMENT,
)
"""Summary columns added when labels are given: the labelled pairs (scored by the judge too),
each figure's prediction-powered estimate with its bounds, and ``label_agreement``, the
judge's quadratic weighted kappa against the labels on the labelled counterfactual pairs."""
LABEL_SUM_COLUMNS = (
    "n_labelled",
    *[c for _, label, judged in FIGURES.values() for c in (label, judged)],
    *OFF.values(),
    "label_sq_sum",
    "judged_sq_sum",
    "cross_sum",
    "n_control_labelled",
    "control_label_sum",
    "control_judged_sum",
)
"""The per-group sums of :func:`label_sums` besides the keys; each adds up across blocks."""
CONTROL_LABEL_SUMS = ("n_control_labelled", "control_label_sum", "control_judged_sum")
_Y, _F, _CY, _CF = "__ppi_label", "__ppi_judged", "__ppi_control_label", "__ppi_control_judged"


def attach_control_labels(sums: pl.LazyFrame, keys: Sequence[str], group_by: str) -> pl.LazyFrame:
    """The labelled control pairs of each whole group (and metric) on every slice row of the
    group, as :func:`~pairwise_polars.summary._excess.attach_controls` does for the judge's
    control sums: a control pair is the noise of its group, not of a slice."""
    return on_whole_groups(sums, keys, group_by, CONTROL_LABEL_SUMS)


def label_sums(
    frame: pl.LazyFrame,
    keys: Sequence[str],
    group_by: str,
    *,
    equivalence_threshold: float,
    divergence_threshold: float,
) -> pl.LazyFrame:
    """One row per (``keys``, group): counts and totals over the pairs both the judge scored
    and a person labelled (``label``), counterfactual and control apart."""
    schema = frame.collect_schema()
    control = (
        pl.col(PAIR_KIND).cast(pl.String).eq_missing("control")
        if PAIR_KIND in schema
        else pl.lit(False)
    )
    both = pl.col("score").is_not_null() & pl.col(LABEL).is_not_null()
    frame = frame.with_columns(
        pl.when(both & ~control).then(pl.col(LABEL)).cast(pl.Float64).alias(_Y),
        pl.when(both & ~control).then(pl.col("score")).cast(pl.Float64).alias(_F),
        pl.when(both & control).then(pl.col(LABEL)).cast(pl.Float64).alias(_CY),
        pl.when(both & control).then(pl.col("score")).cast(pl.Float64).alias(_CF),
    )
    y, f = pl.col(_Y), pl.col(_F)
    return per_group(
        frame,
        keys,
        group_by,
        n_labelled=y.is_not_null().sum().cast(pl.Int64),
        label_equivalent=(y <= equivalence_threshold).sum().cast(pl.Int64),
        judged_equivalent=(f <= equivalence_threshold).sum().cast(pl.Int64),
        label_divergent=(y >= divergence_threshold).sum().cast(pl.Int64),
        judged_divergent=(f >= divergence_threshold).sum().cast(pl.Int64),
        label_sum=exact_sum(y),
        judged_sum=exact_sum(f),
        label_sq_sum=exact_sum(y * y),
        judged_sq_sum=exact_sum(f * f),
        cross_sum=exact_sum(y * f),
        label_off_equivalent=((y <= equivalence_threshold) != (f <= equivalence_threshold))
        .sum()
        .cast(pl.Int64),
        label_off_divergent=((y >= divergence_threshold) != (f >= divergence_threshold))
        .sum()
        .cast(pl.Int64),
        label_off=(y != f).sum().cast(pl.Int64),
        n_control_labelled=pl.col(_CY).is_not_null().sum().cast(pl.Int64),
        control_label_sum=exact_sum(pl.col(_CY)),
        control_judged_sum=exact_sum(pl.col(_CF)),
    )


class PpiFigure(NamedTuple):
    """One figure's per-group columns: the judge's total over the group's scored pairs and
    their count (``s``, ``n``); the label total, the judge's total and the count over its
    labelled pairs (``l``, ``f``, ``m``)."""

    s: str
    n: str
    l: str  # noqa: E741 -- the docstring's name
    f: str
    m: str

    def parts(self, on: Slices = IN_AGGREGATION) -> tuple[Any, Any]:
        """``u`` and ``d``: the per-group residuals whose ratio tunes lambda."""
        s, n, y, f, m = (on.column(c) for c in self)
        big_n, big_m = on.total(n), on.total(m)
        judge_mean = on.total(s) / big_n
        u = (y - m * on.total(y) / big_m) / big_m
        d = (f - m * on.total(f) / big_m) / big_m - (s - n * judge_mean) / big_n
        return u, d

    def estimate(self, lam: Any, on: Slices = IN_AGGREGATION) -> tuple[Any, Any]:
        """``theta`` with a lambda per group (``lam``) and its per-group residuals ``r``."""
        s, n, y, f, m = (on.column(c) for c in self)
        big_n, big_m = on.total(n), on.total(m)
        judge_mean = on.total(s) / big_n
        corrected = y - lam * (f - m * judge_mean)
        theta = on.total(corrected) / big_m
        weight = on.total(lam * m) / big_m  # how much of the judge's figure theta holds
        r = (corrected - m * theta) / big_m + weight * (s - n * judge_mean) / big_n
        return theta, r

    def gap(self, on: Slices = IN_AGGREGATION) -> Any:
        """The judge's mean on all pairs minus on the labelled ones (``J - F/M``)."""
        s, n, _, f, m = (on.column(c) for c in self)
        return on.total(s) / on.total(n) - on.total(f) / on.total(m)


def _tuning_variance(on: Slices, u: Any, d: Any, r: Any, gap: Any) -> Any:
    """What the noise of the tuned lambda adds: ``gap^2 Var(lambda)``, ``Var(lambda)`` the
    sandwich ``sum r^2 d^2 / (sum d^2)^2``; 0 where lambda (on all groups) sits on a bound."""
    dd = on.total(d * d)
    lam = on.when(dd > 0, on.total(u * d) / dd, None)
    inner = (lam > 0) & (lam < 1)
    return on.when(inner, gap * gap * on.total(r * r * d * d) / (dd * dd), 0.0)


def held_out_lambda(u: Any, d: Any, on: Slices = IN_AGGREGATION) -> Any:
    """Each group's lambda, power-tuned on every other group (``sum u d / sum d^2`` without
    its own terms, in [0, 1]): the group's correction never uses a lambda its own labels
    chose."""
    ud, dd = on.total(u * d) - u * d, on.total(d * d) - d * d
    usable = dd > 1e-12 * on.total(d * d)
    return on.when(usable, on.clip(ud / dd, 0.0, 1.0), 0.0)


def ppi_sums(on: SliceRows) -> list[pl.Series]:
    """Per slice, over its per-group sums (those of :func:`label_sums` beside
    :func:`~pairwise_polars.summary._sums.group_sums`): each figure's estimate and the sums its
    bounds need, in passes (slice totals, each group's lambda, the estimate, the residuals)."""
    count = on.column
    labelled = count("n_labelled")
    has = on.total(labelled) > 0
    any_label = (labelled > 0) | (count("n_control_labelled") > 0)
    out = [
        _count_sum(on, "n_labelled", labelled),
        _count_sum(on, "__ppi_label_groups", any_label.astype(np.float64)),
    ]
    with np.errstate(divide="ignore", invalid="ignore"):
        for name, (judge, label, judged) in FIGURES.items():
            figure = PpiFigure(judge, "n_scored", label, judged, "n_labelled")
            u, d = figure.parts(on)
            theta, r = figure.estimate(held_out_lambda(u, d, on), on)
            tuning = _tuning_variance(on, u, d, r, figure.gap(on))
            out += _estimate(on, name, has, theta, r, tuning)
            out.append(_count_sum(on, f"__{name}_ppi_off", count(OFF[name])))
        # excess: counterfactual minus control, one lambda for both
        cf = PpiFigure("score_sum", "n_scored", "label_sum", "judged_sum", "n_labelled")
        co = PpiFigure(
            "control_score_sum", "n_control_scored", "control_label_sum", "control_judged_sum",
            "n_control_labelled",
        )  # fmt: skip
        (u_cf, d_cf), (u_co, d_co) = cf.parts(on), co.parts(on)
        lam = held_out_lambda(u_cf - u_co, d_cf - d_co, on)
        (theta_cf, r_cf), (theta_co, r_co) = cf.estimate(lam, on), co.estimate(lam, on)
        both = has & (on.total(count("n_control_labelled")) > 0)
        u, d, r = u_cf - u_co, d_cf - d_co, r_cf - r_co
        tuning = _tuning_variance(on, u, d, r, cf.gap(on) - co.gap(on))
        out += _estimate(on, EXCESS, both, theta_cf - theta_co, r, tuning)
        return [*out, _kappa(on)]


def _count_sum(on: SliceRows, name: str, value: Any) -> pl.Series:
    return pl.Series(name, on.summed(value).astype(np.int64))


def _kappa(on: SliceRows) -> pl.Series:
    """Quadratic weighted kappa from moments: ``2 s_yf / (s_y^2 + s_f^2 + (mean y - mean
    f)^2)`` (population moments), the same number as from the confusion table with weights
    ``(i - j)^2``; null when it is 0/0 (every label and score one value)."""
    m = on.total(on.column("n_labelled"))
    my, mf = (on.total(on.column(c)) / m for c in ("label_sum", "judged_sum"))
    vy = on.total(on.column("label_sq_sum")) / m - my * my
    vf = on.total(on.column("judged_sq_sum")) / m - mf * mf
    cov = on.total(on.column("cross_sum")) / m - my * mf
    denominator = vy + vf + (my - mf) ** 2
    return on.per_slice(AGREEMENT, 2 * cov / denominator, (m > 0) & (denominator > 1e-15))


def _estimate(
    on: SliceRows, name: str, usable: Any, estimate: Any, r: Any, tuning: Any
) -> list[pl.Series]:
    rr = r * r
    r2 = on.total(rr)
    return [
        on.per_slice(f"{name}_ppi", estimate, usable),
        on.per_slice(f"__{name}_ppi_v", r2 + tuning, usable),
        on.per_slice(f"__{name}_ppi_r2", r2, usable),
        on.per_slice(f"__{name}_ppi_r4", on.total(rr * rr), usable),
    ]


def with_ppi(summary: pl.DataFrame, confidence: float) -> pl.DataFrame:
    """Add the bounds of every ``*_ppi`` estimate to a frame with one row per slice holding the
    sums of :func:`ppi_sums` (and ``n_groups``, ``n_scored``, for the judge-only figures)."""
    p = 0.5 + confidence / 2
    frame = summary
    for name in (*FIGURES, EXCESS):
        groups = pl.col("__excess_groups" if name == EXCESS else "n_groups")
        a, b = pl.col(f"__{name}_ppi_r2"), pl.col(f"__{name}_ppi_r4")
        frame = frame.with_columns(satterthwaite(a, b, groups).cast(pl.Int64).alias("__ppi_df"))
        degrees = sorted({int(v) for v in frame["__ppi_df"].drop_nulls().unique().to_list()})
        quantiles = {df: t_quantile(p, df) for df in degrees}
        q = pl.col("__ppi_df").replace_strict(quantiles, default=None, return_dtype=pl.Float64)
        # The small-sample factor of the groups that carry the variance: the labelled ones.
        g = pl.col("__ppi_label_groups").cast(pl.Float64)
        variance = g / (g - 1) * pl.col(f"__{name}_ppi_v")
        if name != EXCESS:
            variance = _unseen_floor(variance, pl.col(f"__{name}_ppi_off"), q, 1 - p)
        estimate = pl.col(f"{name}_ppi")
        bounded = estimate.is_not_null() & (groups > 1) & (g > 1)
        if name == EXCESS:
            half = q * variance.sqrt()
            low, high = (estimate - half).clip(-1.0, 1.0), (estimate + half).clip(-1.0, 1.0)
        else:
            low, high = _wilson(estimate.clip(0.0, 1.0), variance, q)
        frame = frame.with_columns(
            pl.when(bounded).then(low).alias(f"{name}_ppi_low"),
            pl.when(bounded).then(high).alias(f"{name}_ppi_high"),
        )
        if name != EXCESS:  # a rate or a mean of [0, 1] scores: the correction can overshoot
            frame = frame.with_columns(estimate.clip(0.0, 1.0))
    drop = [
        c
        for c in frame.columns
        if c.startswith("__ppi") or c.endswith(("_ppi_r2", "_ppi_r4", "_ppi_v", "_ppi_off"))
    ]
    return frame.drop(drop)


def _unseen_floor(variance: pl.Expr, off: pl.Expr, q: pl.Expr, tail: float) -> pl.Expr:
    """``variance``, or where no labelled pair shows the judge wrong (``off`` = 0) at least
    ``(b / q)^2``: ``b = 1 - tail^(1/M)`` is the exact one-sided bound of how often the judge
    errs when 0 of ``M`` labelled pairs show it, and so of its bias on a figure of [0, 1]
    values. The plug-in variance is then about 0 whatever the judge's error on the pairs
    nobody labelled (an under-calling judge's 10% rate at 50 labels: 7% of draws, covering
    18%)."""
    m = pl.col("n_labelled").cast(pl.Float64)
    unseen = 1 - pl.lit(tail).pow(1 / m)
    floor = (unseen / q) ** 2
    return (
        pl.when((off == 0) & (m > 0)).then(pl.max_horizontal(variance, floor)).otherwise(variance)
    )


def _wilson(m: pl.Expr, variance: pl.Expr, q: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    binomial = m * (1 - m)
    n = pl.col("n_scored").cast(pl.Float64)
    labelled = pl.col("n_labelled").cast(pl.Float64)
    spread = (variance > 0) & (binomial > 0)
    n_eff = pl.min_horizontal(pl.when(spread).then(binomial / variance).otherwise(labelled), n)
    denominator = 1 + q * q / n_eff
    centre = (m + q * q / (2 * n_eff)) / denominator
    half = q * (binomial / n_eff + q * q / (4 * n_eff * n_eff)).sqrt() / denominator
    return (centre - half).clip(0.0, 1.0), (centre + half).clip(0.0, 1.0)


CORRECTED = "corrected by human labels"
"""The words of a gate check's note when it compared a prediction-powered figure."""


def corrected(
    summary: pl.DataFrame, point: str, column: str, *, conservative: bool
) -> tuple[pl.Expr, pl.Expr | None]:
    """What a gate compares for the summary figure ``point`` (``column``: the figure or its
    bound) and the note that says so: the prediction-powered figure (or its bound) where the
    slice has one, the judge's elsewhere; ``(pl.col(column), None)`` without labels."""
    estimate = f"{point}_ppi"
    if estimate not in summary.columns or point == column == AGREEMENT:
        return pl.col(column), None
    end = column.removeprefix(point)  # "", "_low" or "_high"
    chosen = f"{estimate}{end}" if conservative else estimate
    has = pl.col(estimate).is_not_null()
    note = (
        pl.when(has)
        .then(
            pl.concat_str(
                pl.lit(f"{CORRECTED} ({chosen}, n_labelled="),
                pl.col("n_labelled").cast(pl.String),
                pl.lit(")"),
            )
        )
        .otherwise(pl.lit(f"judge only: no labelled pair in this slice ({column})"))
    )
    return pl.when(has).then(pl.col(chosen)).otherwise(pl.col(column)), note
