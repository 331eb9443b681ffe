"""A target's disparities, for its ``min_impact_ratio`` / ``max_disadvantage`` gates and its
``outcome_labels``: outcomes read per response with the target's judge, joined to the scored
pairs (so ``pairwise-favour``, when the block scores it, gives ``mean_favour`` too), corrected
by people's reading where the block has outcome labels."""

from __future__ import annotations

import polars as pl

from pairwise_polars.judges import Judge
from pairwise_polars.labels import check_outcome_labels
from pairwise_polars.manifest._model import TargetSpec
from pairwise_polars.outcome import OUTCOME_COLUMNS, disparities, outcomes
from pairwise_polars.pairing import form_pairs
from pairwise_polars.scoring import CacheLike
from pairwise_polars.summary import DISPARITY_GATES, plain_rows


def wants_disparities(target: TargetSpec) -> bool:
    """Whether the target reports disparities: a gate reads them or people labelled outcomes."""
    gates = target.gates
    return target.outcome_labels is not None or any(
        name in scope for scope in (gates.overall, gates.per_slice) for name in DISPARITY_GATES
    )


def target_disparities(
    target: TargetSpec, rows: pl.DataFrame, scored: pl.DataFrame, judge: Judge, cache: CacheLike
) -> pl.DataFrame:
    """Per (dimension, attribute): the disparities of the target's responses (outcomes read
    through the target's cache, where the plan looked them up)."""
    columns = target.columns
    read = outcomes(rows, judge, columns=columns, progress=False, cache=cache)
    assert isinstance(read, pl.DataFrame)
    sided = form_pairs(read, target.strategy, **target.pairing())
    assert isinstance(sided, pl.DataFrame)
    per_side = [f"{c}_{s}" for c in OUTCOME_COLUMNS for s in "ab"]
    keep = [c for c in scored.columns if c not in per_side]
    scored = plain_rows(scored.lazy()).collect()  # a masked audit's rows are the judge's
    data = scored.select(keep).join(sided.select("pair_id", *per_side), on="pair_id", how="left")
    by = [c for c in ("dimension", "attribute") if c in data.columns or f"{c}_b" in data.columns]
    return disparities(
        data, by=by, confidence=target.confidence, columns=columns, labels=target.outcome_labels
    )


def check_target_outcome_labels(target: TargetSpec, pairs: pl.DataFrame) -> None:
    """Every row of the target's ``outcome_labels`` names a pair of the run with a usable
    reading (else an error naming the row), checked before the first judge call."""
    if target.outcome_labels is not None:
        check_outcome_labels(pairs.lazy(), target.outcome_labels)
