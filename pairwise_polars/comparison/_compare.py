"""compare: two scored runs of the same prompts, slice by slice and figure by figure, paired
over the groups both runs measured."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from pairwise_polars._errors import OptionError, ScoreError
from pairwise_polars.comparison._disparities import (
    comparable,
    disparity_changes,
    unmatched_pairs,
)
from pairwise_polars.comparison._inputs import scan_run
from pairwise_polars.comparison._match import Match, Matched, matching
from pairwise_polars.io import DataLike
from pairwise_polars.summary import group_sums
from pairwise_polars.summary._adjust import Adjust, adjusted, check_adjust
from pairwise_polars.summary._disparity_power import DISPARITIES
from pairwise_polars.summary._disparity_sums import FIGURES as DISPARITY_MEASURES
from pairwise_polars.summary._excess import attach_controls
from pairwise_polars.summary._paired import FIGURES, RUNS, WORSE, paired_figures, with_inference

DISPARITY_FIGURES = tuple(DISPARITY_MEASURES.values())
"""The disparities compared where both runs carry outcomes (or scored ``pairwise-favour``)."""
CHANGES = ("worse", "better", "no evidence")
"""The values of a comparison's ``changed`` column."""
_CASTS: dict[str, type[pl.Float64] | None] = {
    "figure": None,
    "before": pl.Float64,
    "after": pl.Float64,
    "delta": pl.Float64,
    "delta_low": pl.Float64,
    "delta_high": pl.Float64,
    "p_value": pl.Float64,
    "p_adjusted": pl.Float64,
    "changed": None,
    "n_groups": None,
    "n_matched": None,
    "n_unmatched_before": None,
    "n_unmatched_after": None,
    "delta_se": pl.Float64,
    "delta_df": None,
}
"""Each column of a comparison after the metric and the slices, and the type it is cast to
(None: as it is)."""
COMPARISON_COLUMNS = tuple(_CASTS)
"""The columns of :func:`compare` after the metric and the slice columns."""


def compare(
    before: DataLike,
    after: DataLike,
    by: Sequence[str] = ("dimension",),
    adjust: Adjust = "holm",
    *,
    match: Match = "auto",
    confidence: float = 0.95,
    equivalence_threshold: float = 0.0,
    divergence_threshold: float = 0.5,
    group_by: str = "group_id",
) -> pl.DataFrame:
    """Did the new run get worse? Each figure of :func:`~pairwise_polars.aggregate` per metric
    and slice of ``by``, before and after, with the change measured pair by pair.

    ``before`` and ``after`` are scored frames, scored files, a
    :func:`~pairwise_polars.score_parquet` destination or a manifest target's output folder,
    read lazily (only the key, slice and score columns, reduced to per-group sums). Pairs are
    matched by ``pair_id`` when both runs pair the same rows, else by (``group_id``,
    ``attribute_a``, ``attribute_b``, ``metric``, and ``pair_kind``): ``match="pair_id"`` or
    ``"attributes"`` forces one. Figures use the matched pairs only, so ``delta`` is ``after -
    before`` exactly; pairs in one run only are counted per slice in ``n_unmatched_before`` /
    ``n_unmatched_after``, never silently dropped.

    One row per (metric, slice, figure): ``equivalence_rate``, ``divergence_rate``,
    ``mean_divergence`` and, where either run has control pairs, ``excess_divergence``;
    ``before``, ``after``, ``delta`` with ``delta_low`` / ``delta_high``, a paired
    cluster-robust interval at ``confidence`` over the ``n_groups`` groups measured in both
    (see :mod:`pairwise_polars.summary._paired`; ``delta_se``, ``delta_df`` its standard error
    and degrees of freedom), ``p_value`` (two-sided, no change) and ``p_adjusted`` over every
    row under ``adjust`` (``"holm"``: the chance of any false alarm across all slices and
    figures is at most ``1 - confidence``; ``"bh"``: the false discovery rate; None: as is).
    ``changed`` is ``"worse"`` or ``"better"`` when ``p_adjusted < 1 - confidence`` (worse:
    less equivalence, more divergence), else ``"no evidence"`` (fewer than two groups too).
    Where both runs carry outcomes or scored ``pairwise-favour``, rows with ``metric ==
    "disparities"`` and ``attribute`` compare :func:`~pairwise_polars.disparities` too.

    >>> import polars as pl
    >>> old = pl.DataFrame({"pair_id": [1, 2, 3, 4], "group_id": [1, 2, 3, 4],
    ...     "dimension": "gender", "metric": "pairwise-bias", "score": [0.0, 0.0, 0.25, 0.0]})
    >>> new = old.with_columns(score=pl.Series([0.5, 0.75, 0.75, 0.5]))
    >>> compare(old, new).filter(pl.col("figure") == "mean_divergence").select(
    ...     "before", "after", "delta", "changed").rows()
    [(0.0625, 0.625, 0.5625, 'worse')]
    """
    if not 0 < confidence < 1:
        raise OptionError(f"confidence must be between 0 and 1, got {confidence}.")
    adjust = check_adjust(adjust)
    keys = ["metric", *by]
    needed = [*keys, group_by, "score"]
    runs = (scan_run(before), scan_run(after))
    matched = matching(*runs, match=match, group_by=group_by, needed=needed)
    thresholds = {"equivalence_threshold": equivalence_threshold}
    thresholds["divergence_threshold"] = divergence_threshold
    joined, unmatched = _paired_sums(matched, keys, group_by, thresholds)
    joined = _in_range(joined.collect()).lazy()  # once: each figure would read again
    figures = with_inference(paired_figures(joined, keys), confidence)
    pairs = (pl.col("n_pairs_after") + pl.col("n_control_after")).sum().cast(pl.Int64)
    counts = pl.collect_all([joined.group_by(keys).agg(n_matched=pairs), *unmatched])
    changes = _disparities(runs, matched, by, group_by, confidence)
    return _finish(figures, counts, keys, adjust, confidence, changes)


def _in_range(joined: pl.DataFrame) -> pl.DataFrame:
    """The paired per-group sums, refused when a matched score of either run lies outside
    [0, 1] (or is NaN), as :func:`~pairwise_polars.aggregate` refuses it."""
    for run in RUNS:
        bad = joined[f"n_out_of_range_{run}"].sum()
        if bad:
            raise ScoreError(
                f"{bad} matched scores of the {run} run lie outside [0, 1] (or are NaN); "
                "compare expects the normalised `score` column (raw / rubric max), not "
                "`raw_score`."
            )
    return joined


def _disparities(
    runs: tuple[pl.LazyFrame, pl.LazyFrame],
    matched: Matched,
    by: Sequence[str],
    group_by: str,
    confidence: float,
) -> pl.DataFrame | None:
    """The disparities' changes over the matched pairs, where both runs carry outcomes or
    scored ``pairwise-favour`` (else None)."""
    outcomes, favour = comparable(*runs)
    if not (outcomes or favour):
        return None
    pair_key = [c for c in matched.key if c != "metric"]
    before, after = (
        run.join(other.select(pair_key).unique(), on=pair_key, how="semi", nulls_equal=True)
        for run, other in (runs, runs[::-1])
    )
    changes = disparity_changes(
        before,
        after,
        by=by,
        pair_key=pair_key,
        group_by=group_by,
        confidence=confidence,
        outcomes=outcomes,
    )
    for (run, other), name in zip((runs, runs[::-1]), RUNS, strict=True):
        alone = unmatched_pairs(run, other, by, pair_key).rename({"n": f"n_unmatched_{name}"})
        changes = changes.join(alone, on=[*by, "attribute"], how="left", nulls_equal=True)
    return changes.with_columns(metric=pl.lit(DISPARITIES))


def _paired_sums(
    matched: Matched, keys: list[str], group_by: str, options: dict[str, float]
) -> tuple[pl.LazyFrame, list[pl.LazyFrame]]:
    """Both runs' per-group sums of their matched pairs side by side (``_before`` /
    ``_after``, zero where a group has no pair in a run), and each run's unmatched counts."""
    pairs = {"before": matched.before, "after": matched.after}
    other = {"before": matched.after, "after": matched.before}
    sums, unmatched = [], []
    for run, frame in pairs.items():
        keyed = other[run].select(matched.key)
        common = frame.join(keyed, on=matched.key, how="semi", nulls_equal=True)
        alone = frame.join(keyed, on=matched.key, how="anti", nulls_equal=True)
        unmatched.append(
            alone.group_by(keys).agg(pl.len().cast(pl.Int64).alias(f"n_unmatched_{run}"))
        )
        # A control pair is its group's noise: every slice of the group's pairs draws on it.
        run_sums = attach_controls(group_sums(common, keys, group_by, **options), keys, group_by)
        values = [c for c in run_sums.collect_schema().names() if c not in (*keys, group_by)]
        sums.append(run_sums.rename({c: f"{c}_{run}" for c in values}))
    joined = sums[0].join(
        sums[1], on=[*keys, group_by], how="full", coalesce=True, nulls_equal=True
    )
    joined = joined.with_columns(pl.all().exclude(*keys, group_by).fill_null(0))
    # Sorted by every column: float sums over groups come out the same to the last bit
    # whatever order the rows, the files or the match arrived in.
    return joined.sort(joined.collect_schema().names(), nulls_last=True), unmatched


def _finish(
    figures: pl.DataFrame,
    counts: list[pl.DataFrame],
    keys: list[str],
    adjust: Adjust,
    confidence: float,
    changes: pl.DataFrame | None = None,
) -> pl.DataFrame:
    frame = figures
    for extra in counts:
        frame = frame.join(extra, on=keys, how="left", nulls_equal=True)
    # Slices with pairs in one run only: a row per figure, every figure null, counted.
    alone = pl.concat([c.select(keys) for c in counts[1:]]).unique()
    missing = alone.join(figures.select(keys).unique(), on=keys, how="anti", nulls_equal=True)
    if not missing.is_empty():
        rows = missing.join(pl.DataFrame({"figure": list(FIGURES)}), how="cross")
        for extra in counts[1:]:
            rows = rows.join(extra, on=keys, how="left", nulls_equal=True)
        frame = pl.concat([frame, rows], how="diagonal_relaxed")
    has_excess = pl.col("before").is_not_null() | pl.col("after").is_not_null()
    frame = frame.filter((pl.col("figure") != "excess_divergence") | has_excess)
    if changes is not None:  # in the family too: every slice and figure compared
        frame = pl.concat([frame, changes], how="diagonal_relaxed")
    alpha = 1 - confidence
    sign = pl.col("figure").replace_strict(WORSE, default=None, return_dtype=pl.Int64)
    # a disparity is worse when it moved away from parity, whichever side it favours
    direction = [pl.col("__direction")] if changes is not None else []
    worse = pl.coalesce(sign * pl.col("delta"), *direction)
    frame = frame.with_columns(p_adjusted=adjusted(frame["p_value"], adjust))
    frame = frame.with_columns(
        pl.col("n_groups", "n_matched", "n_unmatched_before", "n_unmatched_after")
        .fill_null(0)
        .cast(pl.Int64),
        changed=pl.when((pl.col("p_adjusted") < alpha) & (worse > 0))
        .then(pl.lit("worse"))
        .when((pl.col("p_adjusted") < alpha) & (worse < 0))
        .then(pl.lit("better"))
        .otherwise(pl.lit("no evidence")),
    )
    names = [*FIGURES, *DISPARITY_FIGURES]
    order = pl.col("figure").replace_strict({f: i for i, f in enumerate(names)})
    attribute = ["attribute"] if changes is not None else []
    return frame.sort([*keys, *attribute, order], nulls_last=True).select(
        *keys,
        "figure",
        *attribute,
        *[
            pl.col(c) if cast is None else pl.col(c).cast(cast)
            for c, cast in _CASTS.items()
            if c != "figure"
        ],
    )
