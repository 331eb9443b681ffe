"""A pair frame judged by every member (each judge of a panel, each repeat): one prepared call
per member, all judged at once through one cache, the member rows kept and one combined row per
(pair, metric) added (see :mod:`pairwise_polars.summary._judge_rows`)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import polars as pl

from pairwise_polars._schemas import REPEAT
from pairwise_polars.engine import JudgementCache, cache_session
from pairwise_polars.engine._cache import CacheArg
from pairwise_polars.io import DataLike, to_lazy
from pairwise_polars.judges import HeuristicJudge, Judge
from pairwise_polars.judges._panel import JudgeLike, as_panel, check_repeats, repeated
from pairwise_polars.scoring._plan import Plan
from pairwise_polars.scoring._prepare import Prepared, prepare
from pairwise_polars.scoring._spec import Audit, MetricsLike, Order, ScoringSpec, resolve_spec
from pairwise_polars.summary._judge_rows import UNIT, combine_members

_MEMBER = "__judge_member"
ScoreOne = Callable[[Prepared, JudgementCache | None, bool], Awaitable[pl.DataFrame]]


@dataclass(frozen=True)
class Members:
    """Who judges: each (judge, repeat) member, and the rule that combines them."""

    judges: tuple[Judge, ...]
    repeats: int
    combine: str
    panel: bool

    @property
    def fanned_out(self) -> bool:
        return self.panel or self.repeats > 1

    def each(self) -> list[tuple[Judge, int]]:
        return [(repeated(j, r), r) for j in self.judges for r in range(self.repeats)]


def members_of(judge: JudgeLike, repeats: int = 1, single: Judge | None = None) -> Members:
    """The members a ``judge=`` argument and ``repeats`` name (``single``: the spec's judge,
    when ``judge`` is no panel)."""
    repeats = check_repeats(repeats)
    panel = as_panel(judge)
    if panel is not None:
        return Members(tuple(panel.judges), repeats, panel.combine, True)
    one = single if single is not None else judge if judge is not None else HeuristicJudge()
    return Members((one,), repeats, "mean", False)  # pyright: ignore[reportArgumentType]


def keyword_spec(
    spec: ScoringSpec | None,
    metrics: MetricsLike,
    judge: JudgeLike,
    *,
    both_orders: bool,
    order: Order,
    audit: Audit | None,
) -> ScoringSpec:
    """The spec of a call's keywords (:func:`resolve_spec`): ``spec``, or the one the
    keywords say, with the ``judge=`` keyword as the spec sees it."""
    return resolve_spec(
        spec,
        metrics,
        judge=_judge_keyword(judge, spec),
        both_orders=both_orders,
        order=order,
        audit=audit,
    )


def _judge_keyword(judge: JudgeLike, spec: ScoringSpec | None) -> Judge | None:
    """The ``judge=`` keyword as the spec sees it: a panel is the members' business (the
    spec holds one judge at a time), unless a spec was given too, which then refuses it."""
    if spec is None and as_panel(judge) is not None:
        return None
    return judge  # pyright: ignore[reportReturnType]


def prepare_members(
    pairs: DataLike, spec: ScoringSpec, members: Members
) -> list[tuple[Prepared, int]]:
    """One prepared call per member: the spec with the member as its judge."""
    frame = to_lazy(pairs)[0].collect()  # read once, whatever the number of members
    return [(prepare(frame, spec=dataclasses.replace(spec, judge=j)), r) for j, r in members.each()]


async def score_members(
    prepared: Sequence[tuple[Prepared, int]],
    members: Members,
    score_one: ScoreOne,
    *,
    cache: CacheArg,
    progress: bool,
) -> pl.DataFrame:
    """Every member's scored frame (``repeat`` set) and the combined rows, by (pair, metric).
    ``score_one`` judges one prepared call against the store (the scoring map)."""
    cacheable = any(p.traits.cacheable for p, _ in prepared)
    with cache_session(cache, enabled=cacheable) as store:
        runs = [
            score_one(p, store if p.traits.cacheable else None, progress and i == 0)
            for i, (p, _) in enumerate(prepared)
        ]
        frames = await asyncio.gather(*runs)
    parts = [
        frame.with_row_index(UNIT).with_columns(
            pl.lit(r, pl.Int64).alias(REPEAT), pl.lit(i, pl.Int64).alias(_MEMBER)
        )
        for i, (frame, (_, r)) in enumerate(zip(frames, prepared, strict=True))
    ]
    rows = pl.concat(parts, how="vertical_relaxed")
    combined = combine_members(rows.drop(_MEMBER), members.combine, panel=members.panel)
    combined = combined.with_columns(pl.lit(len(parts), pl.Int64).alias(_MEMBER))
    return (
        pl.concat([rows, combined.select(rows.columns)])
        .sort(UNIT, _MEMBER, maintain_order=True)
        .drop(UNIT, _MEMBER)
    )


def combined_plan(plans: Sequence[Plan], members: Members) -> Plan:
    """The plan of a fanned-out call: every member's calls and dollars, added up."""
    first = plans[0]
    costs = [p.cost_usd for p in plans]
    names = list(dict.fromkeys(p.judge_model for p in plans))
    label = names[0] if len(names) == 1 else f"panel ({', '.join(names)})"
    if members.repeats > 1:
        label += f" x {members.repeats} repeats"
    return dataclasses.replace(
        first,
        n_judgements=sum(p.n_judgements for p in plans),
        n_unique=sum(p.n_unique for p in plans),
        n_cached=sum(p.n_cached for p in plans),
        n_to_send=sum(p.n_to_send for p in plans),
        input_tokens=sum(p.input_tokens for p in plans),
        output_tokens=sum(p.output_tokens for p in plans),
        judge_model=label,
        cost_usd=None if any(c is None for c in costs) else sum(c for c in costs if c is not None),
        price="; ".join(dict.fromkeys(p.price for p in plans)),
        n_control_judgements=sum(p.n_control_judgements for p in plans),
        price_warnings=tuple(dict.fromkeys(w for p in plans for w in p.price_warnings)),
    )
