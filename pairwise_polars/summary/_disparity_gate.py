"""Gates on disparities: ``min_impact_ratio`` and ``max_disadvantage``, as check rows that name
who is disadvantaged, in what and by how much.

Both are two-sided (an attribute treated worse than the reference fails, and so does the
reference treated worse than an attribute) and three-way, like every fairness gate: a check
passes when the interval's unfavourable end (the end farthest from parity) is within the
threshold and the slice has at least ``min_groups`` groups; it fails when even the favourable
end (the end nearest parity) is beyond it; otherwise it is inconclusive. ``conservative`` is the
one-sided reading: fail whenever the unfavourable end is beyond. A slice where the outcome was
never measured (no decision in any response, no amount) is inconclusive, never a pass.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

import polars as pl

from pairwise_polars._errors import GateError
from pairwise_polars.pairing import PAIR_KIND
from pairwise_polars.summary._disparity_sums import FIGURES
from pairwise_polars.summary._ppi import CORRECTED
from pairwise_polars.summary._thresholds import check_threshold

MIN_IMPACT_RATIO = "min_impact_ratio"
MAX_DISADVANTAGE = "max_disadvantage"
DISPARITY_GATES = (MIN_IMPACT_RATIO, MAX_DISADVANTAGE)
"""The gates of :func:`~pairwise_polars.gate` that read a disparities frame."""
DISPARITY_MIN_GROUPS = 30
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
    min_groups: int = DISPARITY_MIN_GROUPS,
) -> list[pl.DataFrame]:
    """One check frame per gate (and outcome) set, in ``check_schema``."""
    rows = disparities.filter(pl.col(PAIR_KIND) == "counterfactual")
    label = _who(rows)
    frames = []
    if min_impact_ratio is not None:
        limit = check_threshold(min_impact_ratio, MIN_IMPACT_RATIO)
        frames.append(_ratio_checks(rows, label, limit))
    for measure, limit in _limits(max_disadvantage, rows).items():
        frames.append(_disadvantage_checks(rows, label, measure, limit))
    out = []
    for frame in frames:
        checked = _three_way(frame, conservative, min_groups)
        columns = {**check_schema, "status": pl.String()}  # three-way, whatever the schema
        out.append(checked.select([pl.col(c).cast(t) for c, t in columns.items()]))
    return out


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
    parts = [
        pl.format(f"{name}={{}}", pl.col(name).cast(pl.String).fill_null("null"))
        for name in ("dimension", "attribute")
        if name in rows.columns
    ]
    return pl.concat_str(parts, separator=", ") if parts else pl.lit("overall")


def _fmt(value: pl.Expr, percent: bool) -> pl.Expr:
    if not percent:
        return value.round(3).cast(pl.String)
    shown = (value * 100).round(1)
    sign = pl.when(shown > 0).then(pl.lit("+")).otherwise(pl.lit(""))
    return pl.format("{}{}%", sign, shown)


def _names() -> tuple[pl.Expr, pl.Expr]:
    return (
        pl.col("attribute").cast(pl.String).fill_null("null"),
        pl.col("reference").cast(pl.String).fill_null("the reference"),
    )


def _disadvantage_checks(
    rows: pl.DataFrame, label: pl.Expr, measure: str, limit: float
) -> pl.DataFrame:
    """Sizes of the disadvantage: the estimate's, the unfavourable and favourable ends'."""
    column = FIGURES[measure]
    value, low, high, corrected = _corrected(rows, column)
    attribute, reference = _names() if "attribute" in rows.columns else (pl.lit("b"), _names()[1])
    attribute_worse = value * _BETTER[measure] < 0
    percent = measure in _PERCENT
    shown = pl.format(
        "{}{} {} {} [{}, {}] against {}",
        corrected,
        pl.when(attribute_worse)
        .then(attribute + pl.lit(":"))
        .otherwise(pl.format("{} (the reference) is disadvantaged: {}", reference, attribute)),
        pl.lit(_LABEL[measure]),
        _fmt(value, percent),
        _fmt(low, percent).fill_null("?"),
        _fmt(high, percent).fill_null("?"),
        reference,
    )
    allowed = f"{limit * 100:g}%" if percent else f"{limit:g}"
    straddles = (low <= 0) & (high >= 0)
    return rows.select(
        metric=pl.lit(measure),
        slice=label,
        gate=pl.lit(MAX_DISADVANTAGE),
        threshold=pl.lit(limit),
        __est=value.abs(),
        __unf=pl.when(low.is_not_null()).then(pl.max_horizontal(low.abs(), high.abs())),
        __fav=pl.when(straddles)
        .then(0.0)
        .when(low.is_not_null())
        .then(pl.min_horizontal(low.abs(), high.abs())),
        __groups=pl.col(f"n_groups_{measure}").fill_null(0),
        __shown=pl.format("{} (at most {} allowed)", shown, pl.lit(allowed)),
        __missing=pl.lit(f"no {_LABEL[measure]} measured in this slice: unknown is not fair"),
        __direction=pl.lit("max"),
    )


def _corrected(rows: pl.DataFrame, column: str) -> tuple[pl.Expr, pl.Expr, pl.Expr, pl.Expr]:
    """The figure, its bounds and a note: people's corrected figure (``<column>_ppi``) where
    the slice has one, as :func:`~pairwise_polars.gate` uses the summary's, else the judge's."""
    judged = [pl.col(f"{column}{end}") for end in ("", "_low", "_high")]
    if f"{column}_ppi" not in rows.columns:
        return judged[0], judged[1], judged[2], pl.lit("")
    has = pl.col(f"{column}_ppi").is_not_null()
    value, low, high = (
        pl.when(has).then(pl.col(f"{column}_ppi{end}")).otherwise(judge)
        for end, judge in zip(("", "_low", "_high"), judged, strict=True)
    )
    note = pl.when(has).then(
        pl.format("{} (n_labelled={}): ", pl.lit(CORRECTED), pl.col("n_labelled"))
    )
    return value, low, high, note.otherwise(pl.lit(""))


def _ratio_checks(rows: pl.DataFrame, label: pl.Expr, limit: float) -> pl.DataFrame:
    """Sizes as ``min(R, 1/R)``: 1 at parity, smaller the more one side is favoured."""
    ratio, low, high = (pl.col(f"impact_ratio{s}") for s in ("", "_low", "_high"))
    attribute, reference = _names() if "attribute" in rows.columns else (pl.lit("b"), _names()[1])

    def size(r: pl.Expr) -> pl.Expr:
        return pl.when(r.is_not_null()).then(
            pl.min_horizontal(r, pl.when(r > 0).then(1 / r).otherwise(0.0))
        )

    shown = pl.format(
        "{}: decision rate {} vs {} ({}), impact ratio {} [{}, {}]",
        pl.when(ratio < 1).then(attribute).otherwise(reference),
        pl.col("decision_rate").round(3),
        pl.col("reference_decision_rate").round(3),
        reference,
        ratio.round(3),
        low.round(3).cast(pl.String).fill_null("?"),
        high.round(3).cast(pl.String).fill_null("?"),
    )
    holds_parity = (low <= 1) & (high >= 1)
    return rows.select(
        metric=pl.lit("decision"),
        slice=label,
        gate=pl.lit(MIN_IMPACT_RATIO),
        threshold=pl.lit(limit),
        __est=size(ratio),
        __unf=pl.when(low.is_not_null()).then(pl.min_horizontal(size(low), size(high))),
        __fav=pl.when(holds_parity)
        .then(1.0)
        .when(low.is_not_null())
        .then(pl.max_horizontal(size(low), size(high))),
        __groups=pl.col("n_groups_decision").fill_null(0),
        __shown=pl.format("{} (at least {} required)", shown, pl.lit(f"{limit:g}")),
        __missing=pl.lit("no decision in any response of this slice: unknown is not fair"),
        __direction=pl.lit("min"),
    )


def _three_way(frame: pl.DataFrame, conservative: bool, min_groups: int) -> pl.DataFrame:
    t, est, unf, fav = (pl.col(c) for c in ("threshold", "__est", "__unf", "__fav"))
    is_min = pl.col("__direction") == "min"

    def ok(x: pl.Expr) -> pl.Expr:
        return pl.when(is_min).then(x >= t).otherwise(x <= t)

    groups = pl.col("__groups")
    nan = ~est.is_finite() | ~unf.is_finite() | ~fav.is_finite()  # NaN or infinite: unknown
    zero_width = (unf - fav).abs() <= 1e-12  # an interval that cannot exist vouches for nothing
    unknown = est.is_null() | unf.is_null() | fav.is_null() | nan.fill_null(True) | zero_width
    failing = ~ok(unf) if conservative else ~ok(fav)
    status = (
        pl.when(unknown)
        .then(pl.lit("inconclusive"))
        .when(failing)
        .then(pl.lit("fail"))
        .when(ok(unf) & (groups >= min_groups))
        .then(pl.lit("pass"))
        .otherwise(pl.lit("inconclusive"))
    )
    note = (
        pl.when(groups == 0)
        .then(pl.col("__missing"))
        .when(zero_width.fill_null(False) & ~nan.fill_null(True))
        .then(pl.lit("a zero-width interval: no spread to measure, so it cannot vouch; add groups"))
        .when(unknown)
        .then(pl.lit("one group: no interval, and unknown is not fair"))
        .when(status == "fail")
        .then(pl.col("__shown"))
        .when(status == "pass")
        .then(pl.col("__shown"))
        .when(groups < min_groups)
        .then(
            pl.format(
                "{}; {} groups, under min_groups={}", pl.col("__shown"), groups, pl.lit(min_groups)
            )
        )
        .otherwise(pl.format("{}; the interval straddles the threshold", pl.col("__shown")))
    )
    return frame.with_columns(status.alias("status")).select(
        "metric",
        "slice",
        "gate",
        "threshold",
        observed=pl.when(~unknown).then(unf if conservative else est).cast(pl.Float64),
        passed=pl.col("status") == "pass",
        status=pl.col("status"),
        note=note,
    )
