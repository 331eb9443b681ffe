"""Results joined back to pairs: one row per (pair, metric) with the score and how it came
about; both orders averaged, with the position gap, when both were asked."""

from __future__ import annotations

import polars as pl

from pairwise_polars._schemas import RESULT_SCHEMA
from pairwise_polars.pairing import SKIP_REASON
from pairwise_polars.scoring._requests import ROW
from pairwise_polars.scoring._spec import ScoringSpec
from pairwise_polars.scoring._views import (
    AB,
    AUDIT,
    BA,
    MASKED,
    PLAIN,
    VIEW,
    audit_view,
    is_swapped,
    order_of,
)

RESULT_COLUMNS = (
    "metric",
    "score",
    "raw_score",
    "reason",
    "error",
    "judge_model",
    "attempts",
    "latency_s",
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "cached",
    "score_source",
)
OPTIONAL = ("cached_tokens", "expected_score", "score_source")
"""Result columns a judge may leave out (null then): judges written before they existed."""
ORDER_COLUMNS = ("score_ab", "score_ba", "position_gap", "reason_ba")
"""Added with both orders: each order's score, their absolute difference, and the (b, a) order's
reason (``reason`` is the (a, b) order's)."""
AUDIT_COLUMN = "view"
"""Scored column with ``audit="mask"``: ``"plain"`` or ``"masked"`` (the judgement of the pair
with the attribute's terms masked)."""
SHOWN_FIRST = "shown_first"
"""Scored column: which side the judge saw first, ``"a"`` or ``"b"``, or ``"both"`` when both
orders were judged; null when the pair was not judged."""


_PLAIN = (pl.String, pl.Int64, pl.Float64, pl.Boolean)
"""Types without parameters (no unit, zone, width or inner type): the class is the type."""
_NAMES = list(RESULT_SCHEMA)
_CLASSES = tuple(map(type, RESULT_SCHEMA.values()))
_BY_CLASS = all(isinstance(t, _PLAIN) for t in RESULT_SCHEMA.values())


def conform_results(frame: pl.DataFrame) -> pl.DataFrame:
    """A judge's result frame with exactly the RESULT_SCHEMA columns and types."""
    # The common case, checked first: it runs per result frame. Comparing the dtypes' classes
    # is exact for parameterless types and measured ~9x faster than comparing the schemas.
    if _BY_CLASS and frame.columns == _NAMES and tuple(map(type, frame.dtypes)) == _CLASSES:
        return frame
    if frame.schema == RESULT_SCHEMA:
        return frame
    return frame.select(
        [
            pl.lit(None, t).alias(c)
            if c in OPTIONAL and c not in frame.columns
            else pl.col(c).cast(t)
            for c, t in RESULT_SCHEMA.items()
        ]
    )


def _both_sources() -> pl.Expr:
    """One order's ``score_source`` when both orders agree, else each order's, labelled."""
    labelled = [
        pl.lit("order a,b: ") + pl.col("score_source"),
        pl.lit("order b,a: ") + pl.col("score_source_ba"),
    ]
    return (
        pl.when(pl.col("score_source") == pl.col("score_source_ba"))
        .then(pl.col("score_source"))
        .otherwise(pl.concat_str(labelled, separator="; ", ignore_nulls=True).replace("", None))
    )


def join_back(
    pairs: pl.DataFrame,
    keyed: pl.DataFrame,
    results: pl.DataFrame,
    spec: ScoringSpec,
    not_masked: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """One row per (pair, metric), or with ``audit="mask"`` per (pair, metric, audit view):
    each view's results folded back by its combine rule (the order views: the one shown, or
    both averaged with the position gap; the audit views: a row each, ``view`` telling them
    apart). A pair in ``not_masked`` gets a masked row that names why it was not judged."""
    metrics, both_orders = spec.metrics, spec.both_orders
    per_order = keyed.join(results, on="key", how="left").with_columns(
        audit_view(pl.col(VIEW)).alias(AUDIT)
    )
    # The score: the rubric's expectation (score_from="logprobs") where there is one, else the
    # written answer; raw_score is always the written answer.
    answer = pl.coalesce("expected_score", pl.col("raw_score").cast(pl.Float64))
    signed = [m.name for m in metrics if m.signed]
    if signed:
        # A signed answer is relative to the side the judge saw first: turned back to (a, b).
        is_signed = pl.col("metric").is_in(signed)
        centre = pl.when(is_signed).then(pl.col("max_score") // 2).otherwise(0)
        top = pl.when(is_signed).then(pl.col("max_score") // 2).otherwise(pl.col("max_score"))
        sign = pl.when(is_signed & is_swapped(pl.col(VIEW))).then(-1).otherwise(1)
        raw = (pl.col("raw_score") - centre) * sign
        per_order = per_order.with_columns(
            score=((answer - centre) * sign / top).cast(pl.Float64),
            raw_score=raw.cast(pl.Float64),
        )
    else:
        per_order = per_order.with_columns(
            score=(answer / pl.col("max_score")).cast(pl.Float64),
            raw_score=pl.col("raw_score").cast(pl.Float64),
        )
    scored = _both_orders(per_order) if both_orders else _one_order(per_order)
    audited = spec.audit is not None
    views = pl.DataFrame({AUDIT: [PLAIN, MASKED] if audited else [PLAIN]}).with_row_index("__v")
    metric_order = pl.DataFrame({"metric": [m.name for m in metrics]}).with_row_index("__m")
    skip = pl.col(SKIP_REASON)
    if audited and not_masked is not None:
        missing = not_masked.select(
            ROW, pl.lit(MASKED).alias(AUDIT), pl.col("reason").alias("__unmasked")
        )
        skip = pl.coalesce(skip, pl.col("__unmasked"))
    out = pairs.join(metric_order, how="cross").join(views, how="cross")
    if audited and not_masked is not None:
        out = out.join(missing, on=[ROW, AUDIT], how="left")
    out = (
        out.join(scored, on=[ROW, "metric", AUDIT], how="left")
        .with_columns(
            error=pl.when(skip.is_not_null())
            .then(pl.lit("not judged: ") + skip)
            .otherwise(pl.col("error")),
            attempts=pl.col("attempts").fill_null(0),
            cached=pl.col("cached").fill_null(False),
        )
        .sort(ROW, "__m", "__v")
    )
    extra: list[str | pl.Expr] = [*ORDER_COLUMNS, SHOWN_FIRST] if both_orders else [SHOWN_FIRST]
    if audited:
        extra.append(pl.col(AUDIT).alias(AUDIT_COLUMN))
    pair_cols = [c for c in pairs.columns if c != ROW]
    return out.select(*pair_cols, *RESULT_COLUMNS, *extra)


def _one_order(per_order: pl.DataFrame) -> pl.DataFrame:
    value_cols = [c for c in RESULT_COLUMNS if c != "metric"]
    shown = pl.when(is_swapped(pl.col(VIEW))).then(pl.lit("b")).otherwise(pl.lit("a"))
    return per_order.select(ROW, "metric", AUDIT, *value_cols, shown.alias(SHOWN_FIRST))


def _both_orders(per_order: pl.DataFrame) -> pl.DataFrame:
    """Both order views of each (pair, metric, audit view) folded into one row: the mean
    score, the position gap, each order's errors labelled."""
    value_cols = [c for c in RESULT_COLUMNS if c != "metric"]
    on = [ROW, "metric", AUDIT]
    order = order_of(pl.col(VIEW))
    ab = per_order.filter(order == AB).select(*on, *value_cols)
    ba = per_order.filter(order == BA).select(*on, *value_cols)
    both = ab.join(ba, on=on, how="full", coalesce=True, suffix="_ba")
    return both.select(
        *on,
        score=(pl.col("score") + pl.col("score_ba")) / 2,
        raw_score=(pl.col("raw_score") + pl.col("raw_score_ba")) / 2,
        reason=pl.col("reason"),
        error=pl.concat_str(
            [
                pl.lit("order a,b: ") + pl.col("error"),
                pl.lit("order b,a: ") + pl.col("error_ba"),
            ],
            separator="; ",
            ignore_nulls=True,
        ).replace("", None),
        judge_model=pl.coalesce("judge_model", "judge_model_ba"),
        attempts=pl.col("attempts") + pl.col("attempts_ba"),
        latency_s=pl.col("latency_s") + pl.col("latency_s_ba"),
        input_tokens=pl.col("input_tokens") + pl.col("input_tokens_ba"),
        output_tokens=pl.col("output_tokens") + pl.col("output_tokens_ba"),
        cached_tokens=pl.col("cached_tokens") + pl.col("cached_tokens_ba"),
        cached=pl.col("cached") & pl.col("cached_ba"),
        score_source=_both_sources(),
        score_ab=pl.col("score"),
        score_ba=pl.col("score_ba"),
        position_gap=(pl.col("score") - pl.col("score_ba")).abs(),
        reason_ba=pl.col("reason_ba"),
        shown_first=pl.when(
            pl.col("attempts").is_not_null() | pl.col("attempts_ba").is_not_null()
        ).then(pl.lit("both")),
    )
