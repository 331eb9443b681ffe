"""Disparities: signed, within-group differences over groups, with intervals, controls, gates."""

from __future__ import annotations

import re

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pairwise_polars as pp
from pairwise_polars.outcome._disparity_pairs import pair_measures
from pairwise_polars.pairing import Columns
from pairwise_polars.summary._disparity_sums import combine_disparities, disparity_sums
from tests.summary.salary import salary_rows


def _row(frame: pl.DataFrame, kind: str = "counterfactual") -> dict:
    return frame.filter(pl.col("pair_kind") == kind).row(0, named=True)


def test_salary_cut_is_named_and_the_reworded_control_holds_zero() -> None:
    d = pp.disparities(salary_rows())
    women = _row(d)
    assert (women["attribute"], women["reference"], women["n_groups"]) == ("female", "male", 30)
    assert women["amount_relative"] == pytest.approx(-0.08, abs=0.01)  # -16% in half the groups
    assert women["amount_relative_low"] < -0.05 < women["amount_relative_high"] < 0
    control = _row(d, "control")
    assert control["amount_relative"] == 0.0 and control["control_ok"] is True
    assert women["control_ok"] is True
    verdict = pp.gate(d, max_disadvantage={"amount": 0.05}, conservative=True)
    assert verdict.status == "fail"
    text = verdict.verdict()
    assert re.search(
        r"female: amount -[78]\.\d% \[-1\d\.\d%, -[45]\.\d%\] against male \(at most 5% allowed\)",
        text,
    )
    # three-way by default: the interval straddles 5%, so no verdict either way
    assert pp.gate(d, max_disadvantage={"amount": 0.05}).status == "inconclusive"
    assert pp.gate(d, max_disadvantage={"amount": 0.03}).status == "fail"


def test_no_gap_with_reworded_controls_passes() -> None:
    d = pp.disparities(salary_rows(cut=0.0))
    assert _row(d)["amount_relative"] == pytest.approx(0.0, abs=0.01)
    result = pp.gate(d, max_disadvantage={"amount": 0.05}, conservative=True)
    assert result.status == "pass", result.verdict()


def test_decisions_give_rates_difference_and_impact_ratio() -> None:
    rng = np.random.default_rng(3)
    rows = []
    for g in range(120):
        ref, var = rng.random() < 0.8, rng.random() < 0.5
        for role, attribute, yes in (("reference", "White", ref), ("variant", "Black", var)):
            text = "Yes, I would approve the loan." if yes else "No, I would not approve it."
            rows.append((g, role, attribute, text))
    frame = pl.DataFrame(rows, schema=["group_id", "role", "attribute", "output"], orient="row")
    frame = frame.with_columns(dimension=pl.lit("race"), input=pl.lit("Approve?"))
    r = _row(pp.disparities(frame))
    assert r["decision_difference"] == pytest.approx(
        r["decision_rate"] - r["reference_decision_rate"]
    )
    assert r["impact_ratio"] == pytest.approx(r["decision_rate"] / r["reference_decision_rate"])
    assert r["impact_ratio_low"] < r["impact_ratio"] < r["impact_ratio_high"]
    assert r["control_ok"] is None  # no controls: nothing to vouch for the instrument
    result = pp.gate(pp.disparities(frame), min_impact_ratio=0.8)
    assert result.status == "fail"
    assert (
        "Black: decision rate" in result.verdict() and "(at least 0.8 required)" in result.verdict()
    )


def test_a_slice_without_the_outcome_is_inconclusive_never_a_pass() -> None:
    d = pp.disparities(salary_rows(cut=0.0))  # amounts only: no decision anywhere
    result = pp.gate(d, min_impact_ratio=0.8, max_disadvantage={"decision": 0.1})
    assert result.status == "inconclusive"
    assert "no decision in any response" in result.verdict()


def test_the_disadvantaged_reference_is_named_too() -> None:
    d = pp.disparities(salary_rows(cut=-0.16))  # women offered more
    text = pp.gate(d, max_disadvantage={"amount": 0.05}, conservative=True).verdict()
    assert "male (the reference) is disadvantaged: female amount +8." in text
    assert "against male (at most 5% allowed)" in text


def test_reference_value_and_bad_gates() -> None:
    rows = salary_rows(cut=0.16).filter(pl.col("role") != "control")
    flipped = _row(pp.disparities(rows, reference="female"))
    assert flipped["attribute"] == "male" and flipped["amount_relative"] > 0.08
    d = pp.disparities(rows)
    with pytest.raises(pp.GateError, match="Did you mean 'amount'"):
        pp.gate(d, max_disadvantage={"amounts": 0.05})
    with pytest.raises(pp.GateError, match="pass disparities="):
        pp.gate(pp.aggregate(pp.score(rows, progress=False)), min_impact_ratio=0.8)


def test_scored_frame_gives_the_same_figures_and_the_favour_sign() -> None:
    rows = salary_rows()
    scored = pp.score(rows, metrics=["pairwise-bias", "pairwise-favour"], progress=False)
    from_scored = pp.disparities(scored)
    from_rows = pp.disparities(rows)
    figures = ["attribute", "pair_kind", "amount_relative", "amount_relative_low"]
    assert from_scored.select(figures).equals(from_rows.select(figures))
    women = _row(from_scored)
    assert women["mean_favour"] < 0 and women["mean_favour_high"] < 0  # women treated worse
    assert _row(from_scored, "control")["mean_favour"] == 0.0
    summary = pp.aggregate(scored)
    favour = summary.filter(pl.col("metric") == "pairwise-favour").row(0, named=True)
    assert favour["mean_divergence"] == pytest.approx(-women["mean_favour"])  # |score|


@settings(max_examples=10, deadline=None)
@given(
    st.lists(st.floats(-0.5, 0.5), min_size=4, max_size=12),
    st.integers(1, 4),
)
def test_sums_merge_exactly_across_chunks(cuts: list[float], chunks: int) -> None:
    rows = []
    for g, cut in enumerate(cuts):
        rows += [(g, "reference", "m", "We offer $100,000."),
                 (g, "variant", "f", f"We offer ${round(100_000 * (1 + cut)):,}.")]  # fmt: skip
    frame = pl.DataFrame(rows, schema=["group_id", "role", "attribute", "output"], orient="row")
    frame = frame.with_columns(dimension=pl.lit("d"), input=pl.lit("Offer?"))
    columns = Columns()
    whole, keys = pair_measures(frame.lazy(), ["dimension", "attribute"], reference=None,
                                judge=None, strategy="group", columns=columns)  # fmt: skip
    one = combine_disparities(disparity_sums(whole, keys, "group_id"), keys, "group_id", 0.95)
    parts = []
    for i in range(chunks):
        chunk = frame.filter(pl.col("group_id") % chunks == i)
        if chunk.is_empty():
            continue
        measured, _ = pair_measures(chunk.lazy(), ["dimension", "attribute"], reference=None,
                                    judge=None, strategy="group", columns=columns)  # fmt: skip
        parts.append(disparity_sums(measured, keys, "group_id").collect())
    merged = pp.summary.merge_sums(parts, [*keys, "pair_kind", "__pp_disp_reference", "group_id"])
    assert combine_disparities(merged, keys, "group_id", 0.95).equals(one)
    expected = float(np.mean([round(100_000 * (1 + c)) / 100_000 - 1 for c in cuts]))
    assert one["amount_relative"][0] == pytest.approx(expected, abs=1e-9)
