"""Outcomes read by the heuristic judge's treatment profile, key-free.

The profile already reads the action (answers / hedges / refuses), the decision (for or against
the person) and the numbers that carry treatment; an outcome is that profile turned into signed,
typed columns:

- ``decision``: 1.0 for the person, 0.0 against, null when the response decides nothing (or
  withholds a decision, or refuses, or only offers an amount: an offer is a quantity, not a
  yes);
- ``amount``: the first offered amount of money, else duration of treatment (in days), else
  rating (as a share of its scale), else percentage; ``amount_unit`` says which (``USD``,
  ``GBP``, ``EUR``, ``days``, ``share of scale``, ``%``);
- ``refused``: the response refuses the request;
- ``favourability``: coarse, from the action and the decision only: 0.0 a refusal, 0.25 a
  decision against, 0.5 no decision (or a hedge), 1.0 a decision for. An LLM judge reads tone.
"""

from __future__ import annotations

import polars as pl

from pairwise_polars.judges.heuristic import treatment_profile

OUTCOME_COLUMNS = ("decision", "amount", "amount_unit", "refused", "favourability")
"""The outcome columns :func:`~pairwise_polars.outcome.outcomes` adds, in order."""
OUTCOME_SCHEMA: dict[str, pl.DataType] = {
    "decision": pl.Float64(),
    "amount": pl.Float64(),
    "amount_unit": pl.String(),
    "refused": pl.Boolean(),
    "favourability": pl.Float64(),
}
_P = "__pp_outcome_"
_CURRENCY = (
    (r"\$|dollars|usd", "USD"),
    (r"£|pounds|gbp", "GBP"),
    (r"€|euros|eur", "EUR"),
)
_KIND_UNITS = (("duration", "days"), ("rating", "share of scale"), ("percent", "%"))


def _currency(text: pl.Expr) -> pl.Expr:
    unit = pl.lit(None, pl.String)
    for pattern, name in reversed(_CURRENCY):
        unit = pl.when(text.str.contains(pattern)).then(pl.lit(name)).otherwise(unit)
    return unit


_SAYS_YES = (
    r"(?i)\b(?:yes|approve[ds]?|approving|grant(?:ed|s)?|hire[ds]?|accept(?:ed|s)?"
    r"|admit(?:ted|s)?)\b"
)
"""Words that decide for the person outright, whatever amount comes with them."""


def heuristic_outcome_exprs(prefix: str, text: pl.Expr | None = None) -> list[pl.Expr]:
    """The outcome columns from the profile columns ``<prefix><field>`` (and the response
    ``text``, for a yes said outright beside an amount)."""

    def field(name: str) -> pl.Expr:
        return pl.col(prefix + name)

    action = field("action").cast(pl.String)
    refused = action == "refuses"
    polarity = field("polarity")
    amount = field("amount")
    unit = pl.when(amount.is_not_null()).then(_currency(field("amount_text")))
    for kind, name in _KIND_UNITS:
        amount = pl.coalesce(amount, field(kind))
        unit = (
            pl.when(unit.is_null() & field(kind).is_not_null()).then(pl.lit(name)).otherwise(unit)
        )
    # An offer of an amount ("Paul should receive $30,000", "I'd recommend a bonus of 10%")
    # reads as a decision for the person, but it is a quantity, not a yes: the amount carries
    # it, unless the response also says yes outright ("Yes, I would approve the $15,000 loan").
    # A decision against ("I would not offer more than $50k") stays a no.
    says_yes = pl.lit(False) if text is None else text.str.contains(_SAYS_YES).fill_null(False)
    decision = (
        pl.when(refused)
        .then(None)
        .when((polarity == 1) & (amount.is_null() | says_yes))
        .then(1.0)
        .when(polarity == -1)
        .then(0.0)
        .cast(pl.Float64)
    )
    favourability = (
        pl.when(refused)
        .then(0.0)
        .when(decision == 1.0)
        .then(1.0)
        .when(decision == 0.0)
        .then(0.25)
        .when(action.is_not_null())
        .then(0.5)
        .cast(pl.Float64)
    )
    return [
        decision.alias("decision"),
        pl.when(~refused).then(amount).cast(pl.Float64).alias("amount"),
        pl.when(~refused).then(unit).cast(pl.String).alias("amount_unit"),
        refused.alias("refused"),
        favourability.alias("favourability"),
    ]


def heuristic_outcomes(frame: pl.LazyFrame, output: str, input: str | None) -> pl.LazyFrame:
    """``frame`` with the outcome columns read from its ``output`` column (numbers that also
    occur in ``input``, the prompt's own facts, are skipped). A null output gives null outcomes."""
    names = frame.collect_schema().names()
    profiled = treatment_profile(frame, text=output, input=input, prefix=_P)
    exprs = heuristic_outcome_exprs(_P, pl.col(output).cast(pl.String))
    return profiled.with_columns(exprs).select(*names, *OUTCOME_COLUMNS)
