"""Which pairs to give people to label: whole groups drawn at random, stratified by slice and by
the judge's score, reproducible by seed, as a CSV a person can fill in."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl

from pairwise_polars._errors import ColumnError, OptionError, ScoreError
from pairwise_polars.io._frames import DataLike, to_lazy
from pairwise_polars.metrics import get_metric, metric_names

SHOWN = ("input_a", "input_b", "output_a", "output_b")
"""The texts a person reads to label a pair: both requests and both responses."""
_STRATUM, _ORDER = "__sample_stratum", "__sample_order"


def sample_for_labelling(
    scored: DataLike,
    n: int = 200,
    by: Sequence[str] | None = None,
    *,
    metric: str | None = None,
    per_group: int | None = None,
    seed: int = 0,
    group_by: str = "group_id",
    path: str | Path | None = None,
) -> pl.DataFrame:
    """About ``n`` scored pairs of one metric for people to label, and (``path=``) the CSV
    they fill in: ``pair_id``, the group and pair ids, ``metric``, the slice columns ``by``
    (default ``dimension`` when there), ``pair_kind``, both requests and responses, the
    metric's ``rubric`` in words and an empty ``label`` column. Pass the filled-in file to
    ``aggregate(..., labels=...)`` as it is; rows left empty are pairs not labelled.

    Pairs are drawn by group: groups in a random order (``seed``), whole groups taken until a
    stratum has its share of ``n``; ``per_group`` takes at most that many pairs of each
    (fewer labels per group spread them over more groups; keep it unset when groups differ in
    size, or the pairs of small groups are over-represented). The strata are the slices times
    three bands of the group's mean judge score, each given ``n`` in proportion to its pairs,
    so the sample is as spread as the run and every pair about as likely to be drawn: the
    prediction-powered estimates assume exactly that. The judge's score and reason are not in
    the file: a person labels blind. Pairs the judge did not score are left out (they cannot
    be compared). Control pairs are drawn with their groups (the excess needs them labelled).

    >>> import polars as pl
    >>> scored = pl.DataFrame({"pair_id": range(8), "group_id": [1, 1, 2, 2, 3, 3, 4, 4],
    ...     "id_a": 0, "id_b": range(8), "metric": "pairwise-bias", "score": 0.25,
    ...     "input_a": "Q", "input_b": "Q", "output_a": "A", "output_b": "B"})
    >>> drawn = sample_for_labelling(scored, n=8, seed=1)
    >>> drawn.height, drawn.columns[-2:], drawn["label"].null_count()
    (8, ['rubric', 'label'], 8)
    """
    if not n >= 1:  # NaN too
        raise OptionError(f"n must be at least 1 pair to label, got {n}.")
    if per_group is not None and not per_group >= 1:
        raise OptionError(f"per_group must be at least 1 (or None: whole groups), got {per_group}.")
    frame, _ = to_lazy(scored)
    schema = frame.collect_schema()
    by = (["dimension"] if "dimension" in schema else []) if by is None else list(by)
    needed = ["pair_id", group_by, "metric", "score", *by, *SHOWN]
    missing = [c for c in needed if c not in schema]
    if missing:
        raise ColumnError(
            f"sample_for_labelling needs columns {missing}, which the scored frame lacks; it has "
            f"{list(schema.names())}. Pass the frame score() returned (it keeps both texts)."
        )
    nested = [c for c in by if schema[c].is_nested()]
    if nested:
        raise ColumnError(
            f"sample_for_labelling draws in proportion to each slice, and slice column "
            f"{nested[0]!r} has type {schema[nested[0]]}, which names no slice. Pass by=[...] "
            "with text or number columns (e.g. unnest the struct first)."
        )
    metrics = frame.select(pl.col("metric").unique()).collect()["metric"].to_list()
    if not metrics:
        raise ScoreError("The scored frame has no rows: nothing to label. Pass a scored frame.")
    if metric is None and len(metrics) > 1:
        raise OptionError(
            f"The scored frame has metrics {sorted(metrics)}: pass metric=<one of them>; label "
            "each metric in its own file."
        )
    metric = str(metric if metric is not None else metrics[0])
    if metric not in metrics:
        raise OptionError(f"metric {metric!r} is not in the scored frame (it has {metrics}).")
    of_metric = frame.filter(pl.col("metric") == metric)
    rows = of_metric.filter(pl.col("score").is_not_null()).collect()
    if rows.is_empty():
        pairs = of_metric.select(pl.len()).collect().item()
        raise ScoreError(
            f"None of the {pairs} pairs of {metric!r} has a score (every judgement failed): "
            "nothing to label. Fix the judge (see the error column) and score again."
        )
    drawn = _draw(rows, n, by, group_by, per_group, seed)
    keep = [c for c in ("pair_id", group_by, "id_a", "id_b") if c in rows.columns]
    kind = ["pair_kind"] if "pair_kind" in rows.columns else []
    out = drawn.select(
        *keep, "metric", *[c for c in by if c not in keep], *kind, *SHOWN,
        pl.lit(_rubric(metric, rows)).alias("rubric"), pl.lit(None, pl.String).alias("label"),
    )  # fmt: skip
    if path is not None:
        out.write_csv(Path(path))
    return out


def _draw(
    rows: pl.DataFrame,
    n: int,
    by: list[str],
    group_by: str,
    per_group: int | None,
    seed: int,
) -> pl.DataFrame:
    """The drawn pairs: groups shuffled by ``seed`` within strata, taken up to each share."""
    groups = (
        rows.group_by(group_by)
        .agg(*[pl.col(c).first() for c in by], pl.col("score").mean().alias("__mean"))
        .sort(group_by)
    )
    band = (pl.col("__mean").rank("ordinal") * 3 // (pl.len() + 1)).cast(pl.String)
    parts = [*[pl.col(c).cast(pl.String).fill_null("") for c in by], band]
    rng = np.random.default_rng(seed)
    groups = groups.with_columns(
        pl.concat_str(parts, separator="\x1f").alias(_STRATUM),
        pl.Series(_ORDER, rng.permutation(groups.height)),
    )
    rows = rows.sort(group_by, "pair_id").with_columns(
        pl.Series("__pair_order", rng.permutation(rows.height))
    )
    rows = rows.sort(group_by, "__pair_order")
    if per_group is not None:
        rows = rows.filter(pl.int_range(pl.len()).over(group_by) < per_group)
    sizes = rows.group_by(group_by).agg(pl.len().alias("__size"))
    groups = groups.join(sizes, on=group_by).sort(_STRATUM, _ORDER)
    total = groups["__size"].sum()
    share = pl.col("__size").sum().over(_STRATUM) * min(n, total) / total
    # A group is taken when the middle of its run of pairs falls within the stratum's share.
    middle = pl.col("__size").cum_sum().over(_STRATUM) - pl.col("__size") / 2
    taken = groups.filter(middle < share)
    return rows.join(taken.select(group_by, _ORDER), on=group_by).sort(_ORDER, "__pair_order")


def _rubric(metric: str, rows: pl.DataFrame) -> str:
    if metric in metric_names():
        words = get_metric(metric).labels
        return "; ".join(f"{k} = {v}" for k, v in sorted(words.items()))
    if "raw_score" in rows.columns:
        top = rows.filter(pl.col("score") > 0).select(pl.col("raw_score") / pl.col("score"))
        if top.height:
            return f"an integer from 0 (equivalent treatment) to {round(top.item(0, 0))}"
    return "an integer on the metric's rubric, 0 = equivalent treatment"
