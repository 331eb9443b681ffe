"""Outcomes per response: decision, amount, refusal and favourability, read by the heuristic
judge's treatment profile or by an LLM judge on a pointwise ``outcome`` metric."""

from pairwise_polars.outcomes._heuristic import OUTCOME_COLUMNS, OUTCOME_SCHEMA
from pairwise_polars.outcomes._outcomes import outcomes

__all__ = ["OUTCOME_COLUMNS", "OUTCOME_SCHEMA", "outcomes"]
