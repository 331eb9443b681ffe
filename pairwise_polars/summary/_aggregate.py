"""Aggregation of scored pairs into rates and means per metric and slice, with intervals.

Two stages: per-(metric, slice, group) sums (:mod:`pairwise_polars.summary._sums`, mergeable
across blocks of rows), then :func:`combine` from those sums to the summary columns.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from pairwise_polars._errors import ColumnError, Fix, OptionError, ScoreError
from pairwise_polars.io._frames import DataLike, to_lazy
from pairwise_polars.labels import LABEL, RAW_LABEL, attach_labels
from pairwise_polars.summary._attribute_effect import (
    EFFECT_COLUMNS,
    attribute_effect,
    is_audited,
    plain_rows,
)
from pairwise_polars.summary._duplicates import refuse_duplicates
from pairwise_polars.summary._excess import with_excess
from pairwise_polars.summary._intervals import with_intervals
from pairwise_polars.summary._judge_figures import JUDGE_COLUMNS, judge_figures
from pairwise_polars.summary._judge_rows import combined_only, has_members
from pairwise_polars.summary._power import MIN_DETECTABLE, with_min_detectable_effect
from pairwise_polars.summary._ppi import (
    PPI_COLUMNS,
    label_sums,
    with_ppi,
)
from pairwise_polars.summary._slice_sums import ENGINE, per_slice
from pairwise_polars.summary._stability_check import STABILITY
from pairwise_polars.summary._sums import (
    ERROR_KIND,
    check_score_type,
    coded_group_sums,
    error_sums,
)
from pairwise_polars.summary._thresholds import check_score_thresholds

POSITION_COLUMNS = ("mean_position_gap", "position_flip_rate")
"""Summary columns of position bias: values only where both orders were judged."""
NOISE_COLUMNS = (
    "n_control",
    "n_control_errors",
    "control_mean_divergence",
    "excess_divergence",
    "excess_divergence_low",
    "excess_divergence_high",
)
"""Summary columns of the noise floor: values only where a slice has control pairs."""
SUMMARY_COLUMNS = (
    "n_pairs",
    "n_scored",
    "n_errors",
    "n_groups",
    "equivalence_rate",
    "equivalence_rate_low",
    "equivalence_rate_high",
    "divergence_rate",
    "divergence_rate_low",
    "divergence_rate_high",
    "mean_divergence",
    "mean_divergence_low",
    "mean_divergence_high",
    *POSITION_COLUMNS,
    *NOISE_COLUMNS,
    MIN_DETECTABLE,
    "top_error",
)
SCOPE = "scope"
"""Summary column: ``"overall"`` for a metric's row over all pairs, ``"slice"`` for a slice row."""


def slice_columns(summary: pl.DataFrame) -> list[str]:
    """The slice columns of a summary from :func:`summarize` or :func:`aggregate`."""
    known = {
        "metric", SCOPE, *SUMMARY_COLUMNS, *PPI_COLUMNS, *EFFECT_COLUMNS, *JUDGE_COLUMNS, STABILITY
    }  # fmt: skip
    return [c for c in summary.columns if c not in known]


def default_slices(schema: pl.Schema | Sequence[str]) -> list[str]:
    """The slices when none are named: ``dimension`` when the frame has it, else none (overall
    only: rows without a dimension column, e.g. for ``pairwise-bias``)."""
    return ["dimension"] if "dimension" in schema else []


def aggregate(
    scored: DataLike,
    by: Sequence[str] | None = None,
    *,
    equivalence_threshold: float = 0.0,
    divergence_threshold: float = 0.5,
    confidence: float = 0.95,
    group_by: str = "group_id",
    labels: DataLike | None = None,
) -> pl.DataFrame:
    """Summarise scored pairs: one row per metric and slice of ``by`` (``by=()``: overall;
    by default ``dimension`` when the frame has that column, else overall).

    ``equivalence_rate`` is the share of scored pairs with ``score <= equivalence_threshold``,
    ``divergence_rate`` the share with ``score >= divergence_threshold``, ``mean_divergence``
    the mean score. All three come with ``_low`` / ``_high`` bounds at ``confidence`` that treat
    the pairs of one group as correlated (they share a reference), on the effective sample size
    the cluster-robust variance gives: Korn-Graubard (Clopper-Pearson with the design's degrees
    of freedom; Jeffreys on the worst-case effective size where that applies) for the rates,
    Wilson with a Student t quantile for the mean (see
    :mod:`pairwise_polars.summary._intervals`); with one group the bounds are null. Rates and
    means are over scored pairs only; a slice with none gets nulls, never 0. With both orders
    judged (``score_ab`` / ``score_ba``), ``mean_position_gap`` is the mean ``|score_ab -
    score_ba|`` and ``position_flip_rate`` the share of those pairs that are equivalent in one
    order and not in the other (null otherwise). ``top_error`` is the commonest kind of error.
    Both score thresholds must be numbers from 0 to 1 (else :class:`OptionError`); one that
    makes a rate vacuous (``equivalence_threshold=1``, ``divergence_threshold=0``) warns
    (:class:`~pairwise_polars.ThresholdWarning`). A frame with the same judgement twice (the same
    ``pair_id`` and ``metric``, and ``view`` where the frame has it) raises :class:`ScoreError`
    naming the duplicates: each copy would narrow the intervals as if it were new evidence.

    Every figure above counts counterfactual pairs only: control pairs (``pair_kind ==
    "control"``, two answers to the same input) never change them. They give ``n_control``
    (control pairs), ``n_control_errors`` (those whose judgement failed: they count against
    ``max_error_rate`` in :func:`gate`), ``control_mean_divergence`` (their mean score: the
    noise floor) and ``excess_divergence``, ``mean_divergence`` minus
    ``control_mean_divergence``: the divergence beyond what re-asking the same question gives,
    with ``_low`` / ``_high`` bounds over groups (see :mod:`pairwise_polars.summary._excess`).
    The figures are null when a slice has no scored control pair. Whatever ``by`` is, a
    slice's control pairs are those of the groups its counterfactual pairs belong to (a control
    pair measures its group's noise); control pairs never form slices of their own.

    ``min_detectable_effect`` is the smallest excess divergence the slice would detect with
    80% power at ``confidence`` (without controls: the smallest distance from a threshold its
    mean divergence would detect), from its own between-group spread: a pass on a slice whose
    figure is larger than the threshold says little (see :func:`~pairwise_polars.plan`).
    ``labels`` (a frame or a file of human labels: ``pair_id`` or ``group_id``, ``id_a``,
    ``id_b``; ``metric``; ``label`` on the metric's rubric; see
    :func:`~pairwise_polars.sample_for_labelling`) adds the prediction-powered estimates
    (PPI++): ``equivalence_rate_ppi``, ``divergence_rate_ppi``, ``mean_divergence_ppi`` and
    ``excess_divergence_ppi``, each with ``_ppi_low`` / ``_ppi_high`` bounds, and
    ``n_labelled`` (pairs both labelled and scored). They estimate what people would say of
    every pair, correcting the judge's bias with the labels, whatever that bias is (see
    :mod:`pairwise_polars.summary._ppi`). A scored frame from ``score(..., labels=...)``
    carries its labels (``label``, ``raw_label``) and needs no ``labels`` here.

    A frame scored with ``audit="mask"`` (a ``view`` column, ``"plain"`` / ``"masked"``) is
    summarised from its plain rows, and adds ``judge_attribute_effect`` (the mean of plain
    minus masked divergence over pairs judged both ways: the judge's reaction to the attribute
    itself) with ``_low`` / ``_high`` bounds over groups, ``n_judge_attribute`` (those pairs)
    and ``n_not_masked`` (pairs with no attribute term to mask); see
    :mod:`pairwise_polars.summary._attribute_effect`.

    A frame judged by a panel or with repeats (``score(..., judge=[...], repeats=k)``: a
    ``repeat`` column) is summarised from its combined rows only (``repeat`` null), and the
    ``JUDGE_COLUMNS`` follow: ``judge_agreement`` (Krippendorff's alpha between the panel's
    judges at the rubric's ordinal level, which for a binary rubric is the nominal one; scores
    with more than 100 distinct values are read at the interval level) with ``_low`` /
    ``_high`` bounds from a bootstrap over groups, ``judge_effective_n`` (how many
    independent judges the panel is worth: k / (1 + (k - 1) alpha)) and ``judge_repeat_sd``
    (the pooled spread of one judge's repeated scores of the same request); see
    :mod:`pairwise_polars.summary._judge_figures`.

    >>> import polars as pl
    >>> scored = pl.DataFrame({"metric": "pairwise-bias", "group_id": [1, 1, 2],
    ...     "dimension": "gender", "score": [0.0, 0.5, None], "error": [None, None, "timeout"]})
    >>> aggregate(scored).select("dimension", "n_pairs", "n_scored", "equivalence_rate").rows()
    [('gender', 3, 2, 0.5)]
    """
    frame, members = checked_rows(
        scored, labels, confidence, (equivalence_threshold, divergence_threshold)
    )
    return aggregate_checked(
        frame,
        by,
        equivalence_threshold=equivalence_threshold,
        divergence_threshold=divergence_threshold,
        confidence=confidence,
        group_by=group_by,
        members=members,
    )


def checked_rows(
    scored: DataLike, labels: DataLike | None, confidence: float, thresholds: tuple[float, float]
) -> tuple[pl.LazyFrame, pl.LazyFrame | None]:
    """The scored rows :func:`aggregate` and :func:`summarize` read: the combined rows of
    :func:`split_members` (and its members), refused as :func:`check_scored` refuses them
    (``thresholds``: the equivalence and divergence thresholds), ``labels`` attached."""
    frame, members = split_members(to_lazy(scored)[0])
    check_scored(frame, confidence, *thresholds)
    if labels is not None:
        frame = attach_labels(frame, labels)
    return frame, members


def split_members(frame: pl.LazyFrame) -> tuple[pl.LazyFrame, pl.LazyFrame | None]:
    """The combined rows every figure reads (of a panel or repeats) and the member rows the
    judge's own figures read (``None`` when the frame has no members)."""
    members = frame if has_members(frame.collect_schema()) else None
    return combined_only(frame), members


def check_scored(
    frame: pl.LazyFrame,
    confidence: float,
    equivalence_threshold: float,
    divergence_threshold: float,
) -> None:
    """What :func:`aggregate` refuses before it sums anything: a confidence outside (0, 1),
    score thresholds that are not numbers in [0, 1] (warning on vacuous ones), a ``score`` that
    is not numbers, and duplicate judgements."""
    if not 0 < confidence < 1:
        raise OptionError(f"confidence must be between 0 and 1, got {confidence}.")
    check_score_thresholds(equivalence_threshold, divergence_threshold)
    check_score_type(frame.collect_schema())
    refuse_duplicates(frame)


def aggregate_checked(
    frame: pl.LazyFrame,
    by: Sequence[str] | None,
    *,
    equivalence_threshold: float,
    divergence_threshold: float,
    confidence: float,
    group_by: str,
    members: pl.LazyFrame | None = None,
) -> pl.DataFrame:
    """:func:`aggregate` of a frame :func:`check_scored` has passed (labels attached; the
    combined rows of :func:`split_members`, whose ``members`` give the judge's figures)."""
    schema = frame.collect_schema()
    by = default_slices(schema) if by is None else list(by)
    needed = ["metric", "score", group_by, *by]
    missing = [c for c in needed if c not in schema]
    if missing:
        detail = (
            f"aggregate needs columns {missing}, which the scored frame lacks. It has columns: "
            f"{list(schema.names())}."
        )
        raise ColumnError(
            f"{detail} Pass by=[...] with existing slice columns and group_by=<the group "
            "column> if yours differ.",
            detail=detail,
            fixes=[Fix("summary_columns", {"by": "...", "group_by": "<the group column>"})],
        )
    keys = ["metric", *by]
    audited, scored_rows = is_audited(schema), frame
    frame = plain_rows(frame)  # a masked audit's rows give the judge's figures only
    thresholds = (equivalence_threshold, divergence_threshold)
    # With the keys' codes, which number the slices in ``per_slice``
    sums = coded_group_sums(frame, keys, group_by, thresholds)
    if {LABEL, RAW_LABEL} <= set(schema.names()):
        labelled = label_sums(
            frame,
            keys,
            group_by,
            equivalence_threshold=equivalence_threshold,
            divergence_threshold=divergence_threshold,
        )
        sums = sums.join(labelled, on=[*keys, group_by], how="left", nulls_equal=True)
    errors = error_sums(frame, keys)
    summary = _combine(sums, keys, confidence=confidence, errors=errors, one_row_per_group=True)
    if audited:
        effect = attribute_effect(scored_rows, keys, group_by, confidence=confidence)
        summary = summary.join(effect, on=keys, how="left", nulls_equal=True)
    if members is not None:  # a panel's agreement and the repeats' spread, in the plain view
        judged = judge_figures(plain_rows(members), keys, group_by, confidence)
        summary = summary.join(judged, on=keys, how="left", nulls_equal=True)
    return summary


def combine(
    sums: pl.LazyFrame | pl.DataFrame,
    keys: Sequence[str],
    *,
    confidence: float = 0.95,
    errors: pl.LazyFrame | pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Stage two of :func:`aggregate`: the summary (``keys`` then ``SUMMARY_COLUMNS``, sorted
    by the keys) from per-group sums (:func:`~pairwise_polars.summary._sums.group_sums` with
    the same ``keys``, possibly merged from blocks) and, for ``top_error``, the error counts of
    :func:`~pairwise_polars.summary._sums.error_sums`. With the sums of
    :func:`~pairwise_polars.summary._ppi.label_sums` beside them, the ``PPI_COLUMNS`` follow.
    Raises :class:`ScoreError` when a score lies outside [0, 1]."""
    return _combine(sums, keys, confidence=confidence, errors=errors, one_row_per_group=False)


def _combine(
    sums: pl.LazyFrame | pl.DataFrame,
    keys: Sequence[str],
    *,
    confidence: float,
    errors: pl.LazyFrame | pl.DataFrame | None,
    one_row_per_group: bool,
) -> pl.DataFrame:
    """:func:`combine`, told whether the sums hold one row per slice and group (as
    ``group_sums`` gives them: nothing to check before they are sorted)."""
    keys = list(keys)
    # Collected once (one row per group, not per pair): the range check and the combine below
    # read the same sums, which a lazy frame would compute twice from the scored rows.
    collected = _in_range(sums.lazy().collect())
    labelled = "n_labelled" in collected.columns
    summary = with_intervals(
        per_slice(collected, keys, labelled, one_row_per_group=one_row_per_group), confidence
    )
    if labelled:
        summary = with_ppi(summary, confidence)
    summary = with_excess(with_min_detectable_effect(summary, confidence), confidence)
    both = pl.col("n_both_orders")
    summary = summary.with_columns(
        mean_position_gap=pl.when(both > 0).then(pl.col("position_gap_sum") / both),
        position_flip_rate=pl.when(both > 0).then(pl.col("n_position_flips") / both),
    )
    if errors is None:  # no error counts given: no commonest error to name
        summary = summary.with_columns(top_error=pl.lit(None, pl.String))
    else:
        summary = summary.join(_top_errors(errors, keys), on=keys, how="left", nulls_equal=True)
    return _summary_columns(summary, keys, labelled)


def _in_range(collected: pl.DataFrame) -> pl.DataFrame:
    """The collected per-group sums, refused when a score lies outside [0, 1]."""
    out_of_range = collected["n_out_of_range"].sum()
    if out_of_range:
        raise ScoreError(
            f"{out_of_range} scores lie outside [0, 1] (or are NaN); aggregate expects the "
            "normalised `score` column (raw / rubric max), not `raw_score`."
        )
    return collected


def _summary_columns(summary: pl.DataFrame, keys: list[str], labelled: bool) -> pl.DataFrame:
    """The summary's columns in their order and types (``keys``, ``SUMMARY_COLUMNS``, then the
    ``PPI_COLUMNS`` when labelled), sorted by the keys."""
    counts = ("n_pairs", "n_scored", "n_errors", "n_groups", "n_control", "n_control_errors")
    return summary.select(
        *keys,
        *[
            pl.col(c).cast(pl.Int64 if c in counts else pl.Float64)
            for c in SUMMARY_COLUMNS
            if c != "top_error"
        ],
        pl.col("top_error").cast(pl.String),
        *[
            pl.col(c).cast(pl.Int64 if c == "n_labelled" else pl.Float64)
            for c in (PPI_COLUMNS if labelled else ())
        ],
    ).sort(keys, nulls_last=True)


def _top_errors(errors: pl.LazyFrame | pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """The commonest kind of error per slice (ties: the first in text order)."""
    return (
        errors.lazy()
        .sort("n", ERROR_KIND, descending=[True, False], nulls_last=True)
        .group_by(keys, maintain_order=True)
        .agg(top_error=pl.col(ERROR_KIND).first())
        .collect(engine=ENGINE)
    )
