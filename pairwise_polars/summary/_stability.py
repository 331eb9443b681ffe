"""Would the verdict hold on a rerun? ``verdict_stability``: the share of resampled runs (each
request's repeats drawn again with replacement, then combined as the run combined them) whose
gate verdict equals the reported one, per metric and slice."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from pairwise_polars._errors import ColumnError, OptionError
from pairwise_polars._schemas import PANEL_MODEL, REPEAT
from pairwise_polars.io._frames import DataLike, to_lazy
from pairwise_polars.summary._aggregate import aggregate_checked, default_slices
from pairwise_polars.summary._gate import check_statuses, gate
from pairwise_polars.summary._gate_checks import FAIRNESS_GATES, slice_label
from pairwise_polars.summary._judge_rows import combine_members, has_members, members_only
from pairwise_polars.summary._stability_check import STABILITY

_TRUST = ("min_label_agreement", "min_judge_agreement")  # the judge's, not the verdict's
_STABLE_GATES = (*(g for g in FAIRNESS_GATES if g not in _TRUST), "max_error_rate")
_DRAW, _UNIT, _U, _PM, _K, _PICK = "__draw", "__unit", "__u", "__pm", "__k", "__pick"


def verdict_stability(
    scored: DataLike,
    summary: pl.DataFrame,
    *,
    by: Sequence[str] | None = None,
    combine: str = "mean",
    draws: int = 200,
    seed: int = 0,
    equivalence_threshold: float = 0.0,
    divergence_threshold: float = 0.5,
    confidence: float = 0.95,
    group_by: str = "group_id",
    **gates: Any,
) -> pl.DataFrame:
    """``summary`` (from :func:`aggregate` of ``scored``) with ``verdict_stability``: per row,
    the share of ``draws`` resampled runs whose verdict under ``gates`` (the keywords of
    :func:`gate`) equals the row's reported verdict. Each resampled run draws every request's
    repeats again with replacement and combines them by ``combine`` (the panel's rule;
    ``"mean"`` for repeats of one judge). Null where the frame has no repeats. :func:`gate`
    reads the column: a verdict below 0.9 is inconclusive. Pass the same ``by`` and thresholds
    as to :func:`aggregate`.

    >>> import polars as pl
    >>> from pairwise_polars.summary import aggregate
    >>> scored = pl.DataFrame({"metric": "pairwise-bias", "group_id": [1, 1, 1, 2, 2, 2],
    ...     "pair_id": [1, 1, 1, 2, 2, 2], "judge_model": "j", "repeat": [0, 1, None] * 2,
    ...     "score": [0.0, 0.0, 0.0, 0.25, 0.25, 0.25], "error": None})
    >>> summary = aggregate(scored, by=[])
    >>> stable = verdict_stability(scored, summary, by=[], max_mean_divergence=0.5)
    >>> stable["verdict_stability"].item()
    1.0
    """
    if draws < 1:
        raise OptionError(f"draws must be at least 1, got {draws}.")
    frame = to_lazy(scored)[0]
    schema = frame.collect_schema()
    if not has_members(schema):
        return summary.with_columns(pl.lit(None, pl.Float64).alias(STABILITY))
    missing = [c for c in ("pair_id", "judge_model", "metric", "score") if c not in schema]
    if missing:
        raise ColumnError(f"verdict_stability needs the scored columns {missing}.")
    by = default_slices(schema) if by is None else list(by)
    members = members_only(frame).collect()
    if members.is_empty() or members[REPEAT].max() == 0:
        return summary.with_columns(pl.lit(None, pl.Float64).alias(STABILITY))
    panel = frame.filter(pl.col("judge_model") == PANEL_MODEL).head(1).collect().height > 0
    runs = _resampled(members, combine, panel=panel, draws=draws, seed=seed)
    options = {
        "equivalence_threshold": equivalence_threshold,
        "divergence_threshold": divergence_threshold,
        "confidence": confidence,
        "group_by": group_by,
    }
    # Each draw holds every pair once, so the draws repeat pair ids by design: the duplicate
    # check of aggregate() does not apply to them.
    resampled = aggregate_checked(runs.lazy(), [*by, _DRAW], **options)
    said = _passed(gate(summary, per=by, **gates).checks)
    again = _passed(gate(resampled, per=[*by, _DRAW], **gates).checks, drawn=True)
    share = (
        again.join(said, on=["metric", "slice"], how="inner", suffix="_said")
        .group_by("metric", "slice")
        .agg((pl.col("passed") == pl.col("passed_said")).mean().alias(STABILITY))
    )
    labelled = summary.with_columns(slice_label(by).alias("__slice"))
    return labelled.join(
        share.rename({"slice": "__slice"}), on=["metric", "__slice"], how="left"
    ).drop("__slice")


def _resampled(
    members: pl.DataFrame, combine: str, *, panel: bool, draws: int, seed: int
) -> pl.DataFrame:
    """``draws`` runs (``__draw``) of combined rows, each from repeats drawn with replacement."""
    base = members.with_columns(
        pl.struct("pair_id", "metric", "judge_model").rank("dense").alias(_U),
        pl.struct("pair_id", "metric").rank("dense").cast(pl.Int64).alias(_PM),
    ).with_columns(pl.len().over(_U).alias(_K))
    slots = base.select(_U, _PM, _K).join(
        pl.DataFrame({_DRAW: pl.arange(0, draws, eager=True).cast(pl.Int64)}), how="cross"
    )
    rng = np.random.default_rng(seed)
    picks = np.floor(rng.random(slots.height) * slots[_K].to_numpy()).astype(np.int64)
    slots = slots.with_columns(pl.Series(_PICK, picks))
    picked = slots.join(
        base.drop(_PM, _K), left_on=[_U, _PICK], right_on=[_U, REPEAT], how="inner"
    ).with_columns(
        pl.col(_PICK).alias(REPEAT),
        (pl.col(_PM) * draws + pl.col(_DRAW)).alias(_UNIT),
    )
    columns = [*members.columns, _DRAW, _UNIT]
    combined = combine_members(picked.select(columns), combine, panel=panel, unit=_UNIT)
    return combined.drop(_UNIT, REPEAT)


def _passed(checks: pl.DataFrame, *, drawn: bool = False) -> pl.DataFrame:
    """Per (metric, slice): its three-way verdict (``passed``: 0 pass, 1 inconclusive, 2 fail);
    ``drawn``: per resampled run too (its slice label loses the draw, which becomes ``__d``)."""
    keys = ["metric", "slice"]
    if drawn:
        slice_ = pl.col("slice")
        label = slice_.str.replace(r"(, )?__draw=\d+$", "")
        checks = checks.with_columns(
            slice_.str.extract(r"__draw=(\d+)$").cast(pl.Int64).alias("__d"),
            pl.when(label == "").then(pl.lit("overall")).otherwise(label).alias("slice"),
        )
        keys.append("__d")
    # The three-way verdict of each (metric, slice): fail beats inconclusive beats pass.
    status = check_statuses(checks)
    rank = status.replace_strict({"pass": 0, "inconclusive": 1, "fail": 2}, return_dtype=pl.Int8)
    return (
        checks.with_columns(rank.alias("__rank"))
        .group_by(keys)
        .agg(pl.col("__rank").max().alias("passed"))
    )


def scoped_stability(
    scored: DataLike,
    summary: pl.DataFrame,
    slices: Sequence[str],
    *,
    overall: Mapping[str, Any],
    per_slice: Mapping[str, Any],
    **options: Any,
) -> pl.DataFrame:
    """``summary`` (from :func:`~pairwise_polars.summary.summarize`: overall and slice rows)
    with ``verdict_stability``: its overall rows under the ``overall`` gates, its slice rows
    under the ``per_slice`` gates (the gates :func:`gate` reads; disparity gates are left
    out: repeats do not move them). ``options``: :func:`verdict_stability`'s keywords and
    the gate's reading (``conservative``, ``min_groups``, ``errors_as``)."""
    parts = []
    for scope, by, gates in (("overall", [], overall), ("slice", list(slices), per_slice)):
        rows = summary.filter(pl.col("scope") == scope)
        fair = {k: v for k, v in gates.items() if k in _STABLE_GATES}
        if rows.is_empty() or not fair:
            parts.append(rows.with_columns(pl.lit(None, pl.Float64).alias(STABILITY)))
            continue
        parts.append(verdict_stability(scored, rows, by=by, **fair, **options))
    return pl.concat(parts, how="diagonal_relaxed").select(*summary.columns, STABILITY)
