"""Power: the minimum detectable effect of aggregate and plan, the groups needed, and the
variability read from a pilot."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pairwise_polars as pp
from pairwise_polars._errors import GateError
from pairwise_polars.summary._pilot import Variability, variability
from pairwise_polars.summary._power import detectable, groups_needed, power_at
from pairwise_polars.summary._student_t import t_quantile


@settings(max_examples=40, deadline=None)
@given(st.floats(0.005, 0.5), st.floats(0.001, 0.5))
def test_groups_needed_is_the_fewest_that_detect(effect: float, variance: float) -> None:
    g = groups_needed(effect, variance)
    assert g is not None and g >= 2
    assert detectable(math.sqrt(variance / g), g - 1) <= effect
    if g > 2:
        assert detectable(math.sqrt(variance / (g - 1)), g - 2) > effect
    # the minimum detectable effect is detected with the planned power, exactly
    se = math.sqrt(variance / g)
    assert power_at(detectable(se, g - 1), se, g - 1) == pytest.approx(0.8, abs=1e-9)
    assert groups_needed(effect / 2, variance) >= g  # type: ignore[operator]


def _pilot(groups: int, pairs: int, icc: float, sd: float, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    between = rng.normal(0, sd * math.sqrt(icc), groups)
    within = rng.normal(0, sd * math.sqrt(1 - icc), (groups, pairs))
    scores = 0.5 + between[:, None] + within
    return pl.DataFrame(
        {
            "metric": "pairwise-bias",
            "dimension": "age",
            "group_id": np.repeat(np.arange(groups), pairs),
            "score": scores.ravel(),
        }
    )


def test_variability_recovers_the_variance_components() -> None:
    found = variability(_pilot(400, 4, icc=0.4, sd=0.2).lazy(), ["metric"], "group_id")
    row = found.row(0, named=True)
    assert row["within"] == pytest.approx(0.6 * 0.04, rel=0.1)
    assert row["between"] == pytest.approx(0.4 * 0.04, rel=0.2)
    assert row["effect"] is None  # no control pairs: the excess's spread is unknown
    spread = Variability(within=row["within"], between=row["between"])
    assert spread.icc == pytest.approx(0.4, abs=0.06)
    # with controls, what a group shares cancels from its excess
    assert spread.group_variance(3, 1) == pytest.approx(row["within"] * (1 / 3 + 1))
    assert spread.group_variance(3, 0) == pytest.approx(row["between"] + row["within"] / 3)


def test_aggregate_min_detectable_effect_follows_the_groups() -> None:
    rng = np.random.default_rng(1)
    g = 20
    scored = pl.DataFrame(
        {
            "metric": "pairwise-bias",
            "dimension": "age",
            "group_id": np.repeat(np.arange(g), 3),
            "pair_kind": ["counterfactual", "counterfactual", "control"] * g,
            "score": rng.choice([0.0, 0.25, 0.5, 1.0], 3 * g),
        }
    )
    doubled = pl.concat([scored, scored.with_columns(pl.col("group_id") + g)])
    one, two = (pp.aggregate(f)["min_detectable_effect"].item() for f in (scored, doubled))
    factor = {df: t_quantile(0.975, df) + t_quantile(0.8, df) for df in (g - 1, 2 * g - 1)}
    # duplicating every group: V' / V = (G - 1) / (2G - 1), on 2G - 1 degrees of freedom
    expected = one / factor[g - 1] * math.sqrt((g - 1) / (2 * g - 1)) * factor[2 * g - 1]
    assert two == pytest.approx(expected, rel=1e-9)
    no_controls = pp.aggregate(scored.filter(pl.col("pair_kind") != "control"))
    assert no_controls["min_detectable_effect"].item() > 0
    single = pp.aggregate(scored.filter(pl.col("group_id") == 0))
    assert single["min_detectable_effect"].item() is None


def test_plan_power_from_a_pilot_and_by_default() -> None:
    rows = pl.DataFrame(
        {
            "group_id": [g for g in range(30) for _ in range(3)],
            "role": ["reference", "variant", "control"] * 30,
            "dimension": ["age"] * 45 + ["race"] * 45,
            "input": "Should we hire them?",
            "output": ["yes", "no", "yes"] * 30,
        }
    )
    default = pp.plan(rows, cache=False, detect=0.05)
    assert [r.slice for r in default.power] == ["dimension=age", "dimension=race"]
    assert {r.source for r in default.power} == {"default"}
    assert all(r.figure == "excess_divergence" and r.n_groups == 15 for r in default.power)
    assert "power (80% power, 95% confidence" in str(default)
    pilot = _pilot(200, 3, icc=0.0, sd=0.05).with_columns(
        pair_kind=pl.lit("counterfactual")
    )  # a pilot whose scores barely vary: a much smaller detectable effect
    from_pilot = pp.plan(rows, cache=False, detect=0.05, pilot=pilot)
    assert {r.source for r in from_pilot.power} == {"pilot"}
    for quiet, assumed in zip(from_pilot.power, default.power, strict=True):
        assert quiet.min_detectable_effect < assumed.min_detectable_effect  # type: ignore[operator]
        assert quiet.groups_needed < assumed.groups_needed  # type: ignore[operator]
    assert pp.plan(rows, cache=False).power == ()
    with pytest.raises(GateError, match="detect must be a number from 0 to 1"):
        pp.plan(rows, cache=False, detect=2)


def test_plan_says_which_lines_assume_when_the_pilot_lacks_a_metric() -> None:
    """A pilot scored on pairwise-bias only: its lines read the pilot, the refusal lines assume
    the defaults, and the text says so line by line (it said "no pilot" for all of them)."""
    rows = pl.DataFrame(
        {
            "group_id": [g for g in range(30) for _ in range(3)],
            "role": ["reference", "variant", "control"] * 30,
            "dimension": "age",
            "input": "Should we hire them?",
            "output": ["yes", "no", "yes"] * 30,
        }
    )
    pilot = _pilot(200, 3, icc=0.0, sd=0.05).with_columns(pair_kind=pl.lit("counterfactual"))
    metrics = ["pairwise-bias", "pairwise-refusal-disparity"]
    planned = pp.plan(rows, metrics, cache=False, detect=0.05, pilot=pilot)
    assert [r.source for r in planned.power] == ["pilot", "default"]
    text = str(planned)
    assert "no pilot" not in text
    header = "variability from the pilot; assumed: within-group correlation 0.3, score sd 0.25"
    assert header in text
    lines = {line.split(" [")[0].strip(): line for line in text.splitlines() if " groups: " in line}
    assert "(assumed)" not in lines["pairwise-bias"]
    assert "(assumed)" in lines["pairwise-refusal-disparity"]


def test_plan_power_of_disparities_from_a_pilot_with_outcomes() -> None:
    """A pilot carrying each side's outcomes plans the disparities too: the detectable
    amount_relative is (t + t) * sd / sqrt(G), sd that of the pilot's per-group differences."""
    from tests.summary.salary import salary_rows

    rows = salary_rows(groups=20)
    read = pp.outcomes(salary_rows(groups=30, seed=3))
    assert isinstance(read, pl.DataFrame)
    pilot = pp.score(read, progress=False, cache=False)
    assert isinstance(pilot, pl.DataFrame)
    planned = pp.plan(rows, cache=False, detect=0.05, pilot=pilot).power
    disparities = {r.figure: r for r in planned if r.metric == "disparities"}
    assert set(disparities) == {"amount_relative", "refusal_difference"}  # no decisions, no favour
    amount = disparities["amount_relative"]
    assert amount.slice == "dimension=gender, attribute=female" and amount.n_groups == 20
    pairs = pp.form_pairs(read).filter(pl.col("pair_kind") == "counterfactual")
    per_group = pairs.select((pl.col("amount_b") - pl.col("amount_a")) / pl.col("amount_a"))
    sd = float(per_group.to_series().std())  # type: ignore[arg-type]
    expected = (t_quantile(0.975, 19) + t_quantile(0.8, 19)) * sd / math.sqrt(20)
    assert amount.sd == pytest.approx(sd, abs=1e-4)
    assert amount.min_detectable_effect == pytest.approx(expected, rel=1e-9)
    assert amount.groups_needed == groups_needed(0.05, sd * sd)
    assert "disparities [dimension=gender, attribute=female] 20 groups: detects amount" in str(
        pp.plan(rows, cache=False, detect=0.05, pilot=pilot)
    )
    # without outcomes (nor pairwise-favour) a pilot plans no disparity
    plain = pilot.drop(c for c in pilot.columns if c.startswith(("amount_", "decision_")))
    assert all(r.metric != "disparities" for r in pp.plan(rows, cache=False, pilot=plain).power)


def test_a_pass_on_an_underpowered_slice_says_it() -> None:
    rng = np.random.default_rng(3)
    g = 40  # enough groups for a pass; too few to see an excess of 0.05
    scored = pl.DataFrame(
        {
            "metric": "pairwise-bias",
            "dimension": "age",
            "group_id": np.repeat(np.arange(g), 3),
            "pair_kind": ["counterfactual", "counterfactual", "control"] * g,
            "score": np.where(
                np.tile([True, True, False], g), 0.0, rng.choice([0.25, 0.5, 0.75, 1.0], 3 * g)
            ),
        }
    )
    summary = pp.aggregate(scored)
    mde = summary["min_detectable_effect"].item()
    assert summary["excess_divergence_high"].item() < 0.05 < mde
    weak = pp.gate(summary, max_excess_divergence=0.05)
    assert weak.passed
    note = weak.checks.filter(pl.col("gate") == "max_excess_divergence")["note"].item()
    assert note.startswith(f"underpowered: this slice detects an excess of {mde:.3f} or more")
    sure = pp.gate(summary, max_excess_divergence=round(mde + 0.01, 3))
    assert sure.passed
    assert "underpowered" not in (sure.checks["note"].fill_null("").str.join(" ").item())
