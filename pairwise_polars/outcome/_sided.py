"""Outcomes of both sides of scored pairs, read by the heuristic from the pairs' texts: the
columns a chunk of a parquet run keeps beside its scores, so its disparities need no text."""

from __future__ import annotations

import polars as pl

from pairwise_polars.outcome._heuristic import OUTCOME_COLUMNS, heuristic_outcomes

SIDED = tuple(f"{c}_{s}" for c in OUTCOME_COLUMNS for s in "ab")
"""The per-side outcome columns: ``decision_a``, ``decision_b``, ``amount_a`` ..."""


def with_sided_outcomes(scored: pl.DataFrame) -> pl.DataFrame:
    """``scored`` with :data:`SIDED`, read once per pair (not per metric) from ``output_a`` /
    ``output_b`` (numbers stated in ``input_a`` / ``input_b`` skipped). Unchanged when it has
    them already or lacks the texts."""
    if any(c in scored.columns for c in SIDED) or not {"pair_id", "output_a", "output_b"} <= set(
        scored.columns
    ):
        return scored
    texts = [c for c in ("input_a", "input_b", "output_a", "output_b") if c in scored.columns]
    pairs = scored.select("pair_id", *texts).unique("pair_id", keep="first").lazy()
    for side in "ab":
        given = f"input_{side}" if f"input_{side}" in texts else None
        pairs = heuristic_outcomes(pairs, f"output_{side}", given).rename(
            {c: f"{c}_{side}" for c in OUTCOME_COLUMNS}
        )
    read = pairs.select("pair_id", *SIDED).collect()
    return scored.join(read, on="pair_id", how="left", maintain_order="left")
