"""gate_compare: a release that got worse beyond the allowance fails, one within it passes with
enough paired groups, anything else is inconclusive; the familywise adjustment is said."""

from __future__ import annotations

import polars as pl
import pytest
from release_runs import scored_runs

import pairwise_polars as pp
from pairwise_polars._errors import GateError, OptionError


def test_a_regression_beyond_the_allowance_fails_its_slice() -> None:
    before, after = scored_runs(groups=40, shift={"gender": 0.35})
    result = pp.gate_compare(pp.compare(before, after), max_regression=0.15)
    assert result.status == "fail" and not result.passed
    statuses = dict(zip(result.checks["slice"], result.checks["status"], strict=True))
    assert statuses["dimension=gender"] == "fail"
    assert statuses["dimension=age"] == statuses["dimension=race"] == "pass"
    gender = result.checks.filter(pl.col("slice") == "dimension=gender").row(0, named=True)
    assert gender["gate"] == "max_regression" and gender["threshold"] == 0.15
    assert gender["observed"] > 0.15
    assert gender["note"].startswith("excess_divergence") and "holm-adjusted" in gender["note"]
    assert "FAIL" in result.verdict()


def test_no_change_passes_with_enough_groups_and_is_inconclusive_with_few() -> None:
    before, after = scored_runs(groups=40, seed=2)
    assert pp.gate_compare(pp.compare(before, after), max_regression=0.2).status == "pass"
    few_before, few_after = scored_runs(groups=6, seed=2)
    few = pp.gate_compare(pp.compare(few_before, few_after), max_regression=0.1)
    assert not few.passed and set(few.checks["status"]) == {"inconclusive"}
    assert few.checks["note"].str.contains("under min_groups=30").all()


def test_without_controls_the_mean_divergence_is_gated() -> None:
    before, after = scored_runs(groups=30, controls=False, shift={"age": 0.3})
    result = pp.gate_compare(pp.compare(before, after))
    assert result.checks["note"].str.starts_with("mean_divergence").all()
    explicit = pp.gate_compare(pp.compare(before, after), figures=["equivalence_rate"])
    row = explicit.checks.filter(pl.col("slice") == "dimension=age").row(0, named=True)
    assert row["status"] == "fail" and row["observed"] > 0  # the rate fell: worse


def test_familywise_holm_needs_more_evidence_than_none() -> None:
    # a modest regression in every slice: some slices fail alone, fewer after Holm
    before, after = scored_runs(
        groups=30, shift={"age": 0.12, "gender": 0.12, "race": 0.12}, seed=4
    )
    comparison = pp.compare(before, after)
    alone = pp.gate_compare(comparison, max_regression=0.0, familywise=None)
    holm = pp.gate_compare(comparison, max_regression=0.0, familywise="holm")
    holm_failed = holm.checks.filter(pl.col("status") == "fail")["slice"].to_list()
    alone_failed = alone.checks.filter(pl.col("status") == "fail")["slice"].to_list()
    assert set(holm_failed) <= set(alone_failed) and alone_failed
    assert holm.checks["note"].str.contains("holm-adjusted").any()
    assert not alone.checks["note"].str.contains("adjusted").any()
    # the result says the correction it used, and over how many checks
    assert (holm.familywise, holm.family) == ("holm", 3) and alone.familywise == "none"
    assert "(familywise: holm over 3 checks)" in holm.verdict()


def test_a_run_with_a_baseline_keeps_its_own_gates_judgement() -> None:
    """The regression checks join the run's gates without losing how those were judged."""
    from pairwise_polars.comparison._gate import with_regression

    before, after = scored_runs(groups=30, seed=4)
    summary = pp.aggregate(after, by=["dimension"])
    gates = pp.gate(summary, max_mean_divergence=0.9, familywise="holm", max_error_rate=None)
    regression = pp.gate_compare(pp.compare(before, after), max_regression=0.2)
    both = with_regression(gates, regression)
    assert both.checks.height == gates.checks.height + regression.checks.height
    assert both.familywise == "holm on the fairness gates, holm on the regression gate"
    assert both.family == gates.family + regression.family > 0
    alone = with_regression(pp.gate(summary, max_mean_divergence=0.9), regression)
    assert alone.familywise == "holm on the regression gate"


def test_a_slice_missing_from_one_run_is_never_a_pass() -> None:
    before, after = scored_runs(groups=30, dimensions=("age",))
    extra, _ = scored_runs(groups=30, dimensions=("race",))
    result = pp.gate_compare(pp.compare(before, pl.concat([after, extra])))
    race = result.checks.filter(pl.col("slice") == "dimension=race").row(0, named=True)
    assert race["status"] == "inconclusive" and "not measured in both runs" in race["note"]


def test_bad_allowances_are_refused() -> None:
    before, after = scored_runs(groups=4, dimensions=("age",))
    comparison = pp.compare(before, after)
    with pytest.raises(GateError, match="max_regression must be a number from 0 to 1"):
        pp.gate_compare(comparison, max_regression=5)
    with pytest.raises(GateError, match="names metric 'pairwise-bais'"):
        pp.gate_compare(comparison, max_regression={"pairwise-bais": 0.1})
    with pytest.raises(OptionError, match="cannot check figure 'score'"):
        pp.gate_compare(comparison, figures=["score"])
    with pytest.raises(OptionError, match="familywise must be"):
        pp.gate_compare(comparison, familywise="sidak")  # type: ignore[arg-type]
