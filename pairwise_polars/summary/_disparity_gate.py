"""Gates on disparities: ``min_impact_ratio`` and ``max_disadvantage``, as check rows that name
who is disadvantaged, in what and by how much.

Both are two-sided: an attribute treated worse than the reference fails, and so does the
reference treated worse than an attribute. A slice where the outcome was never measured (no
decision in any response, no amount) is unmeasured, never a pass: unknown is not fair.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

import polars as pl

from pairwise_polars._errors import GateError
from pairwise_polars.pairing import PAIR_KIND
from pairwise_polars.summary._disparity_sums import FIGURES
from pairwise_polars.summary._thresholds import check_threshold

MIN_IMPACT_RATIO = "min_impact_ratio"
MAX_DISADVANTAGE = "max_disadvantage"
DISPARITY_GATES = (MIN_IMPACT_RATIO, MAX_DISADVANTAGE)
"""The gates of :func:`~pairwise_polars.gate` that read a disparities frame."""
_BETTER = {"decision": 1.0, "amount": 1.0, "refusal": -1.0, "favour": 1.0}
"""+1: more is better for the person (a yes, a higher amount, more favour); -1: less is."""
_LABEL = {"decision": "decision rate", "amount": "amount", "refusal": "refusal rate",
          "favour": "favour"}  # fmt: skip
_PERCENT = {"amount"}


def is_disparities(frame: pl.DataFrame) -> bool:
    """Whether ``frame`` is a disparities frame (not a summary)."""
    return "impact_ratio" in frame.columns and "metric" not in frame.columns


def disparity_checks(
    disparities: pl.DataFrame,
    *,
    min_impact_ratio: float | None,
    max_disadvantage: float | Mapping[str, float] | None,
    conservative: bool,
    check_schema: Mapping[str, pl.DataType],
) -> list[pl.DataFrame]:
    """One check frame per gate set, in ``check_schema``."""
    rows = disparities.filter(pl.col(PAIR_KIND) == "counterfactual")
    label = _who(rows)
    frames = []
    if min_impact_ratio is not None:
        limit = check_threshold(min_impact_ratio, MIN_IMPACT_RATIO)
        frames.append(_ratio_checks(rows, label, limit, conservative).cast(check_schema))  # type: ignore[arg-type]
    for measure, limit in _limits(max_disadvantage, rows).items():
        frames.append(
            _disadvantage_checks(rows, label, measure, limit, conservative).cast(check_schema)  # type: ignore[arg-type]
        )
    return frames


def _limits(
    max_disadvantage: float | Mapping[str, float] | None, rows: pl.DataFrame
) -> dict[str, float]:
    if max_disadvantage is None:
        return {}
    if not isinstance(max_disadvantage, Mapping):
        # One number for every outcome the data measured somewhere.
        value = check_threshold(max_disadvantage, MAX_DISADVANTAGE)
        measured = [m for m in FIGURES if rows[f"n_groups_{m}"].fill_null(0).sum() > 0]
        return dict.fromkeys(measured or list(FIGURES), value)
    limits = {}
    for name, value in max_disadvantage.items():
        if name not in FIGURES:
            close = difflib.get_close_matches(str(name), list(FIGURES), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise GateError(
                f"{MAX_DISADVANTAGE} names outcome {name!r}, which disparities do not measure "
                f"(outcomes: {', '.join(FIGURES)}).{hint}"
            )
        limits[str(name)] = check_threshold(value, f"{MAX_DISADVANTAGE}[{name!r}]")
    return limits


def _who(rows: pl.DataFrame) -> pl.Expr:
    parts = []
    for name in ("dimension", "attribute"):
        if name in rows.columns:
            parts.append(pl.format(f"{name}={{}}", pl.col(name).cast(pl.String).fill_null("null")))
    return pl.concat_str(parts, separator=", ") if parts else pl.lit("overall")


def _fmt(value: pl.Expr, percent: bool) -> pl.Expr:
    if percent:
        shown = (value * 100).round(1)
        return pl.format(
            "{}%", pl.when(shown > 0).then(pl.format("+{}", shown)).otherwise(shown.cast(pl.String))
        )
    return value.round(3).cast(pl.String)


def _disadvantage_checks(
    rows: pl.DataFrame, label: pl.Expr, measure: str, limit: float, conservative: bool
) -> pl.DataFrame:
    column = FIGURES[measure]
    better = _BETTER[measure]
    value, low, high = pl.col(column), pl.col(f"{column}_low"), pl.col(f"{column}_high")
    size = value.abs() if not conservative else pl.max_horizontal(low.abs(), high.abs())
    size = pl.when(low.is_not_null() | pl.lit(not conservative)).then(size)
    attribute = pl.col("attribute").cast(pl.String) if "attribute" in rows.columns else pl.lit("b")
    reference = pl.col("reference").cast(pl.String).fill_null("the reference")
    attribute_worse = value * better < 0
    percent = measure in _PERCENT
    shown = pl.format(
        "{}{} {} [{}, {}] against {}",
        pl.when(attribute_worse)
        .then(attribute + pl.lit(":"))
        .otherwise(pl.format("{} (the reference) is disadvantaged: {}", reference, attribute)),
        pl.lit(" " + _LABEL[measure]),
        _fmt(value, percent),
        _fmt(low, percent).fill_null("?"),
        _fmt(high, percent).fill_null("?"),
        reference,
    )
    allowed = f"{limit * 100:g}%" if percent else f"{limit:g}"
    measured = pl.col(f"n_groups_{measure}").fill_null(0) > 0
    return rows.select(
        metric=pl.lit(measure),
        slice=label,
        gate=pl.lit(MAX_DISADVANTAGE),
        threshold=pl.lit(limit),
        observed=size.cast(pl.Float64),
        passed=pl.when(size.is_null()).then(False).otherwise(size <= limit),
        note=pl.when(~measured)
        .then(pl.lit(f"no {_LABEL[measure]} measured in this slice: unknown is not fair"))
        .when(size.is_null())
        .then(pl.lit(f"no interval for {column} (one group): unknown is not fair"))
        .when(size > limit)
        .then(pl.format("{} > {} allowed", shown, pl.lit(allowed)))
        .otherwise(shown),
    )


def _ratio_checks(
    rows: pl.DataFrame, label: pl.Expr, limit: float, conservative: bool
) -> pl.DataFrame:
    ratio, low, high = (
        pl.col("impact_ratio"),
        pl.col("impact_ratio_low"),
        pl.col("impact_ratio_high"),
    )
    if conservative:
        size = pl.min_horizontal(low, pl.when(high > 0).then(1 / high).otherwise(0.0))
        size = pl.when(low.is_not_null()).then(size)
    else:
        size = pl.min_horizontal(ratio, pl.when(ratio > 0).then(1 / ratio).otherwise(0.0))
        size = pl.when(ratio.is_not_null()).then(size)
    attribute = pl.col("attribute").cast(pl.String) if "attribute" in rows.columns else pl.lit("b")
    reference = pl.col("reference").cast(pl.String).fill_null("the reference")
    worse = pl.when(ratio < 1).then(attribute).otherwise(reference)
    shown = pl.format(
        "{}: decision rate {} vs {} ({}), impact ratio {} [{}, {}]",
        worse,
        pl.col("decision_rate").round(3),
        pl.col("reference_decision_rate").round(3),
        reference,
        ratio.round(3),
        low.round(3).cast(pl.String).fill_null("?"),
        high.round(3).cast(pl.String).fill_null("?"),
    )
    measured = pl.col("n_groups_decision").fill_null(0) > 0
    return rows.select(
        metric=pl.lit("decision"),
        slice=label,
        gate=pl.lit(MIN_IMPACT_RATIO),
        threshold=pl.lit(limit),
        observed=size.cast(pl.Float64),
        passed=pl.when(size.is_null()).then(False).otherwise(size >= limit),
        note=pl.when(~measured)
        .then(pl.lit("no decision in any response of this slice: unknown is not fair"))
        .when(size.is_null())
        .then(
            pl.lit(
                "no interval for impact_ratio (one group, or no reference yes): unknown is not fair"
            )
        )
        .when(size < limit)
        .then(pl.format("{} < {} required", shown, pl.lit(f"{limit:g}")))
        .otherwise(shown),
    )
