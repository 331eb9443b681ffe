"""Gates: thresholds per metric and slice, fail closed (errors, empty runs, unknown metrics,
thresholds outside [0, 1]), the conservative bound, and verdicts that say which failure."""

from __future__ import annotations

import warnings

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pairwise_polars as pp
from pairwise_polars.summary import gate_summary

SCORED = pl.DataFrame(
    {
        "metric": ["pairwise-bias"] * 7,
        "group_id": [1, 1, 2, 3, 3, 4, 5],
        "dimension": ["gender"] * 4 + ["race"] * 2 + ["age"],
        "score": [0.0, 0.5, None, 0.25, 1.0, 0.0, None],
        "error": [None, None, "timeout", None, None, None, "timeout"],
    }
)
CLEAN = SCORED.filter(pl.col("score").is_not_null())
CLEAN_SUMMARY = pp.aggregate(CLEAN)
TIMEOUT = "timeout or dropped connection (gave up after 7 attempts)"


def failed_judge(n: int, scored: dict[int, float]) -> pl.DataFrame:
    """n pairs of one metric; only the pairs in ``scored`` got a score, the others an error."""
    return pl.DataFrame(
        {
            "metric": "pairwise-bias",
            "group_id": list(range(n)),
            "dimension": "gender",
            "score": pl.Series([scored.get(i) for i in range(n)], dtype=pl.Float64),
            "error": [None if i in scored else TIMEOUT for i in range(n)],
        }
    )


def slices_of(groups: int, scores: dict[str, tuple[float, float]]) -> pl.DataFrame:
    """``groups`` groups per dimension, each with two pairs scored as ``scores[dimension]``
    (every fourth group's second pair shifted by 0.25, so each slice has some spread)."""
    rows = [
        (f"{dimension}-{g}", dimension, score + (0.25 if i and g % 4 == 0 else 0.0))
        for dimension, pair in scores.items()
        for g in range(groups)
        for i, score in enumerate(pair)
    ]
    frame = pl.DataFrame(rows, schema=["group_id", "dimension", "score"], orient="row")
    return frame.with_columns(metric=pl.lit("pairwise-bias"))


def test_fairness_gate_checks_every_slice() -> None:
    scored = slices_of(40, {"age": (0.0, 0.25), "gender": (0.0, 0.0), "race": (0.75, 0.75)})
    result = pp.gate(
        pp.aggregate(scored), min_equivalence_rate=0.3, max_mean_divergence={"pairwise-bias": 0.4}
    )
    assert not result.passed
    assert not result
    assert result.status == "fail"
    failed = result.failures.select("slice", "gate", "status").rows()
    assert failed == [
        ("dimension=race", "min_equivalence_rate", "fail"),
        ("dimension=race", "max_mean_divergence", "fail"),
    ]
    verdict = result.verdict().splitlines()
    assert verdict[0] == "FAIL: 7 of 9 gate checks passed."
    assert verdict[2].startswith(
        "  pairwise-bias [dimension=race] max_mean_divergence 0.4: observed 0.7812 (interval ["
    )
    assert verdict[2].endswith("] is beyond the threshold)")


def test_unscored_slices_and_errors_make_the_run_inconclusive() -> None:
    result = pp.gate(
        pp.aggregate(SCORED), min_equivalence_rate=0.3, max_mean_divergence={"pairwise-bias": 0.4}
    )
    assert result.status == "inconclusive"
    failed = result.failures.select("slice", "gate").rows()
    # Every slice has at most two groups: no fairness check can pass (min_groups is 30), and
    # none fails (each interval straddles its threshold); only race's judgements all worked.
    assert sorted(failed) == [
        ("dimension=age", "max_error_rate"),
        ("dimension=age", "max_mean_divergence"),
        ("dimension=age", "min_equivalence_rate"),
        ("dimension=gender", "max_error_rate"),
        ("dimension=gender", "max_mean_divergence"),
        ("dimension=gender", "min_equivalence_rate"),
        ("dimension=race", "max_mean_divergence"),
        ("dimension=race", "min_equivalence_rate"),
    ]
    assert set(result.failures["status"]) == {"inconclusive"}
    age = result.checks.filter(
        (pl.col("slice") == "dimension=age") & (pl.col("gate") == "min_equivalence_rate")
    ).row(0, named=True)
    assert age["observed"] is None
    assert age["note"] == "no scored pairs: unknown is not fair"
    assert result.verdict().startswith("INCONCLUSIVE: judgements failed beyond max_error_rate")


def test_99_of_100_failed_judgements_fail_a_gate_that_the_one_score_would_pass() -> None:
    summary = pp.aggregate(failed_judge(100, {0: 0.0}), by=())
    result = pp.gate(summary, max_mean_divergence=0.5)
    assert not result.passed
    assert result.status == "inconclusive"
    check = result.checks.filter(pl.col("gate") == "max_error_rate").row(0, named=True)
    assert check["observed"] == pytest.approx(0.99)
    assert check["threshold"] == 0.05
    assert check["note"] == (
        "99 of 100 judgements failed; commonest error: timeout or dropped connection "
        "(gave up after N attempts)"
    )
    verdict = result.verdict()
    assert verdict.splitlines()[0] == (
        "INCONCLUSIVE: judgements failed beyond max_error_rate; a slice has only one group (no "
        "interval bound), so this run cannot vouch for fairness (fix the judge or the data and "
        "rerun; or add groups and rerun; each note says about how many would decide it). 0 of 2 "
        "gate checks passed."
    )
    assert "99 of 100 judgements failed" in verdict
    # Without the error gate the one score still cannot vouch: one group has no interval.
    alone = pp.gate(summary, max_mean_divergence=0.5, max_error_rate=None)
    assert alone.status == "inconclusive"


def test_error_rate_threshold_is_inclusive_and_can_be_raised() -> None:
    summary = pp.aggregate(failed_judge(20, dict.fromkeys(range(19), 0.0)), by=())  # 5% failed
    assert pp.gate(summary).passed
    assert pp.gate(summary, max_error_rate=0.04).status == "inconclusive"
    assert pp.gate(summary, max_error_rate={"pairwise-bias": 0.1}).passed


def test_all_failed_run_fails_even_without_the_error_gate() -> None:
    summary = pp.aggregate(failed_judge(5, {}), by=())
    result = pp.gate(summary, max_mean_divergence=0.5, max_error_rate=None)
    assert not result.passed
    assert result.status == "inconclusive"
    assert result.verdict().startswith("INCONCLUSIVE: a slice has no scored pair")


def test_empty_summary_fails_when_any_gate_is_set() -> None:
    empty = pp.aggregate(SCORED.clear())
    result = pp.gate(empty, max_mean_divergence=0.5)
    assert not result.passed
    assert result.status == "inconclusive"
    assert result.checks.select("gate", "passed").rows() == [("scored_pairs", False)]
    assert result.verdict().splitlines()[0].startswith("INCONCLUSIVE: nothing was scored")
    assert not pp.gate(empty).passed  # the error gate is on by default
    assert pp.gate(empty, max_error_rate=None).verdict() == "PASS: no gate was set."
    assert not gate_summary(pp.summarize(SCORED.clear())).passed


def test_a_threshold_for_a_missing_metric_is_an_error_with_a_suggestion() -> None:
    summary = pp.aggregate(CLEAN.with_columns(score=pl.lit(1.0)))
    with pytest.raises(pp.GateError) as caught:
        pp.gate(summary, max_mean_divergence={"pairwise-bais": 0.1})
    message = str(caught.value)
    assert "max_mean_divergence names metric 'pairwise-bais'" in message
    assert "Did you mean 'pairwise-bias'?" in message
    assert isinstance(caught.value, ValueError)
    with pytest.raises(pp.GateError, match="names metric 'other'"):
        gate_summary(pp.summarize(CLEAN), per_slice={"max_divergence_rate": {"other": 0.2}})


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 4, -1, 1.0001, True, "0.2", None])
def test_thresholds_outside_zero_to_one_are_refused(bad) -> None:
    summary = pp.aggregate(CLEAN)
    if bad is None:  # None switches a gate off; inside a mapping it is not a number
        with pytest.raises(pp.GateError, match="must be a number from 0 to 1, got None"):
            pp.gate(summary, max_mean_divergence={"pairwise-bias": bad})  # type: ignore[dict-item]
        return
    with pytest.raises(pp.GateError) as caught:
        pp.gate(summary, max_mean_divergence=bad)
    assert str(caught.value).startswith("max_mean_divergence must be a number from 0 to 1, got ")
    assert "scores are normalised: raw rubric score / rubric max" in str(caught.value)
    with pytest.raises(pp.GateError, match=r"max_error_rate\['pairwise-bias'\] must be a number"):
        pp.gate(summary, max_error_rate={"pairwise-bias": bad})


@settings(deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True))
def test_every_accepted_threshold_is_a_number_in_zero_one(value: float) -> None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pp.ThresholdWarning)  # 0 and 1: tested apart
            pp.gate(CLEAN_SUMMARY, max_divergence_rate=value)
    except pp.GateError:
        assert not 0 <= value <= 1  # nan compares false: refused
    else:
        assert 0 <= value <= 1


def test_conservative_gate_uses_the_interval_bound() -> None:
    summary = pp.aggregate(CLEAN, by=())
    three_way = pp.gate(summary, max_divergence_rate=0.5)
    bound = pp.gate(summary, max_divergence_rate=0.5, conservative=True)
    # 0.4 [low, high] with high > 0.5 > low: three-way says inconclusive, one-sided says fail
    assert three_way.status == "inconclusive"
    assert not bound.passed
    assert bound.status == "fail"
    observed = bound.checks.filter(pl.col("gate") == "max_divergence_rate")["observed"].item()
    assert observed == pytest.approx(summary["divergence_rate_high"].item(), rel=1e-12)


def test_only_the_error_gate_by_default() -> None:
    result = pp.gate(pp.aggregate(CLEAN))
    assert result.passed
    assert result.checks["gate"].unique().to_list() == ["max_error_rate"]
    assert result.verdict() == "PASS: 2 of 2 gate checks passed."
    assert pp.gate(pp.aggregate(CLEAN), max_error_rate=None).verdict() == "PASS: no gate was set."


def test_gate_summary_checks_errors_per_slice_by_default() -> None:
    # 1 failure in 7 pairs overall (14%) but the age slice is all failures.
    summary = pp.summarize(SCORED)
    loose = gate_summary(summary, overall={"max_error_rate": 0.5})
    assert loose.failures.select("slice", "gate").rows() == [
        ("dimension=age", "max_error_rate"),
        ("dimension=gender", "max_error_rate"),
    ]
    off = gate_summary(summary, overall={"max_error_rate": 0.5}, per_slice={"max_error_rate": None})
    assert off.passed
    with pytest.raises(pp.GateError, match="Unknown gate 'max_mean'"):
        gate_summary(summary, overall={"max_mean": 0.1})


def test_a_missing_interval_bound_fails_a_conservative_gate_and_says_why() -> None:
    one_group = pp.aggregate(CLEAN.filter(pl.col("group_id") == 1), by=())
    result = pp.gate(one_group, max_mean_divergence=0.9, conservative=True)
    check = result.checks.filter(pl.col("gate") == "max_mean_divergence").row(0, named=True)
    assert (check["passed"], check["observed"]) == (False, None)
    assert check["note"] == "no mean_divergence_high (one group: no interval): unknown is not fair"
    plain = pp.gate(one_group, max_mean_divergence=0.9)  # the estimate alone cannot vouch
    assert plain.status == "inconclusive"
    assert plain.failures["note"].item() == check["note"]
    assert (
        pp.gate(one_group, max_mean_divergence=0.9, conservative=True)
        .verdict()
        .startswith(
            "INCONCLUSIVE: a slice has only one group (no interval bound), so this run cannot"
        )
    )
