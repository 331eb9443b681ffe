"""Dollars for a scoring call: the estimate of a plan, and the usage of a run (tokens the judge
reported for the requests it answered, cached prompt tokens included) priced the same way."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import polars as pl

from pairwise_polars.engine._prices import (
    PriceSource,
    dollars,
    price_of,
    price_warnings,
    shown_dollars,
)
from pairwise_polars.judges import JudgeTraits

Prices = PriceSource
"""Price overrides by model name: ``{"my-model": (input, output)}`` or ``(input, cached_input,
output)`` in US dollars per million tokens, or :class:`~pairwise_polars.Price` values; or the
path of a prices file (the shipped file's columns) laid over the shipped prices."""


def priced(
    model: str,
    traits: JudgeTraits,
    prices: Prices | None,
    *,
    requests: int,
    input_tokens: int,
    output_tokens: int,
    cached_tokens: int = 0,
) -> tuple[float | None, str]:
    """``(dollars, how they were priced)``; dollars None when the model has no price."""
    if traits.kind == "local":
        return 0.0, "no cost: the judge runs in this process"
    if requests == 0:
        return 0.0, "no cost: nothing to send"
    price = price_of(model, prices)
    if price is None:
        return None, f"price unknown for {model!r}"
    cached = "" if price.cached_input is None else f", ${price.cached_input:g} cached"
    source = "given" if price.as_of is None else f"price of {price.as_of}"
    if price.retires is not None:
        source += f"; retires {price.retires}"
    note = f"{model}: ${price.input:g} in{cached}, ${price.output:g} out per 1M tokens ({source})"
    batch = traits.kind == "batch"
    if batch:
        note += f", batch API -{price.batch_discount:.0%}"
    amount = dollars(
        price,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cached_tokens=cached_tokens,
        batch=batch,
    )
    return amount, note


def plan_warnings(model: str, traits: JudgeTraits, prices: Prices | None) -> tuple[str, ...]:
    """What a plan warns about the judge model's price (see ``price_warnings``); nothing for
    a judge that runs in this process."""
    if traits.kind == "local":
        return ()
    return tuple(price_warnings(model, price_of(model, prices)))


@dataclass(frozen=True)
class Usage:
    """What a scoring call spent: the requests sent to the judge in this call (cache hits
    cost nothing and are not counted), the tokens it reported for them (``cached_tokens``:
    prompt tokens the provider served from its prompt cache, part of ``input_tokens``), and
    their price in US dollars (None when the model has no price)."""

    requests: int
    input_tokens: int
    cached_tokens: int
    output_tokens: int
    cost_usd: float | None
    price: str

    def __str__(self) -> str:
        return (
            f"spent: {self.requests:,} judge requests, {self.input_tokens:,} tokens in "
            f"({self.cached_tokens:,} cached), {self.output_tokens:,} out; cost "
            f"{shown_dollars(self.cost_usd)} ({self.price})"
        )


def usage_of(
    results: pl.DataFrame, model: str, traits: JudgeTraits, prices: Prices | None
) -> Usage:
    """The usage of a call's result frame (one row per unique request, ``cached`` set on
    cache hits)."""
    answered = results.filter(~pl.col("cached")) if "cached" in results.columns else results

    def total(column: str) -> int:
        return int(answered[column].sum() or 0) if column in answered.columns else 0

    spent = Spent(
        requests=answered.height,
        input_tokens=total("input_tokens"),
        cached_tokens=total("cached_tokens"),
        output_tokens=total("output_tokens"),
    )
    return spent.priced(model, traits, prices)


@dataclass
class Spent:
    """Usage added up over several scoring calls (the chunks of a run), priced once."""

    requests: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    output_tokens: int = 0

    def add(self, usage: Usage) -> None:
        self.requests += usage.requests
        self.input_tokens += usage.input_tokens
        self.cached_tokens += usage.cached_tokens
        self.output_tokens += usage.output_tokens

    def priced(self, model: str, traits: JudgeTraits, prices: Prices | None) -> Usage:
        """These counts as a :class:`Usage`, priced for ``model``."""
        counts = asdict(self)  # the counts, under the names priced() and Usage take
        cost, note = priced(model, traits, prices, **counts)
        return Usage(**counts, cost_usd=cost, price=note)
