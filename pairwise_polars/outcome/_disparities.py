"""``disparities``: who is disadvantaged, by how much, per attribute, with intervals over groups."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import polars as pl

from pairwise_polars._errors import OptionError
from pairwise_polars.io import DataLike
from pairwise_polars.io._frames import to_lazy
from pairwise_polars.judges import Judge
from pairwise_polars.outcome._disparity_pairs import DEFAULT_BY, pair_measures
from pairwise_polars.pairing import PAIR_KIND, Columns, Strategy
from pairwise_polars.scoring._spec import as_judge
from pairwise_polars.summary._disparity_ppi import COLUMNS as DISPARITY_PPI_COLUMNS
from pairwise_polars.summary._disparity_sums import (
    FIGURES,
    combine_disparities,
    disparity_sums,
    holds_zero,
)
from pairwise_polars.summary._interactions import INTERACTION_COLUMNS, with_interactions
from pairwise_polars.summary._judge_rows import combined_only

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from pairwise_polars.pairing._columns import ColumnNames

DISPARITY_COLUMNS = (
    PAIR_KIND,
    "reference",
    "n_groups",
    "n_pairs",
    "decision_rate",
    "reference_decision_rate",
    "decision_difference",
    "decision_difference_low",
    "decision_difference_high",
    "impact_ratio",
    "impact_ratio_low",
    "impact_ratio_high",
    "amount_relative",
    "amount_relative_low",
    "amount_relative_high",
    "refusal_difference",
    "refusal_difference_low",
    "refusal_difference_high",
    "mean_favour",
    "mean_favour_low",
    "mean_favour_high",
    *(f"n_groups_{name}" for name in FIGURES),
    *INTERACTION_COLUMNS,
    "control_ok",
)
"""The columns of :func:`disparities` after the slice columns of ``by``."""


def disparities(
    data: DataLike,
    by: Sequence[str] = DEFAULT_BY,
    reference: str | None = None,
    *,
    judge: Judge | str | None = None,
    labels: DataLike | None = None,
    strategy: Strategy = "group",
    confidence: float = 0.95,
    columns: Columns | None = None,
    **names: Unpack[ColumnNames],
) -> pl.DataFrame:
    """Who is disadvantaged: per slice of ``by``, each attribute against the group's reference
    (group strategy) or ``pole_b`` against ``pole_a`` (contrastive), computed within each group
    and then over groups, so re-asking noise (no preferred side) cancels and bias accumulates.

    ``data`` is response rows with outcome columns (from :func:`~pairwise_polars.outcome`),
    response rows without them (read with ``judge``; the heuristic by default), or a scored frame
    (outcomes per side as ``decision_a`` / ``decision_b`` ..., else read from its texts; the
    sign of ``pairwise-favour`` when scored). By default the slices are ``dimension`` and
    ``attribute``, those the data has. ``reference="male"`` compares every attribute with
    the row whose attribute is ``"male"`` in each group instead (controls are then left out).

    Per row: ``n_groups``; ``decision_rate`` and ``reference_decision_rate`` (over the pairs
    where both decided), ``decision_difference`` (their difference) and ``impact_ratio`` (their
    ratio; the four-fifths rule asks >= 0.8); ``amount_relative`` (the mean within-group
    relative difference of the offered amount, ``(b - a) / |a|``: -0.081 is 8.1% less);
    ``refusal_difference`` (the share refused more); ``mean_favour`` (minus the
    ``pairwise-favour`` score: negative when the attribute is treated worse). Each has
    ``_low`` / ``_high`` bounds at ``confidence`` over groups (Student t; a log-scale
    delta-method interval for the ratio), null with one group, and ``n_groups_<measure>`` says
    how many groups measured it. Rows with ``pair_kind == "control"`` give the same figures for
    the reference against a second answer to its own input; ``control_ok`` says whether every
    control interval of the slice holds 0. For a crossed dimension (``gender×race``, cells such
    as ``female|Black``: see :func:`~pairwise_polars.counterfactuals`), a cell off both
    references has ``<figure>_interaction`` (with bounds): its effect minus the sum of its two
    main effects (``female|White`` and ``male|Black`` against ``male|White``), within groups.

    ``labels`` (a frame or file of people's reading of the outcomes: ``pair_id`` or
    ``group_id``, ``id_a``, ``id_b``; ``metric`` = ``decision``, ``amount`` or ``refused``;
    ``label_a`` / ``label_b``, each side's outcome) adds ``n_labelled`` and the corrected
    (prediction-powered) ``decision_difference_ppi``, ``amount_relative_ppi`` and
    ``refusal_difference_ppi``, each with ``_ppi_low`` / ``_ppi_high`` bounds: what people
    would read, the judge's bias corrected (see :mod:`pairwise_polars.summary._disparity_ppi`).

    >>> rows = pl.DataFrame({"group_id": [1, 1, 2, 2, 3, 3], "dimension": "gender",
    ...     "role": ["reference", "variant"] * 3, "attribute": ["male", "female"] * 3,
    ...     "input": "Offer a salary.", "output": ["We offer $90,000.", "We offer $80,000.",
    ...     "We offer $70,000.", "We offer $63,000.", "We offer $50,000.", "We offer $45,000."]})
    >>> d = disparities(rows)
    >>> d.select("attribute", "reference", "n_groups", pl.col("amount_relative").round(3)).row(0)
    ('female', 'male', 3, -0.104)
    """
    if not 0 < confidence < 1:
        raise OptionError(f"confidence must be between 0 and 1, got {confidence}.")
    cols = Columns.of(columns, names, caller="disparities")
    judge = None if judge is None else as_judge(judge)
    frame = combined_only(to_lazy(data)[0])  # a panel's member rows would count a pair twice
    pairs, keys = pair_measures(
        frame,
        list(by),
        reference=reference,
        judge=judge,
        strategy=strategy,
        columns=cols,
        labels=labels,
    )
    sums = disparity_sums(pairs, keys, cols.group_by)
    sums = sums.collect().lazy()  # read once: the figures and the interactions share it
    figures = combine_disparities(sums, keys, cols.group_by, confidence)
    figures = with_interactions(figures, sums, keys, cols.group_by, confidence)
    extra = DISPARITY_PPI_COLUMNS if labels is not None else ()
    return with_control_ok(figures, keys).select(*keys, *DISPARITY_COLUMNS, *extra)


def with_control_ok(figures: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """``control_ok`` on every row: whether each control interval of its slice (the keys but
    ``attribute``) holds 0; null when the slice has no control figure with an interval."""
    slice_keys = [k for k in keys if k != "attribute"]
    checks = [holds_zero(column) for column in FIGURES.values()]
    measured = pl.any_horizontal(*(c.is_not_null() for c in checks))
    ok = pl.when(measured).then(pl.all_horizontal(*(c.fill_null(True) for c in checks)))
    controls = figures.filter(pl.col(PAIR_KIND) == "control").with_columns(ok.alias("control_ok"))
    if not slice_keys:
        value = controls["control_ok"].drop_nulls()
        verdict = None if value.is_empty() else bool(value.all())
        return figures.with_columns(control_ok=pl.lit(verdict, pl.Boolean))
    per_slice = controls.group_by(slice_keys).agg(
        pl.when(pl.col("control_ok").is_not_null().any()).then(pl.col("control_ok").all())
    )
    return figures.join(per_slice, on=slice_keys, how="left", nulls_equal=True)
