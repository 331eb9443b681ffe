"""Prepare once: the pair frame with row ids, a request key for every (pair, metric, view),
and the unique requests after dedupe, rendered once. Planning, scoring, a manifest target, the
CLI and each chunk of a parquet run all start from one :class:`Prepared`, made from one
:class:`ScoringSpec`."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from pairwise_polars._schemas import REQUEST_SCHEMA
from pairwise_polars.io import DataLike, to_lazy
from pairwise_polars.judges import Judge, JudgeTraits, traits_of
from pairwise_polars.metrics import Metric
from pairwise_polars.pairing import SKIP_REASON, skip_reason
from pairwise_polars.scoring._requests import (
    ROW,
    attach_keys,
    check_pairs,
    masked_pairs,
    request_rows,
    unique_requests,
)
from pairwise_polars.scoring._spec import (  # noqa: F401  (ORDERS: re-exported)
    ORDERS,
    MetricsLike,
    Order,
    ScoringSpec,
    resolve_spec,
)
from pairwise_polars.scoring._views import VIEW

KEYED_SCHEMA = {
    ROW: pl.UInt32,
    "metric": pl.String,
    VIEW: pl.String,
    "max_score": pl.Int64,
    "key": pl.String,
}


@dataclass(frozen=True)
class Prepared:
    """One scoring call before any judge call: everything checked, rendered and keyed."""

    pairs: pl.DataFrame
    """The pair frame with a row id (``ROW``) and ``skip_reason``."""
    keyed: pl.DataFrame
    """One row per judgeable (pair, metric, view): its row id, ``view`` and request key."""
    requests: pl.DataFrame
    """The unique requests (REQUEST_SCHEMA): what the judge is sent, after the cache."""
    spec: ScoringSpec
    traits: JudgeTraits
    not_masked: pl.DataFrame | None = None
    """With ``audit="mask"``: the judgeable pairs without a masked judgement (row id and
    ``reason``: no attribute term found, or a control pair), counted and named, not guessed."""

    @property
    def metrics(self) -> tuple[Metric, ...]:
        return self.spec.metrics

    @property
    def judge(self) -> Judge:
        return self.spec.judge

    @property
    def both_orders(self) -> bool:
        return self.spec.both_orders

    @property
    def order(self) -> Order:
        return self.spec.order

    @property
    def n_skipped(self) -> int:
        """Pairs that cannot be judged (a null or empty output)."""
        return self.pairs.height - self.pairs[SKIP_REASON].null_count()


def prepare(
    pairs: DataLike,
    metrics: MetricsLike = "pairwise-bias",
    *,
    judge: Judge | None = None,
    both_orders: bool = False,
    order: Order = "random",
    spec: ScoringSpec | None = None,
) -> Prepared:
    """Check a pair frame against the metrics (every problem before the first paid call),
    render each distinct request once and key it with the judge's identity: the pairs as
    ``spec`` says (or the keywords, which build it). ``order="random"`` shows each pair to a
    judge that reads messages as (a, b) or (b, a) by a hash of its ``pair_id``; ``"fixed"``
    always as (a, b)."""
    spec = resolve_spec(spec, metrics, judge=judge, both_orders=both_orders, order=order)
    traits = traits_of(spec.judge)
    frame = _as_pairs(pairs)
    check_pairs(frame, spec.metrics)
    frame = frame.with_row_index(ROW)
    # Position bias is a reader's bias: a judge that reads the raw texts sees them as formed.
    shuffle = spec.order == "random" and traits.uses_messages
    masked, not_masked = masked_pairs(frame) if spec.audit == "mask" else (None, None)
    rows = request_rows(frame, spec.metrics, spec.both_orders, shuffle=shuffle, masked=masked)
    if rows.is_empty():
        keyed = pl.DataFrame(schema=KEYED_SCHEMA)
        requests = pl.DataFrame(schema=REQUEST_SCHEMA)
    else:
        keys, requests = unique_requests(
            rows, spec.metrics, identity=dict(traits.identity), uses_messages=traits.uses_messages
        )
        keyed = attach_keys(rows, keys)
    return Prepared(frame, keyed, requests, spec, traits, not_masked)


def _as_pairs(pairs: DataLike) -> pl.DataFrame:
    frame = to_lazy(pairs)[0].collect()
    if not {"output_a", "output_b", "input_a", "input_b"} <= set(frame.columns):
        return frame  # check_pairs names what is missing
    reason = skip_reason()
    if SKIP_REASON in frame.columns:  # a frame's own reasons first; nothing unjudgeable slips by
        reason = pl.coalesce(pl.col(SKIP_REASON), reason)
    return frame.with_columns(reason.alias(SKIP_REASON))
