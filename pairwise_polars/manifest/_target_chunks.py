"""A ``runner: ray`` target planned chunk by chunk: each chunk's pairs prepared, counted and
dropped, so the driver never holds the whole rendered pair frame (the Ray workers pair and
render the chunks again to score them). What is kept: the pairs without their texts, and the
key and rendered length of each unique request, deduplicated over the whole run, so the plan
is the one :func:`~pairwise_polars.plan` gives for the pairs in memory."""

from __future__ import annotations

from collections.abc import Iterable

import polars as pl

from pairwise_polars._schemas import RESULT_SCHEMA
from pairwise_polars.engine import cache_session
from pairwise_polars.engine._cached_map import lookup
from pairwise_polars.judges import traits_of
from pairwise_polars.runs._parts import TEXT_COLUMNS
from pairwise_polars.scoring import CacheLike, Plan, Prices, ScoringSpec, prepare
from pairwise_polars.scoring._plan import PairCounts, counted, pair_counts, request_sizes
from pairwise_polars.scoring._plan import with_outcomes as with_outcome_sizes
from pairwise_polars.scoring._pointwise import outcome_metric
from pairwise_polars.scoring._score import outcome_sizes


def plan_on_chunks(
    chunks: Iterable[pl.DataFrame],
    spec: ScoringSpec,
    *,
    cache: CacheLike,
    prices: Prices | None,
    outcomes: bool,
) -> tuple[pl.DataFrame, Plan]:
    """The pairs of every chunk without their texts, and the plan of them all (with the
    outcome judgements of the responses when ``outcomes``): the figures of the plan of the
    whole pair frame, one cache lookup for the run's unique requests."""
    metric = outcome_metric("outcome") if outcomes else None
    counts = PairCounts()
    sizes: list[pl.DataFrame] = []
    read: list[pl.DataFrame] = []
    n_responses = 0
    kept: list[pl.DataFrame] = []
    for pairs in chunks:
        prepared = prepare(pairs, spec=spec)
        counts += pair_counts(prepared)
        sizes.append(request_sizes(prepared.requests, prepared.traits.uses_messages))
        if metric is not None and (sides := outcome_sizes(prepared, metric)) is not None:
            n_responses += sides[0]
            read.append(sides[1])
        kept.append(pairs.drop(TEXT_COLUMNS, strict=False))
        del prepared, pairs
    traits = traits_of(spec.judge)
    unique = _unique(sizes)
    with cache_session(cache, enabled=traits.cacheable) as store:
        n_cached = lookup(store, unique, RESULT_SCHEMA).height
        planned = counted(counts, unique, n_cached, spec.judge.name, traits, prices)
        if read:  # the judge reads each response's outcome (the heuristic does it for free)
            asked = _unique(read)
            hits = lookup(store, asked, RESULT_SCHEMA).height
            name = spec.judge.name
            planned = with_outcome_sizes(planned, asked, n_responses, hits, name, traits, prices)
    return pl.concat(kept, how="vertical_relaxed"), planned


def _unique(sizes: list[pl.DataFrame]) -> pl.DataFrame:
    """The requests of every chunk once each (the same request in two chunks is sent once)."""
    return pl.concat(sizes, how="vertical").unique("key", keep="first", maintain_order=True)
