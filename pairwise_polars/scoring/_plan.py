"""The plan of a scoring call: pairs, judgements, unique requests, cache hits, a token estimate
and its price, counted from the prepared call before anything is spent."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import polars as pl

from pairwise_polars._errors import GateError
from pairwise_polars.engine._prices import shown_dollars
from pairwise_polars.io import DataLike, to_lazy
from pairwise_polars.judges import JudgeTraits
from pairwise_polars.pairing import PAIR_KIND
from pairwise_polars.scoring._cost import Prices, plan_warnings, priced
from pairwise_polars.scoring._prepare import Prepared
from pairwise_polars.scoring._requests import ROW
from pairwise_polars.summary import SlicePower, default_slices, slice_power
from pairwise_polars.summary._disparity_power import disparity_power
from pairwise_polars.summary._thresholds import check_threshold

_OUTPUT_TOKENS_GUESS = 60  # a JSON score and one or two sentences
_OUTCOME_TOKENS_GUESS = 90  # five JSON fields and a sentence


@dataclass(frozen=True)
class Plan:
    """What a scoring call would do, before anything is spent."""

    n_pairs: int
    n_skipped: int
    n_judgements: int
    n_unique: int
    n_cached: int
    n_to_send: int
    input_tokens: int
    output_tokens: int
    judge_model: str
    cost_usd: float | None = None
    """The estimate in US dollars for the requests to send (None: the model has no price)."""
    price: str = ""
    """How it was priced: the model's prices and their source, or "price unknown"."""
    n_control_pairs: int = 0
    """Of ``n_pairs``, the control pairs (two answers to the same input: the noise floor)."""
    n_control_judgements: int = 0
    """Of ``n_judgements``, those of control pairs: one per control pair, metric and order."""
    price_warnings: tuple[str, ...] = ()
    """What to know about the price before paying: an unknown model, a price older than six
    months, a judge model its provider retires before the run."""
    power: tuple[SlicePower, ...] = field(default=())
    """Per metric and slice, what the run can detect (``plan(detect=..., pilot=...)``)."""
    n_outcome_judgements: int = 0
    """Responses whose outcome an LLM judge reads (``plan(outcomes=...)``; 0 without, or with
    the heuristic, which reads them for free)."""
    n_outcome_unique: int = 0
    """Of those, the unique outcome requests (identical responses are read once)."""
    n_outcome_cached: int = 0
    n_outcome_to_send: int = 0
    outcome_cost_usd: float | None = 0.0
    """The outcome requests' share of ``cost_usd`` (which, like ``input_tokens`` and
    ``output_tokens``, counts both kinds of request)."""

    def __str__(self) -> str:
        controls = ""
        if self.n_control_pairs:
            controls = (
                f"control pairs (the noise floor): {self.n_control_pairs:,}, "
                f"{self.n_control_judgements:,} judgements\n"
            )
        return (
            f"pairs: {self.n_pairs:,} ({self.n_skipped:,} not judgeable)\n"
            f"judgements (pair x metric x order): {self.n_judgements:,}\n"
            f"{controls}"
            f"unique judge requests: {self.n_unique:,}\n"
            f"cached: {self.n_cached:,}\n"
            f"to send to {self.judge_model}: {self.n_to_send:,}\n"
            f"{self._outcome_text()}"
            f"estimated tokens: {self.input_tokens:,} in, {self.output_tokens:,} out\n"
            f"estimated cost: {shown_dollars(self.cost_usd)} ({self.price})"
            + "".join(f"\nwarning: {warning}" for warning in self.price_warnings)
        ) + power_text(self.power)

    def _outcome_text(self) -> str:
        if not self.n_outcome_judgements:
            return ""
        return (
            f"outcome judgements (one per response): {self.n_outcome_judgements:,}; unique "
            f"{self.n_outcome_unique:,}, cached {self.n_outcome_cached:,}, to send "
            f"{self.n_outcome_to_send:,} ({shown_dollars(self.outcome_cost_usd)})\n"
        )


def power_text(rows: tuple[SlicePower, ...]) -> str:
    """The power section of a plan's text (empty without rows)."""
    if not rows:
        return ""
    sources = {row.source for row in rows}
    assumed = next((row for row in rows if row.source == "default"), None)
    where = "from the pilot"
    if assumed is not None:
        where = f"assumed: within-group correlation {assumed.icc}, score sd {assumed.sd}"
        if "pilot" in sources:  # the pilot lacks some metric: say which lines assume
            where = f"from the pilot; {where} where marked (the pilot lacks the metric)"
    mixed = len(sources) > 1
    lines = [f"\npower (80% power, 95% confidence; variability {where}):"]
    for row in rows:
        mde = "-" if row.min_detectable_effect is None else f"{row.min_detectable_effect:.3f}"
        figure = row.figure.replace("_", " ")
        line = f"  {row.metric} [{row.slice}] {row.n_groups} groups: detects {figure} {mde}"
        if mixed and row.source == "default":
            line += " (assumed)"
        if row.detect is not None:
            needed = "over 10 million" if row.groups_needed is None else f"{row.groups_needed:,}"
            chance = "-" if row.power is None else f"{row.power:.0%}"
            line += f"; {row.detect:g} needs {needed} groups (power now {chance})"
        lines.append(line)
    return "\n".join(lines)


@dataclass(frozen=True)
class PairCounts:
    """The counts of a plan that add up: a run's are the sum of its chunks'."""

    n_pairs: int = 0
    n_skipped: int = 0
    n_judgements: int = 0
    n_control_pairs: int = 0
    n_control_judgements: int = 0

    def __add__(self, other: PairCounts) -> PairCounts:
        return PairCounts(*(a + b for a, b in zip(_figures(self), _figures(other), strict=True)))


def _figures(counts: PairCounts) -> tuple[int, ...]:
    return tuple(getattr(counts, f.name) for f in dataclasses.fields(counts))


def pair_counts(prepared: Prepared) -> PairCounts:
    """The pairs, unjudgeable pairs, judgements and control pairs of a prepared call."""
    n_control_pairs = n_control_judgements = 0
    if PAIR_KIND in prepared.pairs.columns:
        control = prepared.pairs.filter(pl.col(PAIR_KIND) == "control").select(ROW)
        n_control_pairs = control.height
        n_control_judgements = prepared.keyed.join(control, on=ROW, how="semi").height
    return PairCounts(
        n_pairs=prepared.pairs.height,
        n_skipped=prepared.n_skipped,
        n_judgements=prepared.keyed.height,
        n_control_pairs=n_control_pairs,
        n_control_judgements=n_control_judgements,
    )


def request_sizes(requests: pl.DataFrame, uses_messages: bool) -> pl.DataFrame:
    """All a plan reads of unique requests: each ``key`` and its rendered length (``chars``,
    0 for a judge that reads no messages). Much smaller than the requests, so a run planned
    chunk by chunk keeps these and drops the rendered texts."""
    chars = pl.col("messages").str.len_chars() if uses_messages else pl.lit(0)
    return requests.select("key", chars.cast(pl.Int64).alias("chars"))


def count(prepared: Prepared, hits: pl.DataFrame, prices: Prices | None = None) -> Plan:
    """The plan of a prepared call whose cache lookup gave ``hits``, priced from the table
    with ``prices`` overriding it."""
    sizes = request_sizes(prepared.requests, prepared.traits.uses_messages)
    return counted(
        pair_counts(prepared), sizes, hits.height, prepared.judge.name, prepared.traits, prices
    )


def counted(
    counts: PairCounts,
    sizes: pl.DataFrame,
    n_cached: int,
    judge_model: str,
    traits: JudgeTraits,
    prices: Prices | None = None,
) -> Plan:
    """The plan of ``counts`` and the unique requests' ``sizes`` (:func:`request_sizes`), of
    which ``n_cached`` are cached: the same figures :func:`count` gives for one prepared call."""
    sent = _estimate(sizes, n_cached, _OUTPUT_TOKENS_GUESS, judge_model, traits, prices)
    return Plan(
        n_pairs=counts.n_pairs,
        n_skipped=counts.n_skipped,
        n_judgements=counts.n_judgements,
        n_unique=sizes.height,
        n_cached=n_cached,
        n_to_send=sent.to_send,
        input_tokens=sent.input_tokens,
        output_tokens=sent.output_tokens,
        judge_model=judge_model,
        cost_usd=sent.cost,
        price=sent.note,
        n_control_pairs=counts.n_control_pairs,
        n_control_judgements=counts.n_control_judgements,
        price_warnings=plan_warnings(judge_model, traits, prices),
    )


def with_power(
    planned: Plan,
    prepared: Prepared,
    group_by: str,
    *,
    detect: float | None,
    pilot: DataLike | None,
) -> Plan:
    """The plan with its power per metric and slice (see :func:`~pairwise_polars.plan`)."""
    if detect is not None:
        detect = check_threshold(detect, "detect")
        if detect == 0:
            raise GateError("detect must be above 0: no run detects an effect of 0.")
    pairs = prepared.pairs
    slices = default_slices(pairs.columns)
    frame = to_lazy(pilot)[0] if pilot is not None else None
    rows = slice_power(
        pairs, [m.name for m in prepared.metrics], slices, group_by, detect=detect, pilot=frame
    )
    if frame is not None:  # a pilot with outcomes (or pairwise-favour) plans the disparities too
        rows += disparity_power(pairs, slices, group_by, frame, detect=detect)
    return dataclasses.replace(planned, power=rows)


def with_outcomes(
    planned: Plan,
    sizes: pl.DataFrame,
    n_responses: int,
    n_cached: int,
    judge_model: str,
    traits: JudgeTraits,
    prices: Prices | None,
) -> Plan:
    """The plan with the outcome judgements of ``n_responses`` responses: the ``sizes`` of
    their unique requests (:func:`request_sizes`), of which ``n_cached`` are cached, read by
    ``judge_model``; tokens and dollars added to the plan's."""
    sent = _estimate(sizes, n_cached, _OUTCOME_TOKENS_GUESS, judge_model, traits, prices)
    cost = sent.cost
    total = None if cost is None or planned.cost_usd is None else planned.cost_usd + cost
    return dataclasses.replace(
        planned,
        n_outcome_judgements=n_responses,
        n_outcome_unique=sizes.height,
        n_outcome_cached=n_cached,
        n_outcome_to_send=sent.to_send,
        outcome_cost_usd=cost,
        input_tokens=planned.input_tokens + sent.input_tokens,
        output_tokens=planned.output_tokens + sent.output_tokens,
        cost_usd=total,
        price=sent.note if planned.n_to_send == 0 else planned.price,
    )


@dataclass(frozen=True)
class _Estimate:
    """What the uncached requests of one kind would take: how many, their tokens, their price."""

    to_send: int
    input_tokens: int
    output_tokens: int
    cost: float | None
    note: str


def _estimate(
    sizes: pl.DataFrame,
    n_cached: int,
    tokens_guess: int,
    judge_model: str,
    traits: JudgeTraits,
    prices: Prices | None,
) -> _Estimate:
    """The requests to send of the unique requests' ``sizes`` (:func:`request_sizes`), of which
    ``n_cached`` are cached: input tokens at four characters each, ``tokens_guess`` output
    tokens per request (none for a judge that reads no messages), priced for ``judge_model``."""
    to_send = sizes.height - n_cached
    uses_messages = traits.uses_messages and not sizes.is_empty()
    chars = int(sizes["chars"].sum() or 0) if uses_messages else 0
    ratio = to_send / sizes.height if sizes.height else 0.0
    input_tokens = int(chars / 4 * ratio) if uses_messages else 0
    output_tokens = to_send * tokens_guess if uses_messages else 0
    cost, note = priced(
        judge_model,
        traits,
        prices,
        requests=to_send,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
    )
    return _Estimate(to_send, input_tokens, output_tokens, cost, note)
