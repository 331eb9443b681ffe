"""A parquet run judged by a panel or with repeats: each chunk judged by every member, the
members recorded in the run's fingerprint (so a run resumes only with the same panel, rule and
repeats) and every member's spending priced by its own model."""

from __future__ import annotations

from typing import Any

import polars as pl

from pairwise_polars._errors import Fix, OptionError
from pairwise_polars.engine import JudgementCache
from pairwise_polars.engine._cached_map import Observe
from pairwise_polars.judges import traits_of
from pairwise_polars.judges._panel import JudgeLike
from pairwise_polars.scoring import Prices, Scoring, ScoringSpec, Spent, Usage
from pairwise_polars.scoring._members import (
    Members,
    members_of,
    prepare_members,
    score_members,
)
from pairwise_polars.scoring._members_run import added


def run_members(judge: JudgeLike, repeats: int, spec: ScoringSpec, *, ray: bool) -> Members | None:
    """The members of a run with a panel or repeats (None: one judge, asked once)."""
    members = members_of(judge, repeats, spec.judge)
    if not members.fanned_out:
        return None
    if ray:
        why = "the Ray runner judges one judge once per request."
        raise OptionError(
            f'A panel or repeats run with runner="local" for now: {why} Drop runner="ray", or '
            "the panel and repeats.",
            detail=f"A panel or repeats run with the local runner for now: {why}",
            fixes=[Fix("local_runner")],
        )
    batch = [j.name for j in members.judges if traits_of(j).kind == "batch"]
    if batch:
        why = f"{batch[0]!r} is a Batch API judge, whose answers come later."
        raise OptionError(
            f"A panel or repeats need chat judges; {why} Use its chat judge (batch=False) in "
            "the panel.",
            detail=f"A panel or repeats in a chunked run need chat judges; {why}",
            fixes=[Fix("chat_judge")],
        )
    return members


def members_fingerprint(members: Members | None) -> dict[str, Any]:
    """What the journal records of the members (nothing for one judge asked once, so runs
    recorded before panels resume)."""
    if members is None:
        return {}
    return {
        "panel": [
            {"name": j.name, "identity": dict(traits_of(j).identity)} for j in members.judges
        ],
        "combine": members.combine,
        "repeats": members.repeats,
    }


async def score_chunk(
    pairs: pl.DataFrame,
    spec: ScoringSpec,
    members: Members,
    store: JudgementCache | None,
    spent: dict[str, Spent],
    observe: Observe,
) -> pl.DataFrame:
    """One chunk judged by every member (their spending added to ``spent`` by judge name)."""

    async def one(prepared: Any, cache: JudgementCache | None, progress: bool) -> pl.DataFrame:
        del progress  # the run's bar counts every member's answers
        scoring = Scoring(prepared, cache)
        scored = await scoring.score(progress=False, observe=observe)
        if scoring.usage is not None:
            spent.setdefault(prepared.judge.name, Spent()).add(scoring.usage)
        return scored

    fanned = prepare_members(pairs, spec, members)
    return await score_members(fanned, members, one, cache=store, progress=False)


def priced_members(spent: dict[str, Spent], members: Members, prices: Prices | None) -> Usage:
    """Every member's spending priced by its model, added up."""
    usages = [
        spent.get(j.name, Spent()).priced(j.name, traits_of(j), prices) for j in members.judges
    ]
    return added(usages)
