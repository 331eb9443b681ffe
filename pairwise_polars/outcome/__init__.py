"""Outcomes per response (decision, amount, refusal and favourability, read by the heuristic
judge's treatment profile or by an LLM judge on a pointwise ``outcome`` metric) and the
disparities they give per attribute."""

from pairwise_polars.outcome._disparities import (
    DISPARITY_COLUMNS,
    DISPARITY_PPI_COLUMNS,
    disparities,
)
from pairwise_polars.outcome._heuristic import OUTCOME_COLUMNS, OUTCOME_SCHEMA
from pairwise_polars.outcome._outcomes import outcomes

__all__ = [
    "DISPARITY_COLUMNS",
    "DISPARITY_PPI_COLUMNS",
    "OUTCOME_COLUMNS",
    "OUTCOME_SCHEMA",
    "disparities",
    "outcomes",
]
