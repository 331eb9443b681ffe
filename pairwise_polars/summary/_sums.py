"""Stage one of a summary: mergeable sums per (metric, slice, group).

Everything a summary reports (counts, rates, the mean, their clustered intervals, the position
figures, the commonest error) is a function of these sums, and each sum over disjoint sets of a
group's rows adds up. So a distributed runner computes :func:`group_sums` (and
:func:`error_sums`) per block, adds the blocks with :func:`merge_sums`, and hands the result to
:func:`~pairwise_polars.summary._aggregate.combine`: the same figures as one local
:func:`~pairwise_polars.aggregate`, intervals included.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import polars as pl

from pairwise_polars._errors import ColumnError, OptionError

SCORED_SUMS = (
    "n_equivalent",
    "n_divergent",
    "score_sum",
    "score_sq_sum",
    "n_out_of_range",
    "n_both_orders",
    "position_gap_sum",
    "n_position_flips",
)
"""The per-group sums of the counterfactual pairs' scores and orders (see :func:`group_sums`)."""
CONTROL_SUMS = ("n_control", "n_control_scored", "n_control_errors", "control_score_sum")
"""The per-group sums of control pairs (see :func:`group_sums`)."""
SUM_COLUMNS = ("n_pairs", "n_scored", "n_errors", *SCORED_SUMS, *CONTROL_SUMS)
"""The columns of :func:`group_sums` besides the keys; each one adds up across blocks."""
ERROR_KIND = "error_kind"
PAIR_KIND = "pair_kind"
_CF, _SCORE, _CONTROL = "__pairwise_cf", "__pairwise_cf_score", "__pairwise_control_score"
_RAW = "__pairwise_score"
_ERROR = "__pairwise_error"
CODE = "__pairwise_code_"
"""The prefix of :func:`code_columns`."""
ERROR_KIND_LENGTH = 120
_SCALE = 2.0**96  # a group of up to 2^31 scores of 1 fits an Int128


def check_score_type(schema: pl.Schema, whose: str = "The scored frame's") -> None:
    """:class:`ColumnError` when ``score`` holds something other than numbers (text, booleans):
    cast to numbers, text would fail with a polars error and booleans would read as 0 and 1."""
    dtype = schema.get("score")
    if dtype is None or dtype == pl.Null or dtype.is_numeric():
        return
    raise ColumnError(
        f"{whose} column 'score' has type {dtype}, expected numbers (the normalised score in "
        "[0, 1], null where a pair was not judged). Pass the `score` column of a scored frame, "
        "or fix the values that are not numbers and cast it: "
        "scored.with_columns(pl.col('score').cast(pl.Float64))."
    )


def group_sums(
    frame: pl.LazyFrame,
    keys: Sequence[str],
    group_by: str,
    *,
    equivalence_threshold: float,
    divergence_threshold: float,
) -> pl.LazyFrame:
    """One row per (``keys``, group): counts and sums of the group's scored rows.

    Every figure but the control ones counts counterfactual pairs only (``pair_kind`` other
    than ``"control"``; all pairs without a ``pair_kind`` column): ``n_pairs`` rows,
    ``n_scored`` with a score, ``n_errors`` with an error (or, without an ``error`` column,
    without a score), ``n_equivalent`` scored ``<= equivalence_threshold``, ``n_divergent``
    scored ``>= divergence_threshold``, ``score_sum`` and ``score_sq_sum``; with both orders
    judged (``score_ab`` and ``score_ba``): ``n_both_orders``, ``position_gap_sum`` (sum of
    ``|score_ab - score_ba|``) and ``n_position_flips`` (pairs equivalent in one order and not
    in the other). Control pairs (``pair_kind == "control"``: two answers to the same input)
    give ``n_control``, ``n_control_scored``, ``n_control_errors`` (as ``n_errors``) and
    ``control_score_sum``. ``n_out_of_range``
    counts scores of either kind outside [0, 1] (or NaN), which the sums leave out. The frame
    must have ``score`` and the key columns; thresholds must be those the combine step reports.
    The sums of scores are exact (see :func:`exact_sum`): the same to the last bit whatever
    order a group's rows come in, and on either engine.
    """
    thresholds = (equivalence_threshold, divergence_threshold)
    return coded_group_sums(frame, keys, group_by, thresholds).select(*keys, group_by, *SUM_COLUMNS)


def coded_group_sums(
    frame: pl.LazyFrame, keys: Sequence[str], group_by: str, thresholds: tuple[float, float]
) -> pl.LazyFrame:
    """:func:`group_sums` (``thresholds``: the equivalence and divergence thresholds) and,
    after its columns, each text key's code (:func:`code_columns`), for a summary that numbers
    its slices from them instead of coding the texts again."""
    equivalence_threshold, divergence_threshold = thresholds
    schema = frame.collect_schema()
    # A signed metric's score (pairwise-favour, in [-1, 1]) diverges by its size.
    score = pl.col("score").cast(pl.Float64).abs()
    controls, orders = PAIR_KIND in schema, "score_ab" in schema and "score_ba" in schema
    # Helper columns, each computed once (and never literals inside the aggregation: polars
    # 1.32 panics on a filtered literal in a group context).
    helpers = [score.alias(_RAW)]
    if controls:
        is_control = pl.col(PAIR_KIND).cast(pl.String).eq_missing("control")
        helpers += [
            (~is_control).alias(_CF),
            pl.when(~is_control).then(score).alias(_SCORE),
            pl.when(is_control).then(score).alias(_CONTROL),
        ]
    frame = frame.with_columns(helpers)
    score = pl.col(_RAW)
    error = pl.col("error").is_not_null() if "error" in schema else score.is_null()
    cf = pl.col(_CF) if controls else None
    counted = pl.col(_SCORE) if controls else score
    sums = per_group(
        frame,
        keys,
        group_by,
        codes=True,
        n_pairs=(cf.sum() if cf is not None else pl.len()).cast(pl.Int64),
        n_scored=counted.is_not_null().sum().cast(pl.Int64),
        n_errors=(error if cf is None else error & cf).sum().cast(pl.Int64),
        n_equivalent=(counted <= equivalence_threshold).sum().cast(pl.Int64),
        n_divergent=(counted >= divergence_threshold).sum().cast(pl.Int64),
        score_sum=exact_sum(counted),
        score_sq_sum=exact_sum(counted * counted),
        # every score's size, control ones included, must lie in [0, 1] (NaN does not)
        n_out_of_range=(~(score <= 1)).sum().cast(pl.Int64),
        **(_order_sums(cf, equivalence_threshold) if orders else {}),
        **(_control_sums(cf, error) if cf is not None else {}),
    )
    zeros = {  # what the sums of absent columns add up to, without an aggregation each
        **({} if orders else {"n_both_orders": 0, "position_gap_sum": 0.0, "n_position_flips": 0}),
        **({} if controls else dict.fromkeys(CONTROL_SUMS, 0) | {"control_score_sum": 0.0}),
    }
    return sums.with_columns(
        pl.lit(v, pl.Float64 if isinstance(v, float) else pl.Int64).alias(c)
        for c, v in zeros.items()
    ).select(*keys, group_by, *SUM_COLUMNS, *code_columns(keys, schema))


def per_group(
    frame: pl.LazyFrame,
    keys: Sequence[str],
    group_by: str,
    *,
    codes: bool = False,
    **sums: pl.Expr,
) -> pl.LazyFrame:
    """``frame.group_by([*keys, group_by]).agg(**sums)``: the same rows, columns and types,
    grouped by whole numbers where it can: each text key by its code in a categorical of its
    own (the code names one text, so the groups are the same), its text taken back from the
    group's first row. Hashing each row's texts cost more than the sums (about 0.1 s of 0.25
    at 1M rows, two text keys). With ``codes``, the codes follow (:func:`code_columns`)."""
    schema = frame.collect_schema()
    texts = [k for k in keys if schema[k] == pl.String]
    if not texts:
        return frame.group_by([*keys, group_by]).agg(**sums)
    coded = code_columns(texts, schema)
    return (
        frame.with_columns(pl.col(k).cast(pl.Categorical(pl.Categories.random())) for k in texts)
        .group_by(
            *(k for k in keys if k not in texts),
            group_by,
            *(pl.col(k).to_physical().alias(c) for k, c in zip(texts, coded, strict=True)),
        )
        .agg(pl.col(texts).first(), **sums)
        .select(*keys, group_by, *sums, *(coded if codes else ()))  # the group_by's order
        .with_columns(pl.col(texts).cast(pl.String))
    )


def code_columns(keys: Sequence[str], schema: pl.Schema) -> list[str]:
    """The columns :func:`coded_group_sums` adds: one per text key (a String column of
    ``schema``), its code in the categorical the rows were grouped by (null for a null key):
    the same code for the same text, another for another."""
    return [CODE + k for k in keys if schema[k] == pl.String]


def exact_sum(value: pl.Expr) -> pl.Expr:
    """The sum of ``value`` (scores, labels: in [-1, 1]) the same to the last bit whatever
    order the rows come in, on either engine: each value a whole number of 2^-96 (exact from
    2^-44 up; below, what lies under 2^-96 is dropped), added as integers, rounded once.
    Values outside [-1, 1] and NaN add 0: callers count them apart (``n_out_of_range``)."""
    inside = pl.when(value.abs() <= 1.0).then(value).otherwise(0.0)
    return (inside * _SCALE).cast(pl.Int128).sum().cast(pl.Float64) / _SCALE


def _order_sums(cf: pl.Expr | None, equivalence_threshold: float) -> dict[str, pl.Expr]:
    """The position sums of pairs judged in both orders (counterfactual ones, ``cf``)."""
    ab, ba = pl.col("score_ab").cast(pl.Float64).abs(), pl.col("score_ba").cast(pl.Float64).abs()
    both = ab.is_not_null() & ba.is_not_null()
    if cf is not None:
        both &= cf
    flip = (ab <= equivalence_threshold) != (ba <= equivalence_threshold)
    return {
        "n_both_orders": both.sum().cast(pl.Int64),
        "position_gap_sum": exact_sum((ab - ba).abs().filter(both)),
        "n_position_flips": flip.filter(both).sum().cast(pl.Int64),
    }


def _control_sums(cf: pl.Expr, error: pl.Expr) -> dict[str, pl.Expr]:
    control = pl.col(_CONTROL)
    return {
        "n_control": (~cf).sum().cast(pl.Int64),
        "n_control_scored": control.is_not_null().sum().cast(pl.Int64),
        "n_control_errors": (error & ~cf).sum().cast(pl.Int64),
        "control_score_sum": exact_sum(control),
    }


def error_sums(frame: pl.LazyFrame, keys: Sequence[str]) -> pl.LazyFrame:
    """One row per (``keys``, kind of error) with its count ``n``: the error text with numbers
    shown as N (so "gave up after 7 attempts" and "... 3 attempts" are one kind), cut to 120
    characters. Counterfactual pairs only (control pairs are left out, as in
    :func:`group_sums`). Empty without an ``error`` column."""
    schema = frame.collect_schema()
    if "error" not in schema:
        return pl.LazyFrame(
            schema={**{k: schema[k] for k in keys}, ERROR_KIND: pl.String, "n": pl.Int64}
        )
    kind = (
        pl.col(_ERROR)
        .cast(pl.String)
        .str.replace_all(r"\d+(\.\d+)?", "N")
        .str.slice(0, ERROR_KIND_LENGTH)
        .alias(ERROR_KIND)
    )
    counterfactual = pl.col("error").is_not_null()
    if PAIR_KIND in schema:
        counterfactual &= ~pl.col(PAIR_KIND).cast(pl.String).eq_missing("control")
    # Counted by error text first, so each distinct text is read as a kind once, not each row
    # (the pattern's replacement was most of the time when many rows share a few texts).
    texts = frame.filter(counterfactual).group_by(*keys, pl.col("error").alias(_ERROR))
    return texts.agg(n=pl.len()).group_by([*keys, kind]).agg(n=pl.col("n").sum().cast(pl.Int64))


def merge_sums(parts: Iterable[pl.LazyFrame | pl.DataFrame], keys: Sequence[str]) -> pl.LazyFrame:
    """Add up per-block outputs of :func:`group_sums` (keys: the slice keys and the group
    column) or of :func:`error_sums` (keys: the slice keys and ``error_kind``)."""
    frames = [p.lazy() for p in parts]
    if not frames:
        raise OptionError("merge_sums needs at least one frame of sums.")
    stacked = pl.concat(frames, how="vertical_relaxed")
    values = [c for c in stacked.collect_schema().names() if c not in keys]
    return stacked.group_by(list(keys)).agg(pl.col(values).sum())


def on_whole_groups(
    sums: pl.LazyFrame,
    keys: Sequence[str],
    group_by: str,
    columns: Sequence[str],
    *,
    kept: pl.Expr | None = None,
) -> pl.LazyFrame:
    """Per-group sums whose ``columns`` are their totals over the whole group (and metric), on
    every slice row of the group that is ``kept`` (every row by default): a control pair
    measures the noise of its group, not of a slice. Without slice keys besides the metric,
    the sums as they are."""
    joint = [k for k in keys if k == "metric"]
    if [k for k in keys if k not in joint] == []:
        return sums
    # Added up in a fixed order of the slice rows: the same sums to the last bit however the
    # rows arrived (an unordered group_by hands them over in any order).
    totals = (
        sums.sort([*keys, group_by], nulls_last=True)
        .group_by([*joint, group_by], maintain_order=True)
        .agg(pl.col(columns).sum())
    )
    return (
        (sums if kept is None else sums.filter(kept))
        .drop(columns)
        .join(totals, on=[*joint, group_by], how="left", nulls_equal=True)
        .with_columns(pl.col(columns).fill_null(0))
    )
