"""A prepared call of a panel or repeats planned, then scored, with one cache lookup: what
:func:`~pairwise_polars.scoring.score_prepared` does for one judge, for every member (the path
of a manifest target with ``judge:`` as a list or ``repeats:``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import polars as pl

from pairwise_polars.engine import JudgementCache, cache_session, sync_twin
from pairwise_polars.engine._cache import CacheArg
from pairwise_polars.scoring._cost import Prices, Usage
from pairwise_polars.scoring._members import Members, combined_plan, score_members
from pairwise_polars.scoring._plan import Plan
from pairwise_polars.scoring._prepare import Prepared
from pairwise_polars.scoring._score import Scoring


async def ascore_members_prepared(
    fanned: Sequence[tuple[Prepared, int]],
    members: Members,
    *,
    cache: CacheArg = True,
    progress: bool = True,
    dry_run: bool = False,
    on_plan: Callable[[Plan], None] | None = None,
    prices: Prices | None = None,
    on_usage: Callable[[Usage], None] | None = None,
) -> tuple[Plan, pl.DataFrame | None]:
    """Plan every member's calls (added up, told to ``on_plan``), then unless ``dry_run``
    score them all and tell ``on_usage`` what every member spent, each priced by its model."""
    cacheable = any(p.traits.cacheable for p, _ in fanned)
    with cache_session(cache, enabled=cacheable) as store:
        scorings = {
            id(p): Scoring(p, store if p.traits.cacheable else None, prices) for p, _ in fanned
        }
        planned = combined_plan([s.plan() for s in scorings.values()], members)
        if on_plan is not None:
            on_plan(planned)
        if dry_run:
            return planned, None

        async def one(prepared: Prepared, _: JudgementCache | None, bar: bool) -> pl.DataFrame:
            return await scorings[id(prepared)].score(progress=bar)

        scored = await score_members(fanned, members, one, cache=store, progress=progress)
    if on_usage is not None:
        on_usage(added([s.usage for s in scorings.values() if s.usage is not None]))
    return planned, scored


score_members_prepared = sync_twin(ascore_members_prepared, "score_members_prepared")


def added(usages: Sequence[Usage]) -> Usage:
    """Usages added up; the cost is unknown when any part's is."""
    costs = [u.cost_usd for u in usages]
    return Usage(
        requests=sum(u.requests for u in usages),
        input_tokens=sum(u.input_tokens for u in usages),
        cached_tokens=sum(u.cached_tokens for u in usages),
        output_tokens=sum(u.output_tokens for u in usages),
        cost_usd=None if None in costs else sum(c for c in costs if c is not None),
        price="; ".join(dict.fromkeys(u.price for u in usages)),
    )
