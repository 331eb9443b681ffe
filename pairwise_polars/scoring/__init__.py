"""Scoring: pairs -> unique, keyed judge requests (prepared once) -> the cached judge map ->
results joined back to pairs by key; and the plan of a call before anything is spent."""

from pairwise_polars.scoring._cost import Prices, Spent, Usage
from pairwise_polars.scoring._plan import Plan
from pairwise_polars.scoring._prepare import ORDERS, MetricsLike, Order, Prepared, prepare
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

__all__ = [
    "ORDERS",
    "CacheLike",
    "MetricsLike",
    "Order",
    "Plan",
    "Prepared",
    "Prices",
    "Scoring",
    "Spent",
    "Usage",
    "ascore",
    "ascore_pairs",
    "ascore_prepared",
    "plan",
    "prepare",
    "score",
    "score_pairs",
    "score_prepared",
]
