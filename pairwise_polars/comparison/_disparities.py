"""The disparities of two runs compared, attribute by attribute, paired over groups.

A disparity is a mean over groups of a within-group difference (side b against side a: see
:mod:`pairwise_polars.summary._disparity_sums`), so its change is measured within each group:
``d_g = after_g - before_g`` over the groups that measured it in both runs, ``delta`` their
mean, and its interval Student's t on ``G - 1`` degrees of freedom (for differences of yes/no
outcomes, the variance with the same floor as the disparities' own). Compared where present:
the outcomes of both sides (``decision_a`` / ``decision_b`` ..., kept by
:func:`~pairwise_polars.score_parquet`) and the sign of ``pairwise-favour`` when both runs
scored it. Nothing is read from texts: a run without outcome columns has none to compare.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from pairwise_polars.pairing import PAIR_KIND
from pairwise_polars.summary._disparity_power import (
    SIDED,
    group_figures,
    has_favour,
)
from pairwise_polars.summary._disparity_sums import BINARY, FIGURES, _floored_var
from pairwise_polars.summary._student_t import t_cdf, t_quantile


def comparable(before: pl.LazyFrame, after: pl.LazyFrame) -> tuple[bool, bool]:
    """Whether both runs carry each side's outcomes, and whether both scored
    ``pairwise-favour``; disparities are compared when either holds (and attributes exist)."""
    schemas = [run.collect_schema().names() for run in (before, after)]
    if not all({"attribute_a", "attribute_b"} <= set(s) for s in schemas):
        return False, False
    outcomes = all(all(c in s for c in SIDED) for s in schemas)
    return outcomes, has_favour(before) and has_favour(after)


def unmatched_pairs(
    run: pl.LazyFrame, other: pl.LazyFrame, by: Sequence[str], pair_key: list[str]
) -> pl.DataFrame:
    """Per (slice, attribute): the counterfactual pairs of ``run`` that ``other`` lacks (``n``)."""
    alone = run.join(other.select(pair_key).unique(), on=pair_key, how="anti", nulls_equal=True)
    if PAIR_KIND in run.collect_schema().names():
        alone = alone.filter(pl.col(PAIR_KIND).cast(pl.String).ne_missing("control"))
    attribute = pl.col("attribute_b").cast(pl.String).alias("attribute")
    return alone.unique(pair_key).group_by(*by, attribute).agg(n=pl.len().cast(pl.Int64)).collect()


def disparity_changes(
    before: pl.LazyFrame,
    after: pl.LazyFrame,
    *,
    by: Sequence[str],
    pair_key: list[str],
    group_by: str,
    confidence: float,
    outcomes: bool,
) -> pl.DataFrame:
    """One row per (slice of ``by``, attribute, disparity figure) of matched pairs: ``before``,
    ``after`` (over the groups both runs measured), ``delta`` with its interval and p-value,
    ``n_groups``, ``n_matched`` and ``__direction`` (> 0: the disparity moved away from 0)."""
    keys = list(by)
    runs = {"before": before, "after": after}
    sides = {
        run: group_figures(frame, keys, pair_key, group_by, outcomes).collect()
        for run, frame in runs.items()
    }
    on = [*keys, "attribute", group_by]
    joined = sides["before"].join(sides["after"], on=on, how="inner", suffix="_after")
    frames = []
    for measure, figure in FIGURES.items():
        b, a = pl.col(f"__{measure}"), pl.col(f"__{measure}_after")
        both = joined.filter(b.is_not_null() & a.is_not_null())
        d = (a - b).alias("__d")
        var = _floored_var(pl.col("__d")) if measure in BINARY else pl.col("__d").var(ddof=1)
        frames.append(
            both.with_columns(d)
            .group_by([*keys, "attribute"], maintain_order=True)
            .agg(
                before=b.mean(),
                after=a.mean(),
                delta=pl.col("__d").mean(),
                n_groups=pl.len().cast(pl.Int64),
                n_matched=pl.col("n_pairs_after").sum().cast(pl.Int64),
                __var=var,
            )
            .with_columns(figure=pl.lit(figure))
        )
    changes = pl.concat(frames, how="vertical_relaxed")
    return _with_inference(changes, confidence).sort([*keys, "attribute"], nulls_last=True)


def _with_inference(frame: pl.DataFrame, confidence: float) -> pl.DataFrame:
    g = pl.col("n_groups")
    frame = frame.with_columns(
        delta_se=pl.when(g > 1).then((pl.col("__var") / g.cast(pl.Float64)).sqrt()),
        delta_df=pl.when(g > 1).then(g - 1),
    )
    p = 0.5 + confidence / 2
    rows: list[tuple[float | None, float | None, float | None]] = []
    for delta, se, df in frame.select("delta", "delta_se", "delta_df").iter_rows():
        if delta is None or se is None or df is None:
            rows.append((None, None, None))
        elif se == 0:
            rows.append((delta, delta, 1.0 if delta == 0 else 0.0))
        else:
            half = t_quantile(p, df) * se
            rows.append((delta - half, delta + half, min(1.0, 2 * t_cdf(-abs(delta) / se, df))))
    low, high, p_value = (pl.Series([r[i] for r in rows], dtype=pl.Float64) for i in range(3))
    direction = pl.col("after").abs() - pl.col("before").abs()
    return frame.with_columns(
        delta_low=low, delta_high=high, p_value=p_value, __direction=direction
    ).drop("__var")
