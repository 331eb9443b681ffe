"""Results joined back to pairs: one row per (pair, metric) with the score and how it came
about; both orders averaged, with the position gap, when both were asked."""

from __future__ import annotations

import polars as pl

from pairwise_polars._schemas import RESULT_SCHEMA
from pairwise_polars.pairing import SKIP_REASON
from pairwise_polars.scoring._requests import ROW
from pairwise_polars.scoring._spec import ScoringSpec
from pairwise_polars.scoring._views import AB, BA, VIEW, is_swapped

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
SHOWN_FIRST = "shown_first"
"""Scored column: which side the judge saw first, ``"a"`` or ``"b"``, or ``"both"`` when both
orders were judged; null when the pair was not judged."""


def conform_results(frame: pl.DataFrame) -> pl.DataFrame:
    """A judge's result frame with exactly the RESULT_SCHEMA columns and types."""
    if frame.schema == RESULT_SCHEMA:  # the common case, checked first: it is per answer
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
) -> pl.DataFrame:
    """One row per (pair, metric): each view's results folded back by its combine rule (the
    order views: the one shown, or both averaged with the position gap)."""
    metrics, both_orders = spec.metrics, spec.both_orders
    per_order = keyed.join(results, on="key", how="left")
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
    value_cols = [c for c in RESULT_COLUMNS if c != "metric"]
    if both_orders:
        ab = per_order.filter(pl.col(VIEW) == AB).select(ROW, "metric", *value_cols)
        ba = per_order.filter(pl.col(VIEW) == BA).select(ROW, "metric", *value_cols)
        both = ab.join(ba, on=[ROW, "metric"], how="full", coalesce=True, suffix="_ba")
        scored = both.select(
            ROW,
            "metric",
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
    else:
        shown = pl.when(is_swapped(pl.col(VIEW))).then(pl.lit("b")).otherwise(pl.lit("a"))
        scored = per_order.select(ROW, "metric", *value_cols, shown.alias(SHOWN_FIRST))

    metric_order = pl.DataFrame({"metric": [m.name for m in metrics]}).with_row_index("__m")
    skip = pl.col(SKIP_REASON)
    out = (
        pairs.join(metric_order, how="cross")
        .join(scored, on=[ROW, "metric"], how="left")
        .with_columns(
            error=pl.when(skip.is_not_null())
            .then(pl.lit("not judged: ") + skip)
            .otherwise(pl.col("error")),
            attempts=pl.col("attempts").fill_null(0),
            cached=pl.col("cached").fill_null(False),
        )
        .sort(ROW, "__m")
    )
    extra = [*ORDER_COLUMNS, SHOWN_FIRST] if both_orders else [SHOWN_FIRST]
    pair_cols = [c for c in pairs.columns if c != ROW]
    return out.select(*pair_cols, *RESULT_COLUMNS, *extra)
