"""Each judge side by side: its mean, its agreement with the rest of the panel, its reaction to
the attribute itself (from the masked view, when judged), its position bias and its spread."""

from __future__ import annotations

import polars as pl

from pairwise_polars._errors import ColumnError
from pairwise_polars.io._frames import DataLike, to_lazy
from pairwise_polars.pairing import PAIR_KIND
from pairwise_polars.summary._judge_rows import has_members, members_only
from pairwise_polars.summary._krippendorff import ALPHA_SUMS, alpha_expr, unit_sums

REPORT_COLUMNS = (
    "metric",
    "judge_model",
    "n_scored",
    "n_errors",
    "mean_score",
    "agreement_with_rest",
    "panel_agreement_without",
    "attribute_effect",
    "mean_position_gap",
    "position_flip_rate",
    "repeat_sd",
    "concern",
)
_VIEW = "view"
_JUMP = 0.1
"""How much the panel's alpha must rise without a judge for the report to name it."""


def judge_report(scored: DataLike, *, equivalence_threshold: float = 0.0) -> pl.DataFrame:
    """One row per (metric, judge) of a scored frame judged by a panel or with repeats:
    ``n_scored``, ``n_errors``, ``mean_score`` (its mean over counterfactual pairs),
    ``agreement_with_rest`` (Krippendorff's alpha between the judge and the mean of the other
    judges), ``panel_agreement_without`` (the panel's alpha without this judge),
    ``attribute_effect`` (its mean plain minus masked score where the frame has a ``view``
    column with ``"masked"`` rows), ``mean_position_gap`` / ``position_flip_rate`` (where both
    orders were judged), ``repeat_sd`` (the spread of its repeated answers) and ``concern``,
    a sentence naming a judge the panel agrees better without.

    >>> import polars as pl
    >>> scored = pl.DataFrame({"metric": "m", "group_id": [1, 1, 1, 2, 2, 2],
    ...     "pair_id": [1, 1, 1, 2, 2, 2], "judge_model": ["a", "b", "panel"] * 2,
    ...     "repeat": [0, 0, None] * 2, "score": [0.0, 0.0, 0.0, 1.0, 1.0, 1.0], "error": None})
    >>> judge_report(scored).select("judge_model", "mean_score").rows()
    [('a', 0.5), ('b', 0.5)]
    """
    frame = to_lazy(scored)[0]
    schema = frame.collect_schema()
    if not has_members(schema):
        raise ColumnError(
            "judge_report needs a frame judged by a panel or with repeats (a 'repeat' column): "
            "score(..., judge=[judge_a, judge_b], repeats=k)."
        )
    rows = members_only(frame)
    if PAIR_KIND in schema:
        rows = rows.filter(~pl.col(PAIR_KIND).cast(pl.String).eq_missing("control"))
    masked = None
    if _VIEW in schema:
        masked = rows.filter(pl.col(_VIEW) == "masked").collect()
        rows = rows.filter(pl.col(_VIEW).is_null() | (pl.col(_VIEW) != "masked"))
    members = rows.collect()
    keys = ["metric", "judge_model"]
    score = pl.col("score")
    base = members.group_by(keys).agg(
        n_scored=score.is_not_null().sum().cast(pl.Int64),
        n_errors=pl.col("error").is_not_null().sum().cast(pl.Int64),
        mean_score=score.mean(),
    )
    out = base.join(_agreement(members), on=keys, how="left")
    out = out.join(_position(members, equivalence_threshold), on=keys, how="left")
    out = out.join(_spread(members), on=keys, how="left")
    out = out.join(_attribute(members, masked), on=keys, how="left")
    best = pl.col("panel_agreement_without") - pl.col("__panel")
    concern = pl.when(best > _JUMP).then(
        pl.lit("the panel agrees better without this judge (alpha ")
        + pl.col("__panel").round(2).cast(pl.String)
        + pl.lit(" -> ")
        + pl.col("panel_agreement_without").round(2).cast(pl.String)
        + pl.lit("): check its answers")
    )
    return (
        out.with_columns(concern=concern)
        .select([pl.col(c) for c in REPORT_COLUMNS])
        .sort(keys, nulls_last=True)
    )


def _judge_values(members: pl.DataFrame) -> pl.DataFrame:
    return (
        members.filter(pl.col("score").is_not_null())
        .group_by("metric", "pair_id", "judge_model")
        .agg(value=pl.col("score").mean())
    )


def _alpha(values: pl.DataFrame, unit: list[str]) -> pl.DataFrame:
    """Alpha per ``metric`` of ``values`` (one per rater and unit)."""
    return (
        values.group_by(unit)
        .agg(unit_sums(pl.col("value"), pl.len()))
        .group_by("metric")
        .agg(pl.col(ALPHA_SUMS).sum())
        .select("metric", alpha=alpha_expr())
    )


def _agreement(members: pl.DataFrame) -> pl.DataFrame:
    values = _judge_values(members)
    judges = values["judge_model"].unique().sort().to_list()
    panel = _alpha(values, ["metric", "pair_id"]).rename({"alpha": "__panel"})
    parts = []
    for judge in judges:
        own = values.filter(pl.col("judge_model") == judge)
        rest = (
            values.filter(pl.col("judge_model") != judge)
            .group_by("metric", "pair_id")
            .agg(value=pl.col("value").mean())
        )
        pair = pl.concat([own.drop("judge_model"), rest]).pipe(_alpha, ["metric", "pair_id"])
        without = _alpha(values.filter(pl.col("judge_model") != judge), ["metric", "pair_id"])
        parts.append(
            pair.rename({"alpha": "agreement_with_rest"})
            .join(without.rename({"alpha": "panel_agreement_without"}), on="metric", how="left")
            .with_columns(judge_model=pl.lit(judge))
        )
    schema = {
        "metric": pl.String,
        "agreement_with_rest": pl.Float64,
        "panel_agreement_without": pl.Float64,
        "judge_model": pl.String,
    }
    if len(judges) < 2:
        return pl.DataFrame(schema={**schema, "__panel": pl.Float64})
    return pl.concat(parts, how="diagonal_relaxed").join(panel, on="metric", how="left")


def _position(members: pl.DataFrame, threshold: float) -> pl.DataFrame:
    keys = ["metric", "judge_model"]
    if not {"score_ab", "score_ba"} <= set(members.columns):
        return (
            members.select(keys)
            .unique()
            .with_columns(
                mean_position_gap=pl.lit(None, pl.Float64),
                position_flip_rate=pl.lit(None, pl.Float64),
            )
        )
    ab, ba = pl.col("score_ab"), pl.col("score_ba")
    both = ab.is_not_null() & ba.is_not_null()
    return members.group_by(keys).agg(
        mean_position_gap=(ab - ba).abs().filter(both).mean(),
        position_flip_rate=((ab <= threshold) != (ba <= threshold)).filter(both).mean(),
    )


def _spread(members: pl.DataFrame) -> pl.DataFrame:
    score = pl.col("score")
    per = members.filter(score.is_not_null()).group_by("metric", "judge_model", "pair_id")
    per = per.agg(n=pl.len(), ss=(score * score).sum() - score.sum() ** 2 / pl.len())
    dof = (pl.col("n") - 1).sum()
    return per.group_by("metric", "judge_model").agg(
        repeat_sd=pl.when(dof > 0).then((pl.col("ss").clip(0.0).sum() / dof).sqrt())
    )


def _attribute(members: pl.DataFrame, masked: pl.DataFrame | None) -> pl.DataFrame:
    keys = ["metric", "judge_model"]
    if masked is None or masked.is_empty():
        return members.select(keys).unique().with_columns(attribute_effect=pl.lit(None, pl.Float64))
    on = [c for c in ("metric", "judge_model", "pair_id", "repeat") if c in members.columns]
    plain = members.select(*on, "score")
    hidden = masked.select(*on, pl.col("score").alias("masked_score"))
    both = plain.join(hidden, on=on, how="inner").drop_nulls(["score", "masked_score"])
    return both.group_by(keys).agg(
        attribute_effect=(pl.col("score") - pl.col("masked_score")).mean()
    )
