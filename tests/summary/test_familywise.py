"""Family-wise gates: a failure that does not survive Holm over the slices is inconclusive
(never a pass); at one check the breach test and the interval's bound agree exactly."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pairwise_polars as pp
from pairwise_polars._errors import OptionError
from pairwise_polars.summary._familywise import breach_p
from pairwise_polars.summary._student_t import t_quantile


@settings(max_examples=80, deadline=None)
@given(
    st.floats(0.0, 1.0),
    st.floats(0.001, 0.3),
    st.floats(0.0, 1.0),
    st.sampled_from(["max", "min"]),
    st.integers(2, 500),
)
def test_one_check_fails_exactly_when_its_favourable_bound_fails(
    estimate: float, half: float, threshold: float, direction: str, groups: int
) -> None:
    favourable = estimate - half if direction == "max" else estimate + half
    p = breach_p(estimate, favourable, threshold, direction, groups, 0.95)
    assert p is not None and 0 <= p <= 1
    bound_fails = favourable > threshold if direction == "max" else favourable < threshold
    if abs(favourable - threshold) > 1e-9:
        assert (p < 0.025) == bound_fails


def _summary(rows: list[tuple[str, float, float]], groups: int = 40) -> pl.DataFrame:
    """Hand-made summary rows: (dimension, estimate, half-width of a symmetric interval)."""
    q = t_quantile(0.975, groups - 1)
    return pl.DataFrame(
        {
            "metric": "pairwise-bias",
            "dimension": [r[0] for r in rows],
            "n_pairs": 100,
            "n_errors": 0,
            "n_scored": 100,
            "n_groups": groups,
            "mean_divergence": [r[1] for r in rows],
            "mean_divergence_low": [r[1] - r[2] * q / 2 for r in rows],
            "mean_divergence_high": [r[1] + r[2] * q / 2 for r in rows],
        }
    )


def test_holm_turns_marginal_failures_inconclusive_and_keeps_clear_ones() -> None:
    # 19 slices just over the threshold on their own, one far over it
    rows = [(f"d{i}", 0.30, 0.08) for i in range(19)] + [("clear", 0.60, 0.08)]
    summary = _summary(rows)
    alone = pp.gate(summary, max_mean_divergence=0.2)
    family = pp.gate(summary, max_mean_divergence=0.2, familywise="holm")
    judged = family.checks.filter(pl.col("gate") == "max_mean_divergence")
    statuses = dict(zip(judged["slice"], judged["status"], strict=True))
    fairness = alone.checks.filter(pl.col("gate") != "max_error_rate")
    assert not fairness["passed"].any() and alone.status == "fail"
    assert statuses["dimension=clear"] == "fail"
    assert {statuses[f"dimension=d{i}"] for i in range(19)} == {"inconclusive"}
    marginal = judged.filter(pl.col("slice") == "dimension=d0")["note"].item()
    assert "not over the family (holm p = " in marginal and "over 20 checks" in marginal
    assert family.familywise == "holm" and alone.familywise == "none"
    assert "familywise: holm over 20 checks" in family.verdict()
    assert not family.passed  # the clear failure still fails the run
    with pytest.raises(OptionError, match="familywise must be"):
        pp.gate(summary, max_mean_divergence=0.2, familywise="sidak")  # type: ignore[arg-type]
