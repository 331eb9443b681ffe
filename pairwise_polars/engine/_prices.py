"""What tokens cost: a small table of OpenAI prices in US dollars per million tokens (input,
cached input, output), the Batch API's discount, and the estimate for a number of tokens.

The table is a convenience, not a bill: prices change, and other providers and local servers
have their own (a local model costs nothing here only if you say so). A model not in the table
(or in the overrides) has no price, and estimates say "price unknown" rather than guess.

>>> price = price_of("gpt-4o-mini-2024-07-18")
>>> round(dollars(price, input_tokens=1_000_000, output_tokens=1_000_000), 4)
0.75
>>> round(dollars(price, input_tokens=1_000_000, output_tokens=0, batch=True), 4)
0.075
>>> price_of("llama3.1") is None
True
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pairwise_polars._errors import OptionError

PRICES_CHECKED = "2025-08"
"""When the table was read off the source below (it may be out of date: override it)."""
PRICES_SOURCE = "OpenAI's API pricing page (Standard tier), https://openai.com/api/pricing"
BATCH_DISCOUNT = 0.5
"""The Batch API bills half the Standard price, input and output."""


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens. ``cached_input`` None: cached tokens bill as input.

    >>> Price(0.15, 0.075, 0.6)
    Price(input=0.15, cached_input=0.075, output=0.6)
    """

    input: float
    cached_input: float | None
    output: float


PriceLike = Price | Sequence[float]
"""A :class:`Price`, ``(input, output)`` or ``(input, cached_input, output)``."""

PRICES: dict[str, Price] = {
    "gpt-5": Price(1.25, 0.125, 10.00),
    "gpt-5-mini": Price(0.25, 0.025, 2.00),
    "gpt-5-nano": Price(0.05, 0.005, 0.40),
    "gpt-4.1": Price(2.00, 0.50, 8.00),
    "gpt-4.1-mini": Price(0.40, 0.10, 1.60),
    "gpt-4.1-nano": Price(0.10, 0.025, 0.40),
    "gpt-4o": Price(2.50, 1.25, 10.00),
    "gpt-4o-mini": Price(0.15, 0.075, 0.60),
    "o1": Price(15.00, 7.50, 60.00),
    "o3": Price(2.00, 0.50, 8.00),
    "o3-mini": Price(1.10, 0.55, 4.40),
    "o4-mini": Price(1.10, 0.275, 4.40),
}
"""Standard-tier prices of common OpenAI models (see ``PRICES_CHECKED``, ``PRICES_SOURCE``)."""

_SNAPSHOT = re.compile(r"-\d{4}-\d{2}-\d{2}$")


def as_price(value: PriceLike, *, name: str = "price") -> Price:
    """A :class:`Price` from a Price or 2 or 3 non-negative numbers; a clear error otherwise."""
    if isinstance(value, Price):
        numbers: list[float | None] = [value.input, value.cached_input, value.output]
    elif isinstance(value, Sequence) and not isinstance(value, str) and len(value) in (2, 3):
        numbers = list(value) if len(value) == 3 else [value[0], None, value[1]]
    else:
        raise OptionError(
            f"{name}: expected (input, output) or (input, cached_input, output) in US dollars "
            f"per million tokens, got {value!r}"
        )
    for index, number in enumerate(numbers):
        if number is None and index == 1:  # no cached-input price: cached tokens bill as input
            continue
        ok = isinstance(number, (int, float)) and not isinstance(number, bool)
        if not ok or not 0 <= float(number) < float("inf"):  # type: ignore[arg-type]
            raise OptionError(
                f"{name}: prices are US dollars per million tokens, finite and not negative; "
                f"got {number!r}"
            )
    first, cached, last = numbers
    assert first is not None and last is not None
    return Price(float(first), None if cached is None else float(cached), float(last))


def price_of(model: str, prices: Mapping[str, PriceLike] | None = None) -> Price | None:
    """The price of ``model``: from ``prices`` (overrides) first, then the table; a dated
    snapshot (``gpt-4o-2024-08-06``) or a provider prefix (``openai/``) takes its model's
    price. None when unknown."""
    table: dict[str, Price] = {**PRICES}
    for name, value in (prices or {}).items():
        table[name] = as_price(value, name=f"the price of {name!r}")
    for candidate in _names(model):
        if candidate in table:
            return table[candidate]
    return None


def _names(model: str) -> list[str]:
    bare = model.rsplit("/", 1)[-1]
    return [model, bare, _SNAPSHOT.sub("", bare)]


def dollars(
    price: Price,
    *,
    input_tokens: int,
    output_tokens: int,
    cached_tokens: int = 0,
    batch: bool = False,
) -> float:
    """The estimate in US dollars: ``input_tokens`` includes ``cached_tokens``, which bill at
    the cached-input price; ``batch`` applies the Batch API's discount."""
    cached = min(cached_tokens, input_tokens)
    cached_price = price.input if price.cached_input is None else price.cached_input
    total = (
        (input_tokens - cached) * price.input + cached * cached_price + output_tokens * price.output
    ) / 1_000_000
    return total * (BATCH_DISCOUNT if batch else 1.0)


def shown_dollars(amount: float | None) -> str:
    """``$0.0123``-style text (more digits for small amounts); "price unknown" for None."""
    if amount is None:
        return "price unknown"
    if amount == 0:
        return "$0"
    if amount < 0.01:
        return f"${amount:.4f}"
    return f"${amount:,.2f}"
