"""The scoring map: a prepared call -> cache -> judge -> results joined back to pairs by key.

Every entry point goes through :class:`Scoring`: it looks the cache up once, so a plan and
the run that follows it share the lookup, and nothing is rendered or looked up twice.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from pairwise_polars._schemas import RESULT_SCHEMA
from pairwise_polars.engine import JudgementCache, cache_session, cached_map, sync_twin
from pairwise_polars.engine._cached_map import Observe, lookup
from pairwise_polars.io import DataLike, StorageOptions, open_data
from pairwise_polars.judges._chat_judge import answers_of
from pairwise_polars.judges._panel import JudgeLike
from pairwise_polars.labels import check_labels_for_pairs, join_labels
from pairwise_polars.metrics import Metric
from pairwise_polars.pairing import ColumnNames, Columns, Strategy, form_pairs
from pairwise_polars.pairing._pairs import refuse_unknown_keywords
from pairwise_polars.scoring._cost import Prices, Usage, usage_of
from pairwise_polars.scoring._members import (
    Members,
    combined_plan,
    keyword_spec,
    members_of,
    prepare_members,
    score_members,
)
from pairwise_polars.scoring._plan import (
    Plan,
    count,
    request_sizes,
    with_outcomes,
    with_power,
)
from pairwise_polars.scoring._pointwise import (
    OUTCOME_ROW,
    SIDE_ID,
    outcome_judge,
    outcome_metric,
    outcome_requests,
    pair_sides,
)
from pairwise_polars.scoring._prepare import MetricsLike, Order, Prepared
from pairwise_polars.scoring._results import conform_results, join_back
from pairwise_polars.scoring._spec import Audit, ScoringSpec

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from pairwise_polars.pairing import PairingOptions

CacheLike = bool | str | os.PathLike[str] | JudgementCache | None
"""``True``: the default cache file; a path: that file; a JudgementCache; ``False``: none."""


class Scoring:
    """One prepared call with its cache (None: no cache): plan it, score it."""

    def __init__(
        self, prepared: Prepared, store: JudgementCache | None, prices: Prices | None = None
    ) -> None:
        self.prepared = prepared
        self.store = store
        self.prices = prices
        self.usage: Usage | None = None
        """What the last :meth:`score` spent (None before it ran)."""
        self._hits: pl.DataFrame | None = None

    def hits(self) -> pl.DataFrame:
        """The cache's results for the prepared requests, looked up once."""
        if self._hits is None:
            self._hits = lookup(self.store, self.prepared.requests, RESULT_SCHEMA)
        return self._hits

    def plan(self) -> Plan:
        return count(self.prepared, self.hits(), self.prices)

    async def score(self, *, progress: bool = True, observe: Observe | None = None) -> pl.DataFrame:
        """The scored frame: one row per (pair, metric). ``observe`` is told of each batch of
        fresh answers as it arrives (how many, how many of them error rows)."""
        prepared = self.prepared
        results = pl.DataFrame(schema={**RESULT_SCHEMA, "cached": pl.Boolean})
        if not prepared.requests.is_empty():
            results = await cached_map(
                prepared.requests,
                answers_of(prepared.judge),  # a chat judge's as rows, made frames in batches
                self.store,
                schema=RESULT_SCHEMA,
                conform=conform_results,
                label="judging",
                progress=progress,
                # A judge that forgot a request must not make a pair vanish: an error row.
                lost_error="the judge returned no result for this request",
                lost_columns={"judge_model": prepared.judge.name},
                hits=self.hits(),
                observe=observe,
            )
        self.usage = usage_of(results, prepared.judge.name, prepared.traits, self.prices)
        return join_back(
            prepared.pairs, prepared.keyed, results, prepared.spec, prepared.not_masked
        )


async def ascore_prepared(
    prepared: Prepared,
    *,
    cache: CacheLike = True,
    progress: bool = True,
    dry_run: bool = False,
    on_plan: Callable[[Plan], None] | None = None,
    prices: Prices | None = None,
    on_usage: Callable[[Usage], None] | None = None,
) -> tuple[Plan, pl.DataFrame | None]:
    """Plan a prepared call, tell ``on_plan``, then (unless ``dry_run``) score it and tell
    ``on_usage`` what it spent, with one cache lookup for both: the path of a manifest target
    and of the CLI's ``score``. ``prices`` override the price table by model name."""
    with cache_session(cache, enabled=prepared.traits.cacheable) as store:
        scoring = Scoring(prepared, store, prices)
        planned = scoring.plan()
        if on_plan is not None:
            on_plan(planned)
        if dry_run:
            return planned, None
        scored = await scoring.score(progress=progress)
        if on_usage is not None and scoring.usage is not None:
            on_usage(scoring.usage)
        return planned, scored


score_prepared = sync_twin(ascore_prepared, "score_prepared")


async def ascore_pairs(
    pairs: DataLike,
    metrics: MetricsLike = "pairwise-bias",
    *,
    judge: JudgeLike = None,
    repeats: int = 1,
    both_orders: bool = False,
    order: Order = "random",
    audit: Audit | None = None,
    cache: CacheLike = True,
    progress: bool = True,
    storage_options: StorageOptions | None = None,
    labels: DataLike | None = None,
    spec: ScoringSpec | None = None,
) -> pl.DataFrame:
    """Score a pair frame (from :func:`form_pairs`): one row per (pair, metric).

    Adds ``metric``, ``score`` (raw / rubric max, in [0, 1]; null when not scored),
    ``raw_score``, ``reason``, ``error``, ``judge_model``, ``attempts``, ``latency_s``,
    ``input_tokens``, ``output_tokens``, ``cached_tokens``, ``cached`` and ``shown_first``
    (``"a"`` or ``"b"``: the side the judge saw first); with ``labels`` (human labels, as for
    :func:`aggregate`; checked before the first judge call), ``label`` and ``raw_label``,
    which :func:`aggregate` then uses; with ``both_orders=True`` also ``score_ab``,
    ``score_ba``, ``position_gap`` and ``reason_ba``, and ``shown_first`` is ``"both"``.
    Judging is done in memory, so the scored frame is a DataFrame whatever ``pairs`` was (a
    LazyFrame too).
    ``order="random"`` (the default) shows each pair to an LLM judge as (a, b) or (b, a) by a
    hash of its ``pair_id``, the same on every run, so a judge's preference for the first
    position is spread evenly over both sides; ``"fixed"`` always shows (a, b); the score is
    the pair's either way (the metrics are
    symmetric). ``audit="mask"`` judges every pair a second time with the attribute's terms
    (names, pronouns, group words, found with the counterfactual lexicons and the generator's
    substitution record) masked in both requests and both responses: the scored frame then has
    a ``view`` column, ``"plain"`` or ``"masked"``, one row each, and :func:`aggregate` reports
    ``judge_attribute_effect`` (a pair with no term to mask gets a masked row that says so).
    ``spec`` (a :class:`ScoringSpec`) says all of ``metrics``, ``judge``, ``order``,
    ``both_orders`` and ``audit`` at once. The default judge is the offline heuristic;
    ``cache=True`` keeps successful judgements in a SQLite file under the user cache directory
    (``cache=<path>`` another file, ``cache=False`` none). ``score_pairs`` is the same call
    for sync code (it also works inside a running event loop); ``ascore_pairs`` awaits it.

    >>> import polars as pl
    >>> import pairwise_polars as pp
    >>> rows = pl.DataFrame({"group_id": 1, "role": ["reference", "variant"],
    ...     "dimension": "gender", "input": "Describe Sam.", "output": ["Kind.", "Kind."]})
    >>> pp.score_pairs(pp.form_pairs(rows), progress=False).select("metric", "score").rows()
    [('pairwise-bias', 0.0)]
    """
    pairs = open_data(pairs, storage_options)
    members, fanned = _fanned(pairs, spec, metrics, judge, repeats, both_orders, order, audit)
    prepared = fanned[0][0]
    checked = None
    if labels is not None:  # a bad label stops the run before anything is paid for
        maxima = {m.name: m.max_score for m in prepared.metrics}
        checked = check_labels_for_pairs(prepared.pairs, maxima, labels)
    if members.fanned_out:
        scored = await score_members(fanned, members, _score_one, cache=cache, progress=progress)
    else:
        with cache_session(cache, enabled=prepared.traits.cacheable) as store:
            scored = await Scoring(prepared, store).score(progress=progress)
    return scored if checked is None else join_labels(scored.lazy(), checked).collect()


score_pairs = sync_twin(ascore_pairs, "score_pairs")


def _fanned(
    pairs: DataLike,
    spec: ScoringSpec | None,
    metrics: MetricsLike,
    judge: JudgeLike,
    repeats: int,
    both_orders: bool,
    order: Order,
    audit: Audit | None,
) -> tuple[Members, list[tuple[Prepared, int]]]:
    """The members the keywords name and one prepared call each: the spec is ``spec``, or the
    one the keywords say."""
    spec = keyword_spec(spec, metrics, judge, both_orders=both_orders, order=order, audit=audit)
    members = members_of(judge, repeats, spec.judge)
    return members, prepare_members(pairs, spec, members)


async def _score_one(
    prepared: Prepared, store: JudgementCache | None, progress: bool
) -> pl.DataFrame:
    return await Scoring(prepared, store).score(progress=progress)


async def ascore(
    data: DataLike,
    metrics: MetricsLike = "pairwise-bias",
    *,
    judge: JudgeLike = None,
    repeats: int = 1,
    strategy: Strategy = "group",
    both_orders: bool = False,
    order: Order = "random",
    audit: Audit | None = None,
    cache: CacheLike = True,
    progress: bool = True,
    labels: DataLike | None = None,
    spec: ScoringSpec | None = None,
    **pairing: Unpack[PairingOptions],
) -> pl.DataFrame:
    """Form pairs from response rows and score them: the dataframe-in, scored-frame-out path.

    ``pairing`` keywords go to :func:`form_pairs` (``reference``, ``poles``, ``on_invalid``,
    ``columns=Columns(...)`` or column keywords such as ``group_by=``). See
    :func:`score_pairs` for the output columns, ``order`` and ``labels``. ``score`` is the same
    call for sync code; ``ascore`` awaits it.

    >>> import polars as pl
    >>> import pairwise_polars as pp
    >>> rows = pl.DataFrame({"group_id": 1, "role": ["reference", "variant"],
    ...     "dimension": "gender", "input": "Describe Sam.", "output": ["Kind.", "Rude."]})
    >>> pp.score(rows, progress=False)["score"].item() > 0
    True
    """
    refuse_unknown_keywords(pairing, ascore, "score")
    pairs = form_pairs(data, strategy, **pairing)
    return await ascore_pairs(
        pairs,
        metrics,
        judge=judge,
        repeats=repeats,
        both_orders=both_orders,
        order=order,
        audit=audit,
        cache=cache,
        progress=progress,
        labels=labels,
        spec=spec,
    )


score = sync_twin(ascore, "score")


def plan(
    data: DataLike,
    metrics: MetricsLike = "pairwise-bias",
    *,
    judge: JudgeLike = None,
    repeats: int = 1,
    both_orders: bool = False,
    order: Order = "random",
    audit: Audit | None = None,
    cache: CacheLike = True,
    pairs: bool = False,
    strategy: Strategy = "group",
    prices: Prices | None = None,
    detect: float | None = None,
    pilot: DataLike | None = None,
    spec: ScoringSpec | None = None,
    outcomes: str | Path | Metric | None = None,
    **pairing: Unpack[PairingOptions],
) -> Plan:
    """Count pairs, unique requests after dedupe and cache, and estimate tokens and dollars;
    spend nothing.

    ``pairs=True`` says ``data`` is already a pair frame. ``prices`` override the price table
    by model name: ``{"my-model": (input, output)}`` or ``(input, cached_input, output)``, US
    dollars per million tokens (a model in neither has "price unknown").

    With ``detect`` (an excess divergence, e.g. 0.05) or ``pilot`` (a scored frame of an
    earlier or smaller run), :attr:`Plan.power` says per metric and slice (``dimension``) the
    smallest excess divergence the run detects with 80% power at 95% confidence, the chance
    of detecting ``detect`` and the groups needed to detect it, from the pilot's score spread
    and within-group correlation or, without one, the stated defaults (correlation 0.3,
    score sd 0.25); see :mod:`pairwise_polars.summary._power`. A pilot that carries each
    side's outcomes (or scored ``pairwise-favour``) adds rows of metric ``"disparities"`` per
    slice and attribute (:mod:`pairwise_polars.summary._disparity_power`).

    With ``outcomes`` (an outcome metric: ``"outcome"`` or a file of ``kind: outcome``) and an
    LLM judge, the plan also counts the outcome judgements that :func:`outcomes`,
    :func:`disparities` with that judge, a manifest target's disparity gates or
    ``score_parquet(outcomes=...)`` would send: one per distinct response of the pairs
    (``n_outcome_judgements``, ``n_outcome_unique``, ``n_outcome_cached``,
    ``n_outcome_to_send``), their tokens and dollars added to the plan's.

    >>> import polars as pl
    >>> rows = pl.DataFrame({"group_id": [g for g in range(40) for _ in range(3)],
    ...     "role": ["reference", "variant", "control"] * 40, "dimension": "age",
    ...     "input": "Should we hire them?", "output": ["yes", "no", "yes"] * 40})
    >>> row = plan(rows, cache=False, detect=0.05).power[0]
    >>> row.n_groups, round(row.min_detectable_effect, 3), row.groups_needed
    (40, 0.134, 277)
    """
    refuse_unknown_keywords(pairing, plan, "plan")
    pair_frame = data if pairs else form_pairs(data, strategy, **pairing)
    members, fanned = _fanned(pair_frame, spec, metrics, judge, repeats, both_orders, order, audit)
    prepared = fanned[0][0]
    cacheable = any(p.traits.cacheable for p, _ in fanned)
    with cache_session(cache, enabled=cacheable) as store:
        plans = [
            Scoring(p, store if p.traits.cacheable else None, prices).plan() for p, _ in fanned
        ]
        planned = combined_plan(plans, members) if members.fanned_out else plans[0]
        if outcomes is not None:
            planned = plan_outcomes(planned, prepared, outcomes, store, prices)
    if detect is None and pilot is None:
        return planned
    names = {k: v for k, v in pairing.items() if k in ColumnNames.__annotations__}
    group_by = Columns.of(pairing.get("columns"), names, caller="plan").group_by
    return with_power(planned, prepared, group_by, detect=detect, pilot=pilot)


def plan_outcomes(
    planned: Plan,
    prepared: Prepared,
    outcomes: str | Path | Metric,
    store: JudgementCache | None,
    prices: Prices | None,
) -> Plan:
    """``planned`` with the outcome judgements of the prepared pairs' responses (none for a
    judge that runs in this process: the heuristic reads outcomes for free)."""
    read = outcome_sizes(prepared, outcome_metric(outcomes))
    if read is None:
        return planned
    n_responses, sizes = read
    n_cached = lookup(store, sizes, RESULT_SCHEMA).height
    judge = prepared.judge.name
    return with_outcomes(planned, sizes, n_responses, n_cached, judge, prepared.traits, prices)


def outcome_sizes(prepared: Prepared, metric: Metric) -> tuple[int, pl.DataFrame] | None:
    """The responses of the prepared pairs whose outcome the judge reads, and the sizes of
    their unique requests (:func:`~pairwise_polars.scoring._plan.request_sizes`); None for a
    judge that runs in this process (the heuristic reads outcomes for free)."""
    if prepared.traits.kind == "local":
        return None
    judge = outcome_judge(prepared.judge)
    sides = pair_sides(prepared.pairs).with_row_index(OUTCOME_ROW)
    keyed, requests = outcome_requests(sides, metric, judge, Columns(id=SIDE_ID))
    return keyed.height, request_sizes(requests, prepared.traits.uses_messages)
