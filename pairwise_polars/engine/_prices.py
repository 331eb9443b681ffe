"""What tokens cost: a dated file of model prices shipped with the package (US dollars per
million tokens: input, cached input, output; the batch discount; the day they were read off the
provider's page, ``as_of``; and the day the provider retires the model, ``retires``, where
announced), a user's own file or mapping over it, and the estimate for a number of tokens.

The file is a convenience, not a bill: prices move, so every estimate says the date of the
price it used, and a plan warns when that date is more than six months old. A model in no file
has no price: estimates say "price unknown" rather than guess.

>>> price = price_of("gpt-4o-mini-2024-07-18")
>>> round(dollars(price, input_tokens=1_000_000, output_tokens=1_000_000), 4)
0.75
>>> round(dollars(price, input_tokens=1_000_000, output_tokens=0, batch=True), 4)
0.075
>>> price_of("claude-haiku-4-5-20251001").as_of, price_of("llama3.1") is None
(datetime.date(2026, 12, 5), True)
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from pairwise_polars._errors import OptionError

PRICES_FILE = Path(__file__).with_name("prices.csv")
"""The shipped prices: one row per model (columns ``provider, model, input, cached_input,
output, batch_discount, as_of, retires, source``: ``source`` where the row was checked, read by
people, not by the code); a user's file has the same columns (``source`` may be left out)."""
PRICE_COLUMNS = (
    "provider", "model", "input", "cached_input", "output", "batch_discount", "as_of", "retires",
    "source",
)  # fmt: skip
BATCH_DISCOUNT = 0.5
"""The share a batch API takes off the standard price (OpenAI's and Anthropic's: half)."""
STALE_DAYS = 183
"""A price older than this (about six months) is flagged by the plan."""


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens. ``cached_input`` None: cached tokens bill as input.
    ``batch_discount``: the share a batch API takes off (0.5: half price); ``as_of``: when the
    price was read (None: given by the user); ``retires``: when the provider retires the model.

    >>> Price(0.15, 0.075, 0.6)
    Price(input=0.15, cached_input=0.075, output=0.6)
    """

    input: float
    cached_input: float | None
    output: float
    batch_discount: float = field(default=BATCH_DISCOUNT, repr=False)
    as_of: date | None = field(default=None, repr=False)
    retires: date | None = field(default=None, repr=False)
    provider: str | None = field(default=None, repr=False)


PriceLike = Price | Sequence[float]
"""A :class:`Price`, ``(input, output)`` or ``(input, cached_input, output)``."""
PriceSource = Mapping[str, PriceLike] | str | os.PathLike
"""Prices by model name, or the path of a prices file (CSV, the shipped file's columns)."""

_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8})$")


def load_prices(path: str | os.PathLike[str]) -> dict[str, Price]:
    """The prices of a CSV file with the columns of :data:`PRICE_COLUMNS` (``cached_input``,
    ``batch_discount``, ``as_of`` and ``retires`` may be empty), by model; a clear error
    naming the file, the row and the column otherwise.

    >>> load_prices(PRICES_FILE)["gpt-4o-mini"].as_of
    datetime.date(2025, 8, 1)
    """
    where = os.fspath(path)
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as exc:
        raise OptionError(f"Cannot read the prices file {where}: {exc.strerror or exc}.") from None
    missing = [c for c in ("model", "input", "output") if rows and c not in rows[0]]
    if missing or not rows:
        raise OptionError(
            f"The prices file {where} needs a header row with the columns "
            f"{', '.join(PRICE_COLUMNS)} and one row per model (missing: "
            f"{', '.join(missing) or 'every row'})."
        )
    return {row["model"].strip(): _row_price(row, f"{where}, row {n}") for n, row in
            enumerate(rows, start=2) if (row.get("model") or "").strip()}  # fmt: skip


def _row_price(row: dict[str, str], where: str) -> Price:
    def number(name: str, default: float | None = None) -> float | None:
        text = (row.get(name) or "").strip()
        if not text:
            return default
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not 0 <= value < float("inf"):
            raise OptionError(f"{where}, column {name}: expected a price in US dollars per "
                              f"million tokens (a number >= 0), got {text!r}.")  # fmt: skip
        return value

    def day(name: str) -> date | None:
        text = (row.get(name) or "").strip()
        try:
            return date.fromisoformat(text) if text else None
        except ValueError:
            raise OptionError(f"{where}, column {name}: expected a date as YYYY-MM-DD, got "
                              f"{text!r}.") from None  # fmt: skip

    first, last = number("input"), number("output")
    if first is None or last is None:
        raise OptionError(f"{where}: input and output prices are required.")
    discount = number("batch_discount", BATCH_DISCOUNT)
    return Price(first, number("cached_input"), last,
                 batch_discount=BATCH_DISCOUNT if discount is None else discount,
                 as_of=day("as_of"), retires=day("retires"),
                 provider=(row.get("provider") or "").strip() or None)  # fmt: skip


PRICES: dict[str, Price] = load_prices(PRICES_FILE)
"""The shipped prices by model (``pairwise_polars/engine/prices.csv``; each has its date)."""


def as_price(value: PriceLike, *, name: str = "price") -> Price:
    """A :class:`Price` from a Price or 2 or 3 non-negative numbers; a clear error otherwise."""
    if isinstance(value, Price):
        return value
    if isinstance(value, Sequence) and not isinstance(value, str) and len(value) in (2, 3):
        numbers: list[float | None] = list(value) if len(value) == 3 else [value[0], None, value[1]]
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


def given_prices(prices: PriceSource | None) -> dict[str, Price]:
    """The prices a user gave (a mapping, or a prices file), by model."""
    if prices is None:
        return {}
    if isinstance(prices, (str, os.PathLike)):
        return load_prices(prices)
    return {name: as_price(value, name=f"the price of {name!r}") for name, value in prices.items()}


def price_table(prices: PriceSource | None = None) -> dict[str, Price]:
    """The shipped prices with ``prices`` (a mapping, or a prices file) over them."""
    return {**PRICES, **given_prices(prices)} if prices is not None else PRICES


def price_of(model: str, prices: PriceSource | None = None) -> Price | None:
    """The price of ``model``: from ``prices`` (a mapping or a prices file) first, then the
    shipped file; a dated snapshot (``gpt-4o-2024-08-06``, ``claude-haiku-4-5-20251001``) or a
    provider prefix (``openai/``) takes its model's price. None when unknown."""
    table = price_table(prices)
    for candidate in _names(model):
        if candidate in table:
            return table[candidate]
    return None


def price_warnings(model: str, price: Price | None, today: date | None = None) -> list[str]:
    """What a plan should say about a judge model's price: unknown, older than six months,
    or a model the provider retires before the run.

    >>> price_warnings("my-model", None)
    ["no price for 'my-model': the cost is unknown (give one with prices=..., a prices file or --price-per-million)"]
    """  # noqa: E501
    if price is None:
        return [f"no price for {model!r}: the cost is unknown (give one with prices=..., a "
                "prices file or --price-per-million)"]  # fmt: skip
    today = today or date.today()
    warnings = []
    if price.retires is not None and price.retires <= today:
        warnings.append(
            f"{model} was retired by its provider on {price.retires}: a retired judge breaks "
            "comparability with earlier runs (and its requests may fail); judge with its "
            "successor and rescore the baseline with it too"
        )
    if price.as_of is not None and (today - price.as_of).days > STALE_DAYS:
        months = (today - price.as_of).days // 30
        warnings.append(
            f"the price of {model} is from {price.as_of} ({months} months old): prices move; "
            "check the provider's page, or pass your own prices file (prices=PATH)"
        )
    return warnings


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
    return total * (1.0 - price.batch_discount if batch else 1.0)


def shown_dollars(amount: float | None) -> str:
    """``$0.0123``-style text (more digits for small amounts); "price unknown" for None."""
    if amount is None:
        return "price unknown"
    if amount == 0:
        return "$0"
    if amount < 0.01:
        return f"${amount:.4f}"
    return f"${amount:,.2f}"
