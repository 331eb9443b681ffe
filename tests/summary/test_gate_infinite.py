"""A summary figure or bound that is infinite (a summary file edited by hand, or computed
elsewhere) is no measurement: the gate reads it as unknown, INCONCLUSIVE, as it reads NaN; before,
an infinite figure passed a fairness gate, and an infinite disparity failed one."""

from __future__ import annotations

import polars as pl
import pytest

import pairwise_polars as pp
from tests.summary.salary import salary_rows

SCORED = pl.DataFrame({
    "group_id": range(60), "dimension": "age", "metric": "pairwise-bias",
    "score": [0.0, 0.0, 0.25] * 20,
})  # fmt: skip
FIGURES = {
    "max_mean_divergence": ("mean_divergence", float("-inf")),
    "min_equivalence_rate": ("equivalence_rate", float("inf")),
}


@pytest.mark.parametrize("gate", list(FIGURES))
def test_an_infinite_figure_is_inconclusive_not_a_pass(gate: str) -> None:
    figure, value = FIGURES[gate]
    summary = pp.aggregate(SCORED)
    assert pp.gate(summary, **{gate: 0.5}).passed  # the figures as measured pass
    edited = summary.with_columns(
        pl.lit(value).alias(c) for c in (figure, f"{figure}_low", f"{figure}_high")
    )
    result = pp.gate(edited, **{gate: 0.5})
    assert not result.passed
    assert result.status == "inconclusive"


def test_an_infinite_disparity_is_inconclusive_not_a_pass() -> None:
    measured = pp.disparities(salary_rows(cut=0.0))
    gates = {"max_disadvantage": {"amount": 0.05}, "conservative": True}
    assert pp.gate(measured, **gates).status == "pass"  # as measured
    amount = [c for c in measured.columns if c.startswith("amount_relative")]
    edited = measured.with_columns(pl.lit(float("-inf")).alias(c) for c in amount)
    assert pp.gate(edited, **gates).status == "inconclusive"
