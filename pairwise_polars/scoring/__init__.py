"""Scoring: pairs -> unique, keyed judge requests (prepared once) -> the cached judge map ->
results joined back to pairs by key; and the plan of a call before anything is spent."""

from pairwise_polars.scoring._cost import Prices, Spent, Usage
from pairwise_polars.scoring._plan import Plan
from pairwise_polars.scoring._prepare import Prepared, prepare
from pairwise_polars.scoring._score import (
    CacheLike,
    Scoring,
    ascore,
    ascore_pairs,
    ascore_prepared,
    plan,
    score,
    score_pairs,
    score_prepared,
)
from pairwise_polars.scoring._spec import (
    AUDITS,
    ORDERS,
    Audit,
    MetricsLike,
    Order,
    ScoringSpec,
    resolve_spec,
)

__all__ = [
    "AUDITS",
    "ORDERS",
    "Audit",
    "CacheLike",
    "MetricsLike",
    "Order",
    "Plan",
    "Prepared",
    "Prices",
    "Scoring",
    "ScoringSpec",
    "Spent",
    "Usage",
    "ascore",
    "ascore_pairs",
    "ascore_prepared",
    "plan",
    "prepare",
    "resolve_spec",
    "score",
    "score_pairs",
    "score_prepared",
]
