"""From pairs to unique judge requests: one row per (pair, metric, view), rendered and keyed.

Identical requests (same judge identity, metric version and messages) get the same key, so they
are judged once whatever the number of pairs sharing them, and found in the cache next time.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import polars as pl

from pairwise_polars._errors import ColumnError, Fix, MetricError
from pairwise_polars._schemas import REQUEST_SCHEMA
from pairwise_polars.counterfactual._mask import FOUND, mask_terms
from pairwise_polars.metrics import PAIR_VARIABLES, Metric, render_messages
from pairwise_polars.pairing._pairs import SKIP_REASON
from pairwise_polars.scoring._labels import check_labels
from pairwise_polars.scoring._views import VIEW, is_swapped, masked_view, order_views

ROW = "__pairwise_row"
_H1, _H2 = "__pairwise_h1", "__pairwise_h2"
UNDER_TEST = "attribute_under_test"
TEXT = ("input_a", "input_b", "output_a", "output_b", "attribute_a", "attribute_b", "dimension")
REQUIRED = ("pair_id", "input_a", "input_b", "output_a", "output_b")


def check_pairs(pairs: pl.DataFrame, metrics: Sequence[Metric]) -> None:
    """Every problem that would stop the run, found before the first paid call."""
    missing = [c for c in REQUIRED if c not in pairs.columns]
    if missing:
        raise ColumnError(
            f"The pair frame lacks columns {missing}; it has {pairs.columns}. Build it with "
            "form_pairs(...), or pass the response rows to score(...) instead of score_pairs."
        )
    check_labels(pairs, [metric.params for metric in metrics])
    judgeable = _judgeable(pairs)
    for metric in metrics:
        available: set[str] = set(PAIR_VARIABLES)
        if UNDER_TEST in metric.requires:
            available.add(UNDER_TEST)
        metric.check_variables(available)
        if UNDER_TEST in metric.requires and UNDER_TEST not in metric.params:
            if "dimension" not in pairs.columns:
                nulls = judgeable
            else:
                nulls = judgeable.filter(pl.col("dimension").is_null())
            if not nulls.is_empty():
                examples = nulls["pair_id"].head(3).to_list()
                detail = (
                    f"Metric {metric.name!r} needs the attribute under test, and "
                    f"{nulls.height} pairs have no dimension (e.g. pair_id {examples})."
                )
                raise MetricError(
                    f"{detail} Fill the dimension column, or pass get_metric({metric.name!r}, "
                    'attribute_under_test="gender").',
                    detail=detail,
                    fixes=[Fix("attribute_under_test", {"metric": metric.name})],
                )


def request_rows(
    pairs: pl.DataFrame,
    metrics: Sequence[Metric],
    both_orders: bool,
    *,
    shuffle: bool = False,
    masked: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """One row per (judgeable pair, metric, view) with its template variables and a 128-bit
    dedupe hash of them; the ``view`` column says which (:func:`order_views`: view ``b-a``
    swaps the a/b sides). ``masked`` (pairs with their terms masked, see
    :func:`masked_pairs`) adds each one's masked views (``"masked a-b"`` ...)."""
    sources = [(_judgeable(pairs), False)]
    if masked is not None:
        sources.append((masked, True))
    parts = []
    for frame, is_masked in sources:
        parts += _view_rows(frame, metrics, both_orders, shuffle=shuffle, is_masked=is_masked)
    rows = pl.concat(parts) if parts else pl.DataFrame()
    if rows.is_empty():
        return rows
    key_cols = ["metric", *TEXT, UNDER_TEST]
    return rows.with_columns(
        pl.struct(key_cols).hash(seed=0).alias(_H1), pl.struct(key_cols).hash(seed=1).alias(_H2)
    )


def masked_pairs(pairs: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(masked, not_masked)``: the judgeable counterfactual pairs whose attribute terms were
    found, with them masked in both requests and both responses (and the attribute values
    hidden), and the row ids of the other judgeable pairs with why they have no masked
    judgement (``reason``): nothing found, or a control pair (one request asked twice: no
    attribute differs, so the audit leaves it out)."""
    judgeable = _judgeable(pairs)
    texts = [c for c in ("input_a", "input_b", "output_a", "output_b") if c in judgeable.columns]
    if "dimension" not in judgeable.columns:
        judgeable = judgeable.with_columns(pl.lit(None, pl.String).alias("dimension"))
    control = (
        pl.col("pair_kind").cast(pl.String).eq_missing("control")
        if "pair_kind" in judgeable.columns
        else pl.lit(False)
    )
    found = mask_terms(judgeable.filter(~control), texts)
    hidden = [
        pl.when(pl.col(c).is_not_null()).then(pl.format("[{}]", "dimension")).alias(c)
        for c in ("attribute_a", "attribute_b")
        if c in found.columns
    ]
    masked = found.filter(pl.col(FOUND)).with_columns(hidden).drop(FOUND)
    dimension = pl.col("dimension").cast(pl.String).fill_null("attribute")
    nothing = found.filter(~pl.col(FOUND)).select(
        ROW, reason=pl.format("no {} term found to mask", dimension)
    )
    controls = judgeable.filter(control).select(
        ROW, reason=pl.lit("a control pair (the audit masks counterfactual pairs)")
    )
    return masked, pl.concat([nothing, controls])


def _view_rows(
    frame: pl.DataFrame,
    metrics: Sequence[Metric],
    both_orders: bool,
    *,
    shuffle: bool,
    is_masked: bool,
) -> list[pl.DataFrame]:
    judgeable = frame.with_columns(
        [pl.lit(None, pl.String).alias(c) for c in TEXT if c not in frame.columns]
    )
    swap = {f"{n}_a": f"{n}_b" for n in ("input", "output", "attribute")}
    swap |= {b: a for a, b in swap.items()}
    parts = []
    for metric in metrics:
        for view in order_views(both_orders, shuffle=shuffle):
            swapped = is_swapped(view)
            sides = [
                pl.when(swapped).then(pl.col(swap[c])).otherwise(pl.col(c)).cast(pl.String).alias(c)
                if c in swap
                else pl.col(c).cast(pl.String).alias(c)
                for c in TEXT
            ]
            under_test = metric.params.get(UNDER_TEST)
            parts.append(
                judgeable.select(
                    ROW,
                    pl.lit(metric.name).alias("metric"),
                    (masked_view(view) if is_masked else view).alias(VIEW),
                    pl.lit(metric.max_score, pl.Int64).alias("max_score"),
                    *sides,
                    (pl.lit(str(under_test)) if under_test is not None else pl.col("dimension"))
                    .cast(pl.String)
                    .alias(UNDER_TEST),
                )
            )
    return parts


def unique_requests(
    rows: pl.DataFrame,
    metrics: Sequence[Metric],
    *,
    identity: dict[str, Any],
    uses_messages: bool,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(keys, requests)``: the dedupe hash -> request key map, and the unique requests frame
    with REQUEST_SCHEMA columns. Rendering happens once per distinct set of variables."""
    distinct = rows.unique(subset=[_H1, _H2], keep="first", maintain_order=True)
    if uses_messages:
        identity_json = json.dumps(identity, sort_keys=True, default=str)
        variables = distinct.select("metric", *TEXT, UNDER_TEST).with_columns(
            input=pl.col("input_a")
        )
        messages = pl.Series("messages", [None] * distinct.height, dtype=pl.String)
        for metric in metrics:  # each metric's rows rendered at once (metrics/_compiled.py)
            at = (variables["metric"] == metric.name).arg_true()
            if not at.is_empty():
                messages = messages.scatter(at, render_messages(metric, variables[at]))
        keys = _request_keys(identity_json, metrics, distinct["metric"], messages)
        distinct = distinct.with_columns(messages=messages, key=pl.Series(keys, dtype=pl.String))
    else:
        distinct = distinct.with_columns(
            messages=pl.lit(None, pl.String),
            key=pl.concat_str(
                pl.col(_H1).cast(pl.String), pl.lit("-"), pl.col(_H2).cast(pl.String)
            ),
        )
    keys = distinct.select(_H1, _H2, "key")
    requests = distinct.unique(subset="key", keep="first", maintain_order=True).select(
        [pl.col(c).cast(t) for c, t in REQUEST_SCHEMA.items()]
    )
    return keys, requests


def _request_key(identity_json: str, metric: Metric, messages: str) -> str:
    payload = f"{identity_json}\x1f{metric.name}\x1f{metric.version}\x1f{messages}"
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _request_keys(
    identity_json: str, metrics: Sequence[Metric], names: pl.Series, messages: pl.Series
) -> list[str]:
    """:func:`_request_key` of every row (its metric's name, its rendered messages), hashing
    the messages' UTF-8 bytes as polars holds them: the same bytes as ``payload.encode()``,
    so the same keys, without making each message a Python string and encoding it back
    (3,000 requests of ~3.7 KB measured ~13 -> ~4 us a key)."""
    by_name = {m.name: m for m in metrics}
    heads = {
        name: hashlib.sha256(f"{identity_json}\x1f{m.name}\x1f{m.version}\x1f".encode())
        for name, m in by_name.items()
    }
    keys = []
    for name, data in zip(names.to_list(), messages.cast(pl.Binary).to_list(), strict=True):
        digest = heads[name].copy()
        digest.update(b"None" if data is None else data)  # as the f-string writes a null
        keys.append(digest.hexdigest())
    return keys


def attach_keys(rows: pl.DataFrame, keys: pl.DataFrame) -> pl.DataFrame:
    """The request key of every (pair, metric, view) row, joined by the dedupe hash."""
    return (
        rows.select(ROW, "metric", VIEW, "max_score", _H1, _H2)
        .join(keys, on=[_H1, _H2], how="left")
        .drop(_H1, _H2)
    )


def _judgeable(pairs: pl.DataFrame) -> pl.DataFrame:
    if SKIP_REASON in pairs.columns:
        return pairs.filter(pl.col(SKIP_REASON).is_null())
    return pairs
