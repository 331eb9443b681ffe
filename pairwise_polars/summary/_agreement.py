"""The judge against people: how a judge's scores agree with human labels of the same pairs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from pairwise_polars._errors import ColumnError, OptionError
from pairwise_polars.io._frames import DataLike, to_lazy
from pairwise_polars.labels import LABEL, RAW_LABEL, attach_labels, rubric_maxima
from pairwise_polars.summary._aggregate import default_slices
from pairwise_polars.summary._intervals import satterthwaite
from pairwise_polars.summary._student_t import t_quantile
from pairwise_polars.summary._sums import PAIR_KIND

_BIAS = "__agreement_bias"


@dataclass(frozen=True)
class JudgeAgreement:
    """What :func:`judge_agreement` found: ``summary``, one row per metric and slice, and
    ``confusion``, the labelled pairs counted by (``label``, ``judge``) on the rubric."""

    summary: pl.DataFrame
    confusion: pl.DataFrame


def judge_agreement(
    scored: DataLike,
    labels: DataLike | None = None,
    by: Sequence[str] | None = None,
    *,
    equivalence_threshold: float = 0.0,
    divergence_threshold: float = 0.5,
    confidence: float = 0.95,
    group_by: str = "group_id",
) -> JudgeAgreement:
    """The judge against people on the counterfactual pairs both scored and labelled, per
    metric and slice of ``by`` (by default ``dimension`` when the frame has it).

    ``summary`` has ``n_labelled``, ``weighted_kappa`` (quadratic weights: 1 is perfect
    agreement, 0 what chance gives; the ``label_agreement`` of :func:`aggregate` and the figure
    the ``min_label_agreement`` gate checks), ``exact_agreement`` (the share where the judge's
    raw score equals the label), ``mean_bias`` (judge minus label, normalised; positive: the
    judge over-calls divergence) with ``_low`` / ``_high`` bounds over groups, and the figures
    a gate would see on those pairs under each: ``judge_`` and ``label_`` ``mean_divergence``,
    ``equivalence_rate`` and ``divergence_rate``. ``confusion`` counts the pairs by ``label``
    and ``judge`` (raw rubric values). ``labels`` as for :func:`aggregate`; without it the
    frame must carry its labels (``score(..., labels=...)``).

    >>> import polars as pl
    >>> scored = pl.DataFrame({"pair_id": [1, 2, 3, 4], "group_id": [1, 1, 2, 2],
    ...     "metric": "pairwise-bias", "score": [0.0, 0.5, 0.25, 1.0]})
    >>> labels = pl.DataFrame({"pair_id": [1, 2, 3, 4], "metric": "pairwise-bias",
    ...     "label": [0, 1, 1, 3]})
    >>> judge_agreement(scored, labels).summary.select("n_labelled", "mean_bias").rows()
    [(4, 0.125)]
    """
    if not 0 < confidence < 1:
        raise OptionError(f"confidence must be between 0 and 1, got {confidence}.")
    frame, _ = to_lazy(scored)
    if labels is not None:
        frame = attach_labels(frame, labels)
    schema = frame.collect_schema()
    if not {LABEL, RAW_LABEL} <= set(schema.names()):
        raise ColumnError(
            "judge_agreement needs labels: pass labels=<a frame or file of labels>, or a "
            "scored frame from score(..., labels=...)."
        )
    by = default_slices(schema) if by is None else list(by)
    keys = ["metric", *by]
    maxima = rubric_maxima(frame, frame.select("metric").unique().collect()["metric"].to_list())
    counterfactual = (
        ~pl.col(PAIR_KIND).cast(pl.String).eq_missing("control")
        if PAIR_KIND in schema
        else pl.lit(True)
    )
    top = pl.col("metric").replace_strict(maxima, default=None, return_dtype=pl.Float64)
    rows = (
        frame.filter(counterfactual & pl.col("score").is_not_null() & pl.col(LABEL).is_not_null())
        .with_columns(
            judge_raw=(pl.col("score") * top).round(2),
            **{_BIAS: pl.col("score") - pl.col(LABEL)},
        )
        .collect()
    )
    confusion = (
        rows.group_by(*keys, pl.col(RAW_LABEL).alias("label"), pl.col("judge_raw").alias("judge"))
        .agg(n=pl.len().cast(pl.Int64))
        .sort(*keys, "label", "judge", nulls_last=True)
    )
    summary = _summary(rows, keys, group_by, equivalence_threshold, divergence_threshold)
    return JudgeAgreement(summary=_bias_bounds(summary, confidence), confusion=confusion)


def _summary(
    rows: pl.DataFrame, keys: list[str], group_by: str, eq: float, div: float
) -> pl.DataFrame:
    f, y = pl.col("score"), pl.col(LABEL)
    per_group = rows.group_by(*keys, group_by).agg(
        n=pl.len().cast(pl.Int64),
        bias=pl.col(_BIAS).sum(),
        y=y.sum(), f=f.sum(), yy=(y * y).sum(), ff=(f * f).sum(), yf=(y * f).sum(),
        exact=(pl.col("judge_raw") == pl.col(RAW_LABEL)).sum(),
        f_eq=(f <= eq).sum(), y_eq=(y <= eq).sum(), f_div=(f >= div).sum(), y_div=(y >= div).sum(),
    )  # fmt: skip
    m = pl.col("n").sum().cast(pl.Float64)
    b = pl.col("bias").sum() / m
    r = pl.col("bias") - b * pl.col("n")
    my, mf = pl.col("y").sum() / m, pl.col("f").sum() / m
    vy, vf = pl.col("yy").sum() / m - my * my, pl.col("ff").sum() / m - mf * mf
    denominator = vy + vf + (my - mf) ** 2
    return (
        per_group.sort(per_group.columns)
        .group_by(keys, maintain_order=True)
        .agg(
            n_labelled=pl.col("n").sum(),
            n_groups=pl.len().cast(pl.Int64),
            weighted_kappa=pl.when(denominator > 1e-15).then(
                2 * (pl.col("yf").sum() / m - my * mf) / denominator
            ),
            exact_agreement=pl.col("exact").sum() / m,
            mean_bias=b,
            __r2=(r * r).sum() / (m * m),
            __r4=(r**4).sum() / (m**4),
            judge_mean_divergence=mf,
            label_mean_divergence=my,
            judge_equivalence_rate=pl.col("f_eq").sum() / m,
            label_equivalence_rate=pl.col("y_eq").sum() / m,
            judge_divergence_rate=pl.col("f_div").sum() / m,
            label_divergence_rate=pl.col("y_div").sum() / m,
        )
        .sort(keys, nulls_last=True)
    )


def _bias_bounds(summary: pl.DataFrame, confidence: float) -> pl.DataFrame:
    groups = pl.col("n_groups")
    frame = summary.with_columns(
        satterthwaite(pl.col("__r2"), pl.col("__r4"), groups).cast(pl.Int64).alias("__df")
    )
    degrees = sorted({int(v) for v in frame["__df"].drop_nulls().unique().to_list()})
    quantiles = {df: t_quantile(0.5 + confidence / 2, df) for df in degrees}
    q = pl.col("__df").replace_strict(quantiles, default=None, return_dtype=pl.Float64)
    g = groups.cast(pl.Float64)
    half = q * (g / (g - 1) * pl.col("__r2")).sqrt()
    bounded = groups > 1
    frame = frame.with_columns(
        pl.when(bounded).then((pl.col("mean_bias") - half).clip(-1.0, 1.0)).alias("mean_bias_low"),
        pl.when(bounded).then((pl.col("mean_bias") + half).clip(-1.0, 1.0)).alias("mean_bias_high"),
    )
    first = [c for c in frame.columns if c not in ("__r2", "__r4", "__df")]
    at = first.index("mean_bias") + 1
    order = [*first[:at], "mean_bias_low", "mean_bias_high", *first[at:-2]]
    return frame.select(order)
