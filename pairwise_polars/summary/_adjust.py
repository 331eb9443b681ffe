"""Multiple comparisons: p-values adjusted over a family of tests (Holm, Benjamini-Hochberg).

Twenty slices checked at 5% each flag something in about 64% of runs where nothing changed.
Holm's step-down keeps the chance of any false alarm in the family at most the level, under any
dependence between the tests; Benjamini-Hochberg keeps the expected share of false alarms among
the alarms (the false discovery rate) at the level, for independent or positively dependent
tests. A null p-value (a test that could not be run) is not counted in the family.
"""

from __future__ import annotations

from typing import Literal

import polars as pl

from pairwise_polars._errors import OptionError

Adjust = Literal["holm", "bh"] | None
"""How p-values are adjusted over a family: ``"holm"``, ``"bh"`` or None (not adjusted)."""
ADJUSTMENTS = ("holm", "bh")
_RANK = "__pairwise_rank"


def check_adjust(adjust: object, *, name: str = "adjust") -> Adjust:
    """``adjust`` when it names a method (``"none"`` is None), else :class:`OptionError`."""
    if adjust is None or adjust == "none":
        return None
    if adjust in ADJUSTMENTS:
        return adjust
    raise OptionError(
        f"{name} must be 'holm', 'bh' or None, got {adjust!r}. 'holm' bounds the chance of any "
        "false alarm over every slice; 'bh' the share of false alarms among the alarms."
    )


def adjusted(p_values: pl.Series, adjust: Adjust) -> pl.Series:
    """The adjusted p-values, in the order given (nulls stay null and are not counted).

    >>> import polars as pl
    >>> adjusted(pl.Series([0.01, 0.04, 0.03, None]), "holm").round(4).to_list()
    [0.03, 0.06, 0.06, None]
    >>> adjusted(pl.Series([0.01, 0.04, 0.03, None]), "bh").round(4).to_list()
    [0.03, 0.04, 0.04, None]
    """
    adjust = check_adjust(adjust)
    p = p_values.cast(pl.Float64)
    if adjust is None:
        return p
    m = p.drop_nulls().len()
    frame = pl.DataFrame({"p": p}).with_row_index("__position")
    tested = frame.drop_nulls("p").sort("p", "__position").with_row_index(_RANK, offset=1)
    rank = pl.col(_RANK).cast(pl.Float64)
    if adjust == "holm":
        # p_(k) * (m - k + 1), made non-decreasing from the smallest p up
        scaled = (pl.col("p") * (m - rank + 1)).cum_max()
    else:
        # p_(k) * m / k, made non-increasing from the largest p down
        scaled = (pl.col("p") * m / rank).reverse().cum_min().reverse()
    tested = tested.with_columns(scaled.clip(upper_bound=1.0).alias("adjusted"))
    return (
        frame.join(tested.select("__position", "adjusted"), on="__position", how="left")
        .sort("__position")["adjusted"]
        .alias(p_values.name)
    )
