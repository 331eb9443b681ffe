"""From pairs to unique judge requests: one row per (pair, metric, view), rendered and keyed.

Identical requests (same judge identity, metric version and messages) get the same key, so they
are judged once whatever the number of pairs sharing them, and found in the cache next time.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import numpy as np
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
            if at.len() == distinct.height:  # one metric's rows: all of them
                messages = render_messages(metric, variables).alias("messages")
            elif not at.is_empty():
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
    (3,000 requests of ~3.7 KB measured ~13 -> ~4 us a key). The bytes all of a metric's
    messages begin with (the system prompt, mostly) are hashed once, the hash copied on."""
    keys = [""] * messages.len()
    for metric in metrics:
        at = (names == metric.name).arg_true()
        if at.is_empty():
            continue
        mine = messages if at.len() == messages.len() else messages.gather(at)
        head = hashlib.sha256(f"{identity_json}\x1f{metric.name}\x1f{metric.version}\x1f".encode())
        for i, key in zip(at.to_list(), _keys_from(head, mine), strict=True):
            keys[i] = key
    return keys


def _keys_from(head: Any, messages: pl.Series) -> list[str]:
    """The hex digests of ``head`` (a hash) continued by each message's UTF-8 bytes (the
    bytes ``None`` for a null, as the f-string writes it)."""
    data = messages.cast(pl.Binary)
    if data.null_count():
        return [_continued(head, b"None" if v is None else v).hexdigest() for v in data.to_list()]
    shared = _shared_prefix(data)
    head = _continued(head, shared)
    array = data.to_arrow(compat_level=pl.CompatLevel.oldest())
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64)[array.offset :][: len(array) + 1]
    buffer = array.buffers()[2]
    view = memoryview(buffer if buffer is not None else b"")
    starts = (offsets[:-1] + len(shared)).tolist()
    return [
        _continued(head, view[start:end]).hexdigest()
        for start, end in zip(starts, offsets[1:].tolist(), strict=True)
    ]


def _shared_prefix(data: pl.Series) -> bytes:
    """The bytes every value of ``data`` (binary, no nulls) begins with: the common prefix of
    its smallest and largest value, which all values between share."""
    low, high = data.min(), data.max()
    if not isinstance(low, bytes) or not isinstance(high, bytes):
        return b""
    size = min(len(low), len(high))
    differ = np.flatnonzero(
        np.frombuffer(low, dtype=np.uint8, count=size)
        != np.frombuffer(high, dtype=np.uint8, count=size)
    )
    return low[: int(differ[0]) if differ.size else size]


def _continued(head: Any, data: bytes | memoryview) -> Any:
    digest = head.copy()
    digest.update(data)
    return digest


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
