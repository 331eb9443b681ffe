"""Human labels of pairs: read, checked against the scored pairs and the metric's rubric, and
attached to the scored frame as ``label`` (normalised like ``score``) and ``raw_label``.

A label row names one (pair, metric): ``pair_id`` (or the pair's ``group_id``, ``id_a`` and
``id_b``), ``metric``, and ``label``, an integer on the metric's own rubric (0 to its max, as the
judge answers). A row whose ``label`` is empty is a pair not yet labelled (the CSV of
:func:`~pairwise_polars.sample_for_labelling` before a person filled it in) and is left out.
Everything else that cannot be used is an error naming the row: a missing column, a label off
the rubric, a (pair, metric) labelled twice, a pair the scored frame does not have.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from pairwise_polars._errors import ColumnError, DataSourceError, MetricError
from pairwise_polars.io._frames import DataLike, to_lazy
from pairwise_polars.metrics import get_metric, metric_names

LABEL = "label"
"""Scored column: the human label normalised like ``score`` (raw / rubric max); null when the
pair has none."""
RAW_LABEL = "raw_label"
"""Scored column: the human label on the metric's rubric, as given."""
PAIR_KEYS = ("group_id", "id_a", "id_b")
"""The columns that name a pair when a label row has no ``pair_id``."""
_ROW = "__label_row"
_SHOWN = 5  # problems named per kind; the count says how many more


def read_labels(labels: DataLike) -> pl.DataFrame:
    """The label rows of a frame or a file (CSV, parquet, ...), with their row number, without
    rows whose ``label`` is empty. Raises :class:`ColumnError` when columns are missing and
    :class:`DataSourceError` when a label is not a number."""
    frame = to_lazy(labels)[0].collect().with_row_index(_ROW, offset=1)
    have = frame.columns[1:]
    keys = _key_columns(have)
    missing = [c for c in ("metric", LABEL) if c not in have]
    if keys is None or missing:
        need = missing + ([] if keys is not None else ["pair_id (or group_id, id_a, id_b)"])
        raise ColumnError(
            f"Labels need the columns {', '.join(need)}; the labels have {have}. A label row is "
            "one (pair, metric): pair_id (or the pair's group_id, id_a and id_b), metric and "
            "label on the metric's rubric (sample_for_labelling writes such a file)."
        )
    text = pl.col(LABEL).cast(pl.String).str.strip_chars()
    frame = frame.with_columns(text.alias(LABEL)).filter(pl.col(LABEL).ne(""))
    number = pl.col(LABEL).cast(pl.Float64, strict=False)
    bad = frame.filter(number.is_null())
    if not bad.is_empty():
        raise DataSourceError(
            f"{bad.height} labels are not numbers: {_rows(bad, keys)}. A label is an integer "
            "on the metric's rubric (e.g. 0-4 for pairwise-bias); leave it empty for a pair "
            "not labelled."
        )
    return frame.with_columns(number.alias(RAW_LABEL)).select(
        _ROW, *[pl.col(k).cast(pl.String) for k in keys], pl.col("metric").cast(pl.String),
        RAW_LABEL,
    )  # fmt: skip


def rubric_maxima(scored: pl.LazyFrame, metrics: list[str]) -> dict[str, int]:
    """Each metric's rubric max: read off the scored pairs (``raw_score / score``), so a user's
    own metric works; a shipped metric's definition when no pair scored above 0."""
    found: dict[str, int] = {}
    if "raw_score" in scored.collect_schema():
        ratios = (
            scored.filter(pl.col("metric").is_in(metrics) & (pl.col("score") > 0))
            .group_by(pl.col("metric").cast(pl.String))
            .agg((pl.col("raw_score") / pl.col("score")).median().round(0).alias("max"))
            .collect()
        )
        found = {m: int(v) for m, v in ratios.iter_rows() if v is not None}
    for name in metrics:
        if name not in found and name in metric_names():
            found[name] = get_metric(name).max_score
    unknown = [m for m in metrics if m not in found]
    if unknown:
        raise MetricError(
            f"Cannot tell the rubric of metric {unknown[0]!r} to read its labels: it is not a "
            "shipped metric and no scored pair of it has a score above 0 (with raw_score). "
            "Aggregate the frame score() returned, which has raw_score."
        )
    return found


def attach_labels(scored: pl.LazyFrame, labels: DataLike) -> pl.LazyFrame:
    """``scored`` with ``label`` and ``raw_label`` from ``labels`` (null where a pair has none),
    every label row checked first (see the module docstring)."""
    return join_labels(scored, check_labels(scored, labels))


def check_labels(
    pairs: pl.LazyFrame, labels: DataLike, maxima: Mapping[str, int] | None = None
) -> pl.DataFrame:
    """The usable label rows (keys, ``metric``, ``raw_label``, ``label``), checked against the
    (pair, metric) rows of ``pairs`` and the rubric maxima (by default read off ``pairs``, a
    scored frame; before scoring, pass the pair frame crossed with the metrics and their
    maxima). Raises an error naming the rows that cannot be used."""
    rows = read_labels(labels)
    schema = pairs.collect_schema()
    keys = _key_columns(rows.columns)
    assert keys is not None  # read_labels refused the rows otherwise
    absent = [k for k in (*keys, "metric") if k not in schema]
    if absent:
        raise ColumnError(
            f"The labels name pairs by {list(keys)}, but the scored frame lacks {absent}; it "
            f"has {list(schema.names())}. Label by columns the scored frame has."
        )
    metrics = rows["metric"].unique().to_list()
    if maxima is None:
        maxima = rubric_maxima(pairs, metrics)
    _check_rubric(rows, keys, maxima)
    _check_duplicates(rows, keys)
    as_text = [pl.col(k).cast(pl.String) for k in (*keys, "metric")]
    known = pairs.select(as_text).unique().collect()
    unknown = rows.join(known, on=[*keys, "metric"], how="anti", nulls_equal=True)
    if not unknown.is_empty():
        raise ColumnError(
            f"{unknown.height} labels name a (pair, metric) the scored frame does not have: "
            f"{_rows(unknown, keys)}. Label pairs of this run (sample_for_labelling picks them), "
            "under the metric names it was scored with."
        )
    scale = pl.col("metric").replace_strict(dict(maxima), default=None, return_dtype=pl.Float64)
    return rows.select(*keys, "metric", RAW_LABEL, (pl.col(RAW_LABEL) / scale).alias(LABEL))


def check_labels_for_pairs(
    pairs: pl.DataFrame | pl.LazyFrame, maxima: Mapping[str, int], labels: DataLike
) -> pl.DataFrame:
    """:func:`check_labels` before scoring: against every pair of ``pairs`` under each metric
    of ``maxima`` (metric name: rubric max), so a bad label stops the run before a paid call."""
    frame = pairs.lazy()
    schema = frame.collect_schema()
    keys = [k for k in ("pair_id", *PAIR_KEYS) if k in schema]
    metrics = pl.LazyFrame({"metric": list(maxima)}, schema={"metric": pl.String})
    return check_labels(frame.select(keys).join(metrics, how="cross"), labels, maxima)


def join_labels(scored: pl.LazyFrame, checked: pl.DataFrame) -> pl.LazyFrame:
    """``scored`` with the ``label`` and ``raw_label`` of :func:`check_labels` rows joined on
    (pair, metric); a former ``label`` / ``raw_label`` pair of columns is replaced."""
    keys = [c for c in checked.columns if c not in (RAW_LABEL, LABEL)]
    helper = {k: f"__label_key_{k}" for k in keys}
    schema = scored.collect_schema()
    base = scored.drop([c for c in (LABEL, RAW_LABEL) if c in schema])
    base = base.with_columns(pl.col(k).cast(pl.String).alias(h) for k, h in helper.items())
    return base.join(
        checked.rename(helper).lazy(), on=list(helper.values()), how="left", nulls_equal=True
    ).drop(list(helper.values()))


def _key_columns(columns: list[str]) -> tuple[str, ...] | None:
    if "pair_id" in columns:
        return ("pair_id",)
    return PAIR_KEYS if all(k in columns for k in PAIR_KEYS) else None


def _check_rubric(rows: pl.DataFrame, keys: tuple[str, ...], maxima: Mapping[str, int]) -> None:
    top = pl.col("metric").replace_strict(maxima, default=None, return_dtype=pl.Float64)
    value = pl.col(RAW_LABEL)
    off = rows.filter((value < 0) | (value > top) | (value != value.round(0)))
    if not off.is_empty():
        scales = ", ".join(f"{m}: 0-{maxima[m]}" for m in sorted(off["metric"].unique()))
        raise DataSourceError(
            f"{off.height} labels lie off their metric's rubric ({scales}): "
            f"{_rows(off, keys)}. A label is an integer the judge could have answered, on the "
            "raw rubric (not normalised to 0-1)."
        )


def _check_duplicates(rows: pl.DataFrame, keys: tuple[str, ...]) -> None:
    twice = rows.filter(pl.len().over([*keys, "metric"]) > 1)
    if not twice.is_empty():
        raise DataSourceError(
            f"{twice.height} label rows label the same (pair, metric) more than once: "
            f"{_rows(twice, keys)}. Keep one label per pair and metric (settle disagreements "
            "between labellers before aggregating)."
        )


def _rows(rows: pl.DataFrame, keys: tuple[str, ...]) -> str:
    shown = []
    for row in rows.head(_SHOWN).iter_rows(named=True):
        pair = ", ".join(f"{k}={row[k]}" for k in keys)
        label = f", label={row[RAW_LABEL]:g}" if RAW_LABEL in row else f", label={row[LABEL]!r}"
        shown.append(f"row {row[_ROW]} ({pair}, metric={row['metric']}{label})")
    more = f" and {rows.height - _SHOWN} more" if rows.height > _SHOWN else ""
    return "; ".join(shown) + more + " (rows counted from 1 after the header)"
