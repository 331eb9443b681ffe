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


_EST, _FAV, _GROUPS, _DIR = (
    "__pairwise_est",
    "__pairwise_fav",
    "__pairwise_groups",
    "__pairwise_dir",
)


def breach_columns(
    summary: pl.DataFrame,
    point: str,
    direction: str,
    *,
    estimate: pl.Expr | None = None,
    favourable: pl.Expr | None = None,
) -> dict[str, pl.Expr]:
    """Helper columns of a fairness check: what :func:`judged_as_family` needs (the estimate,
    its favourable bound, the groups, the direction); by default the summary's own columns."""
    bound = f"{point}_low" if direction == "max" else f"{point}_high"
    has = summary.columns.__contains__
    if estimate is None:
        estimate = pl.col(point) if has(point) else pl.lit(None, pl.Float64)
    if favourable is None:
        favourable = pl.col(bound) if has(bound) else pl.lit(None, pl.Float64)
    return {
        _EST: estimate.cast(pl.Float64),
        _FAV: favourable.cast(pl.Float64),
        _GROUPS: pl.col("n_groups").cast(pl.Int64) if has("n_groups") else pl.lit(None, pl.Int64),
        _DIR: pl.lit(direction),
    }


def judged_as_family(
    checks: pl.DataFrame, familywise: Familywise, confidence: float
) -> tuple[pl.DataFrame, int]:
    """The checks with their failures judged over the family (helper columns dropped), and
    the family's size (0 without a correction)."""
    helpers = [c for c in (_EST, _FAV, _GROUPS, _DIR) if c in checks.columns]
    if familywise == "none" or len(helpers) < 4:
        return checks.drop(helpers), 0
    p = [
        breach_p(est, fav, threshold, direction, groups, confidence)
        if direction is not None
        else None
        for est, fav, threshold, direction, groups in checks.select(
            _EST, _FAV, "threshold", _DIR, _GROUPS
        ).iter_rows()
    ]
    said = pl.col("status") if "status" in checks.columns else pl.lit(None, pl.String)
    own = pl.when(pl.col("passed")).then(pl.lit("pass")).otherwise(pl.lit("fail"))
    status = pl.when(pl.col(_DIR).is_not_null()).then(pl.coalesce(said, own)).otherwise(said)
    checks = checks.with_columns(status.alias("status"), pl.Series(P_BREACH, p, pl.Float64))
    family = sum(v is not None for v in p)
    judged = with_familywise(checks, familywise, confidence).drop(helpers)
    return judged.with_columns(
        passed=pl.col("passed") & (pl.col("status") != "inconclusive").fill_null(True)
    ), family
