"""Family-wise gates: many slices judged as one family, so a run with nothing wrong fails
anywhere at most at the chosen level.

A check fails on its own when its interval's favourable bound is on the wrong side of the
threshold: a one-sided test of "the slice breaches the threshold" at ``(1 - confidence) / 2``.
Its p-value is read from the estimate and that bound (the bound's distance from the estimate is
``t * se`` on ``n_groups - 1`` degrees of freedom, so at one check the test and the bound agree
exactly); the p-values of every fairness check are adjusted over the family (Holm: valid under
any dependence between slices; Benjamini-Hochberg: the false discovery rate), and a failed
check whose adjusted p-value is not below ``(1 - confidence) / 2`` becomes inconclusive:
evidence that does not survive the family is no verdict, and never a pass.
"""

from __future__ import annotations

from typing import Literal

import polars as pl

from pairwise_polars._errors import OptionError
from pairwise_polars.summary._adjust import adjusted
from pairwise_polars.summary._student_t import t_cdf, t_quantile

Familywise = Literal["none", "holm", "bh"]
FAMILYWISE = ("none", "holm", "bh")
P_BREACH = "__pairwise_p_breach"


def check_familywise(familywise: object) -> Familywise:
    """``familywise`` when it names a correction (None is ``"none"``), else OptionError."""
    if familywise is None:
        return "none"
    if familywise in FAMILYWISE:
        return familywise
    raise OptionError(
        f"familywise must be 'none', 'holm' or 'bh', got {familywise!r}: 'holm' keeps the chance "
        "that a run with nothing wrong fails anywhere at most the level."
    )


def breach_p(
    estimate: float | None,
    favourable: float | None,
    threshold: float,
    direction: str,
    groups: int | None,
    confidence: float,
) -> float | None:
    """The one-sided p-value that a slice breaches ``threshold`` (``direction``: ``"max"`` or
    ``"min"``), from its estimate and favourable bound at ``confidence``."""
    if estimate is None or favourable is None or groups is None or groups < 2:
        return None
    sign = 1.0 if direction == "max" else -1.0
    beyond = sign * (estimate - threshold)  # > 0: the estimate breaches
    reach = sign * (estimate - favourable)  # the bound's distance on the breaching side
    if reach <= 0:
        return 0.0 if beyond > 0 else 1.0
    se = reach / t_quantile(0.5 + confidence / 2, groups - 1)
    return t_cdf(-beyond / se, groups - 1)


def with_familywise(
    checks: pl.DataFrame, familywise: Familywise, confidence: float
) -> pl.DataFrame:
    """Checks (with ``status`` and the ``P_BREACH`` column) whose failures are judged over the
    family; ``P_BREACH`` dropped."""
    if familywise == "none" or P_BREACH not in checks.columns:
        return checks.drop(P_BREACH, strict=False)
    p = adjusted(checks[P_BREACH], "holm" if familywise == "holm" else "bh")
    family = int(checks[P_BREACH].is_not_null().sum())
    alpha = (1 - confidence) / 2
    survives = p.is_not_null() & (p < alpha)
    lost = (pl.col("status") == "fail") & ~pl.lit(survives)
    note = pl.format(
        "fails alone, not over the family ({} p = {} over {} checks): no verdict",
        pl.lit(familywise),
        pl.lit(p).round(4).cast(pl.String).fill_null("none"),
        pl.lit(family),
    )
    return checks.with_columns(
        status=pl.when(lost).then(pl.lit("inconclusive")).otherwise(pl.col("status")),
        note=pl.when(lost)
        .then(
            pl.when(pl.col("note").is_null())
            .then(note)
            .otherwise(pl.format("{}; {}", pl.col("note"), note))
        )
        .otherwise(pl.col("note")),
    ).drop(P_BREACH)
