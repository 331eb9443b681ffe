"""gate_compare: the regression gate on a comparison, three-way like every gate.

A slice fails when it got worse by more than the allowance with evidence that survives the
family (a one-sided test of "worse by at most ``max_regression``", its p-values adjusted over
every slice checked); it passes when the interval's unfavourable bound shows it got worse by
at most the allowance and enough groups were measured in both runs; otherwise it is
inconclusive. A slice not measured in both runs never passes: unknown is not fair.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import polars as pl

from pairwise_polars._errors import ColumnError, GateError, OptionError
from pairwise_polars.summary import GateResult
from pairwise_polars.summary._adjust import Adjust, adjusted, check_adjust
from pairwise_polars.summary._gate_checks import CHECK_SCHEMA, slice_label
from pairwise_polars.summary._paired import FIGURES, WORSE, one_sided
from pairwise_polars.summary._student_t import t_quantile
from pairwise_polars.summary._thresholds import check_threshold

REGRESSION_GATE = "max_regression"
DEFAULT_MIN_GROUPS = 30
_PRIMARY = ("excess_divergence", "mean_divergence")
_CHECKS = pl.Schema({**CHECK_SCHEMA, "status": pl.String})  # cast by name, order kept


def gate_compare(
    comparison: pl.DataFrame,
    max_regression: float | Mapping[str, float] = 0.05,
    *,
    figures: Sequence[str] | None = None,
    familywise: Adjust = "holm",
    confidence: float = 0.95,
    min_groups: int = DEFAULT_MIN_GROUPS,
) -> GateResult:
    """Fail a slice that got worse by more than ``max_regression`` (a number in [0, 1], or one
    per metric name) in a comparison from :func:`~pairwise_polars.compare`.

    By default each metric and slice is checked on its primary figure: ``excess_divergence``
    where either run has control pairs, else ``mean_divergence``; ``figures=[...]`` checks
    those instead (a rate that fell, like ``equivalence_rate``, counts as worse). ``observed``
    is the change in the worse direction. A check **fails** when the one-sided p-value of
    "worse by at most the allowance", adjusted over every check under ``familywise``
    (``"holm"``: the chance that a release no worse than the allowance fails anywhere is at
    most ``(1 - confidence) / 2``; ``"bh"``; None), is below ``(1 - confidence) / 2``;
    **passes** when the interval's unfavourable bound at ``confidence`` is within the
    allowance and at least ``min_groups`` groups were measured in both runs; and is
    **inconclusive** otherwise (also when the figure is missing in either run).

    >>> import polars as pl
    >>> from pairwise_polars.comparison import compare
    >>> old = pl.DataFrame({"pair_id": range(40), "group_id": range(40),
    ...     "dimension": "gender", "metric": "pairwise-bias", "score": [0.0, 0.25] * 20})
    >>> gate_compare(compare(old, old)).status
    'pass'
    """
    if not 0 < confidence < 1:
        raise OptionError(f"confidence must be between 0 and 1, got {confidence}.")
    familywise = check_adjust(familywise, name="familywise")
    _check_columns(comparison)
    slices = comparison.columns[1 : comparison.columns.index("figure")]
    rows = _checked_rows(comparison, slices, figures)
    limit = _limit(max_regression, rows["metric"].unique().to_list())
    worse = pl.col("figure").replace_strict(WORSE, return_dtype=pl.Float64) * pl.col("delta")
    rows = rows.with_columns(limit.alias("threshold"), worse.alias("observed"))
    rows = _judged(rows, familywise, confidence, min_groups)
    checks = rows.select(
        "metric",
        "slice",
        gate=pl.lit(REGRESSION_GATE),
        threshold="threshold",
        observed="observed",
        passed=pl.col("status") == "pass",
        status="status",
        note=_note(familywise, min_groups),
    )
    if checks.is_empty():
        raise GateError(
            "gate_compare found nothing to check: the comparison has no rows for "
            f"{list(figures) if figures else 'its primary figures'}."
        )
    family = 0 if familywise is None else int(rows["p_fail"].is_not_null().sum())
    return GateResult(
        passed=bool(checks["passed"].all()),
        checks=checks.cast(_CHECKS),
        familywise=familywise or "none",
        family=family,
    )


def _check_columns(comparison: pl.DataFrame) -> None:
    needed = ["metric", "figure", "before", "after", "delta", "delta_se", "delta_df", "n_groups"]
    missing = [c for c in needed if c not in comparison.columns]
    if missing:
        raise ColumnError(
            f"gate_compare needs a comparison from compare(); it lacks {missing} (it has "
            f"{comparison.columns})."
        )


def _judged(
    rows: pl.DataFrame, familywise: Adjust, confidence: float, min_groups: int
) -> pl.DataFrame:
    """Each row's ``status`` and unfavourable bound: fail on the family-adjusted one-sided
    evidence, pass within the allowance at the bound with enough groups, else inconclusive."""
    p = [
        one_sided(None if w is None else w - t, se, df)
        for w, t, se, df in rows.select("observed", "threshold", "delta_se", "delta_df").iter_rows()
    ]
    rows = rows.with_columns(p_fail=adjusted(pl.Series(p, dtype=pl.Float64), familywise))
    quantile = {
        df: t_quantile(0.5 + confidence / 2, df) for df in rows["delta_df"].drop_nulls().unique()
    }
    q = pl.col("delta_df").replace_strict(quantile, default=None, return_dtype=pl.Float64)
    unfavourable = pl.col("observed") + q * pl.col("delta_se")
    alpha = (1 - confidence) / 2
    status = (
        pl.when(pl.col("p_fail").is_not_null() & (pl.col("p_fail") < alpha))
        .then(pl.lit("fail"))
        .when((unfavourable <= pl.col("threshold")) & (pl.col("n_groups") >= min_groups))
        .then(pl.lit("pass"))
        .otherwise(pl.lit("inconclusive"))
    )
    return rows.with_columns(status.alias("status"), unfavourable.alias("__unfavourable"))


def _checked_rows(
    comparison: pl.DataFrame, slices: list[str], figures: Sequence[str] | None
) -> pl.DataFrame:
    keys = ["metric", *slices]
    label = slice_label(slices).alias("slice")
    if figures is not None:
        unknown = [f for f in figures if f not in FIGURES]
        if unknown:
            raise OptionError(
                f"gate_compare cannot check figure {unknown[0]!r}; figures: {', '.join(FIGURES)}."
            )
        return comparison.filter(pl.col("figure").is_in(list(figures))).with_columns(label)
    measured = pl.col("before").is_not_null() | pl.col("after").is_not_null()
    has_excess = (
        comparison.filter((pl.col("figure") == _PRIMARY[0]) & measured).select(keys).unique()
    )
    excess = comparison.filter(pl.col("figure") == _PRIMARY[0]).join(
        has_excess, on=keys, how="semi", nulls_equal=True
    )
    mean = comparison.filter(pl.col("figure") == _PRIMARY[1]).join(
        has_excess, on=keys, how="anti", nulls_equal=True
    )
    return pl.concat([excess, mean]).sort(keys, nulls_last=True).with_columns(label)


def _limit(max_regression: float | Mapping[str, float], metrics: list[str]) -> pl.Expr:
    if not isinstance(max_regression, Mapping):
        return pl.lit(check_threshold(max_regression, REGRESSION_GATE), pl.Float64)
    values = {
        str(m): check_threshold(v, f"{REGRESSION_GATE}[{m!r}]") for m, v in max_regression.items()
    }
    unknown = [m for m in values if m not in metrics]
    if unknown:
        raise GateError(
            f"{REGRESSION_GATE} names metric {unknown[0]!r}, which the comparison does not have "
            f"(its metrics: {', '.join(sorted(metrics))})."
        )
    absent = [m for m in metrics if m not in values]
    if absent:
        raise GateError(
            f"{REGRESSION_GATE} has no allowance for metric {absent[0]!r}: give every metric "
            "one, or one number for all."
        )
    return pl.col("metric").replace_strict(values, return_dtype=pl.Float64)


def _note(familywise: Adjust, min_groups: int) -> pl.Expr:
    shown = pl.format(
        "{} {} -> {}, change {} (worse by at most {} at the bound)",
        pl.col("figure"),
        _round(pl.col("before")),
        _round(pl.col("after")),
        _round(pl.col("delta")),
        _round(pl.col("__unfavourable")),
    )
    how = "" if familywise is None else f", {familywise}-adjusted over the slices checked"
    status = pl.col("status")
    return (
        pl.when(pl.col("delta").is_null())
        .then(
            pl.format(
                "{}: not measured in both runs ({} groups paired): unknown is not fair",
                pl.col("figure"),
                pl.col("n_groups"),
            )
        )
        .when(status == "fail")
        .then(
            pl.format(
                "{}; worse beyond the allowance (p = {}{})",
                shown,
                _round(pl.col("p_fail")),
                pl.lit(how),
            )
        )
        .when(status == "pass")
        .then(shown)
        .when(pl.col("n_groups") < min_groups)
        .then(
            pl.format(
                "{}; {} groups paired, under min_groups={}",
                shown,
                pl.col("n_groups"),
                pl.lit(min_groups),
            )
        )
        .otherwise(pl.format("{}; the interval straddles the allowance", shown))
    )


def _round(value: pl.Expr) -> pl.Expr:
    return value.round(4).cast(pl.String).fill_null("none")


def with_regression(gates: GateResult, regression: GateResult) -> GateResult:
    """One verdict from a run's gates and its regression gate: every check of both, the run's
    judge notes, and the corrections of both families (each judged apart)."""
    checks = pl.concat([gates.checks, regression.checks], how="diagonal_relaxed")
    corrections = [
        f"{result.familywise} on the {name}"
        for result, name in ((gates, "fairness gates"), (regression, "regression gate"))
        if result.familywise != "none"
    ]
    return dataclasses.replace(
        gates,
        passed=gates.passed and regression.passed,
        checks=checks,
        familywise=", ".join(corrections) or "none",
        family=gates.family + regression.family,
    )
