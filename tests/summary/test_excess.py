"""The noise floor in the summary: control pairs never change the counterfactual figures, and
the excess divergence with its interval over groups matches the documented computation."""

from __future__ import annotations

import math
import re

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import pairwise_polars as pp
from pairwise_polars.summary._beta import beta_quantile
from pairwise_polars.summary._student_t import t_quantile
from tests.summary.cluster_long_way import excess_interval

NEW = (
    "n_control",
    "n_control_errors",
    "control_mean_divergence",
    "excess_divergence",
    "excess_divergence_low",
    "excess_divergence_high",
)
scores = st.one_of(st.none(), st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]))
pair_rows = st.lists(
    st.tuples(st.integers(0, 6), st.sampled_from(["gender", "race"]),
              st.sampled_from(["pairwise-bias", "pairwise-refusal-disparity"]), scores),
    min_size=1, max_size=50,
)  # fmt: skip


def frame(data: list[tuple[int, str, str, float | None]], kind: str) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "group_id": [r[0] for r in data],
            "dimension": [r[1] for r in data],
            "metric": [r[2] for r in data],
            "pair_kind": kind,
            "score": pl.Series([r[3] for r in data], dtype=pl.Float64),
            "error": pl.Series(
                [None if r[3] is not None else "judge failed" for r in data], dtype=pl.String
            ),
        },
        schema_overrides={"group_id": pl.Int64, "dimension": pl.String, "metric": pl.String},
    )


def with_controls(
    data: list[tuple[int, str, str, float | None]], control_scores: list[float | None]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The counterfactual frame, and the same with control pairs in its (group, slice)s."""
    cf = frame(data, "counterfactual")
    cells = cf.select("group_id", "dimension", "metric").unique(maintain_order=True).rows()
    controls = [(*cells[i % len(cells)], s) for i, s in enumerate(control_scores)]
    both = pl.concat([cf, frame(controls, "control")]) if controls else cf
    return cf, both.sample(fraction=1.0, shuffle=True, seed=len(control_scores))


@settings(max_examples=30, deadline=None)
@given(pair_rows, st.lists(scores, max_size=30))
def test_controls_never_change_the_counterfactual_columns(data, control_scores) -> None:
    cf, both = with_controls(data, control_scores)
    # the detectable effect is the excess's where a slice has controls: it may change too
    old = [c for c in pp.summary.SUMMARY_COLUMNS if c not in (*NEW, "min_detectable_effect")]
    for by in (None, ()):
        plain = pp.aggregate(cf, by)
        controlled = pp.aggregate(both, by)
        keys = [c for c in controlled.columns if c not in pp.summary.SUMMARY_COLUMNS]
        assert_frame_equal(
            controlled.select(*keys, *old), plain.select(*keys, *old), check_exact=False
        )
        assert plain["n_control"].to_list() == [0] * plain.height
        assert plain["excess_divergence"].null_count() == plain.height
        # a slice counts the control pairs of the groups (and metric) it contains
        controls = both.filter(pl.col("pair_kind") == "control")
        n_control = (
            cf.select(*keys, "group_id")
            .unique()
            .join(controls.group_by("group_id", "metric").len(), on=["group_id", "metric"])
            .group_by(keys)
            .agg(pl.col("len").sum())
        )
        got = controlled.join(n_control, on=keys, how="left").with_columns(
            pl.col("len").fill_null(0)
        )
        assert got["n_control"].to_list() == got["len"].to_list()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 8), st.sampled_from([0.0, 0.25, 0.5, 1.0])), min_size=1),
    st.lists(st.tuples(st.integers(0, 8), st.sampled_from([0.0, 0.25, 0.5])), min_size=1),
    st.sampled_from([0.8, 0.95]),
)
def test_excess_matches_the_documented_interval(cf_rows, ctrl_rows, confidence) -> None:
    data = pl.DataFrame(
        {
            "metric": "m",
            "group_id": [g for g, _ in cf_rows] + [g for g, _ in ctrl_rows],
            "pair_kind": ["counterfactual"] * len(cf_rows) + ["control"] * len(ctrl_rows),
            "score": [s for _, s in cf_rows] + [s for _, s in ctrl_rows],
        }
    )
    got = pp.aggregate(data, (), confidence=confidence).row(0, named=True)
    cf: dict[int, list[float]] = {}
    ctrl: dict[int, list[float]] = {}
    for g, s in cf_rows:
        cf.setdefault(g, []).append(s)
    for g, s in ctrl_rows:
        ctrl.setdefault(g, []).append(s)
    assert got["n_control"] == len(ctrl_rows)
    k, excess, low, high = excess_interval(cf, ctrl, confidence)
    assert math.isclose(got["control_mean_divergence"], k, abs_tol=1e-12)
    assert math.isclose(got["excess_divergence"], excess, abs_tol=1e-12)
    if low is None or high is None:
        assert got["excess_divergence_low"] is None
        assert got["excess_divergence_high"] is None
        return
    assert math.isclose(got["excess_divergence_low"], low, abs_tol=1e-9)
    assert math.isclose(got["excess_divergence_high"], high, abs_tol=1e-9)


def test_controls_without_spread_give_mover_bounds_of_the_counterfactual_cr2_t_and_jeffreys():
    # 6 groups of 2 counterfactual and 2 control pairs, every control scored 0: MOVER from
    # the counterfactual mean's CR2 t interval and the controls' Jeffreys bounds on their
    # worst-case effective n (12^2 / (6 * 2^2) = 6 trials, 0 events), computed here by hand.
    cf = [[0.25, 0.5], [0.0, 0.25], [0.5, 0.75], [0.0, 0.0], [0.25, 0.25], [1.0, 0.5]]
    data = pl.DataFrame(
        {
            "metric": "m",
            "group_id": [g for g in range(6) for _ in range(4)],
            "pair_kind": ["counterfactual", "counterfactual", "control", "control"] * 6,
            "score": [s for scores in cf for s in (*scores, 0.0, 0.0)],
        }
    )
    got = pp.aggregate(data, ()).row(0, named=True)
    m = sum(map(sum, cf)) / 12
    r = [sum(v) - 2 * m for v in cf]
    u2 = [x * x / (1 - 2 / 12) for x in r]  # CR2: leverage 2 / 12 in every group
    a, b = sum(u2), sum(x * x for x in u2)
    df = min(5.0, max(1.0, 2 * a * a / (b - a * a / 6)))  # Bell-McCaffrey 5, Satterthwaite
    half = t_quantile(0.975, math.floor(df * 100 + 1e-6) / 100) * math.sqrt(a) / 12
    k_high = float(beta_quantile(0.975, 0.5, 6.5))  # Jeffreys, 0 of 6
    assert got["control_mean_divergence"] == 0.0
    assert math.isclose(got["excess_divergence"], m, abs_tol=1e-12)
    assert math.isclose(got["excess_divergence_high"], m + half, abs_tol=1e-9)
    low = m - math.sqrt(half * half + k_high * k_high)
    assert math.isclose(got["excess_divergence_low"], low, abs_tol=1e-9)
    # with 1 control pair per group (every control 0): Clopper-Pearson on 6 trials instead
    one = data.filter(~pl.int_range(pl.len()).mod(4).eq(3))
    got = pp.aggregate(one, ()).row(0, named=True)
    k_high = 1 - 0.025 ** (1 / 6)  # Clopper-Pearson, 0 of 6
    low = m - math.sqrt(half * half + k_high * k_high)
    assert math.isclose(got["excess_divergence_low"], low, abs_tol=1e-9)


def test_excess_is_negative_when_controls_diverge_more_and_null_without_controls() -> None:
    data = pl.DataFrame(
        {
            "metric": "m",
            "group_id": [1, 1, 2, 2, 3, 3, 4],
            "dimension": ["age"] * 6 + ["race"],
            "pair_kind": ["counterfactual", "control"] * 3 + ["counterfactual"],
            "score": [0.0, 0.5, 0.25, 0.5, 0.0, 0.25, 0.5],
        }
    )
    summary = pp.aggregate(data)
    age = summary.row(0, named=True)
    assert math.isclose(age["excess_divergence"], 0.25 / 3 - 1.25 / 3)
    assert age["excess_divergence_low"] < age["excess_divergence"] < 0
    race = summary.row(1, named=True)
    assert race["n_control"] == 0
    assert race["n_control_errors"] == 0
    assert [race[c] for c in NEW[2:]] == [None] * 4  # no controls: unknown, never 0


def test_failed_control_judgements_leave_the_counterfactual_figures_but_fail_the_gate():
    data = pl.DataFrame(
        {
            "metric": "m",
            "group_id": [1, 1, 2, 2],
            "pair_kind": ["counterfactual", "control"] * 2,
            "score": [0.5, None, 0.25, None],
            "error": [None, "timeout", None, "timeout"],
        }
    )
    row = pp.aggregate(data, ()).row(0, named=True)
    assert (row["n_pairs"], row["n_errors"], row["top_error"]) == (2, 0, None)
    # two control pairs, none scored: the noise floor is unknown, and the gate counts them
    assert (row["n_control"], row["n_control_errors"]) == (2, 2)
    gated = pp.gate(pp.aggregate(data, ())).checks.row(0, named=True)
    assert (gated["gate"], gated["observed"], gated["passed"]) == ("max_error_rate", 0.5, False)
    assert row["control_mean_divergence"] is None
    assert row["excess_divergence"] is None


blocks = st.lists(st.integers(0, 3), min_size=80, max_size=80)


@settings(max_examples=40, deadline=None)
@given(pair_rows, st.lists(scores, max_size=30), blocks)
def test_control_sums_of_blocks_merge_to_the_local_summary(data, control_scores, assignment):
    from pairwise_polars.summary import combine, error_sums, group_sums, merge_sums

    _, both = with_controls(data, control_scores)
    scored = both.with_columns(block=pl.Series(assignment[: both.height]))
    keys = ["metric", "dimension"]
    options = {"equivalence_threshold": 0.0, "divergence_threshold": 0.5}
    parts = [part.drop("block").lazy() for _, part in scored.group_by("block", maintain_order=True)]
    sums = merge_sums(
        [group_sums(p, keys, "group_id", **options) for p in parts], [*keys, "group_id"]
    )
    errors = merge_sums([error_sums(p, keys) for p in parts], [*keys, "error_kind"])
    merged = combine(sums, keys, errors=errors)
    local = pp.aggregate(scored.drop("block"), **options)
    assert_frame_equal(merged, local, check_exact=False, rel_tol=1e-9, abs_tol=1e-12)


def controlled(excess: float, groups: int = 6) -> pl.DataFrame:
    """``groups`` groups: two counterfactual pairs at ``0.25 + excess`` (alternating +-0.125
    so there is spread) and a control pair at 0.25; the race slice has no controls."""
    rows = []
    for g in range(groups):
        wobble = 0.125 if g % 2 else -0.125
        rows += [(g, "gender", "counterfactual", 0.25 + excess + wobble)] * 2
        rows += [(g, "gender", "control", 0.25)]
        rows += [(100 + g, "race", "counterfactual", 0.25)]
    return pl.DataFrame(
        rows, schema=["group_id", "dimension", "pair_kind", "score"], orient="row"
    ).with_columns(metric=pl.lit("pairwise-bias"))


def test_excess_gate_passes_within_the_noise_and_fails_beyond_it() -> None:
    # Controls without spread get a worst-case control interval (MOVER), so it takes many
    # groups for the interval to fit under 0.05.
    enough = pp.aggregate(controlled(0.0, groups=400).filter(pl.col("dimension") == "gender"))
    assert pp.gate(enough, max_excess_divergence=0.05).status == "pass"
    # the same noise in 6 groups: under min_groups (30), so at best inconclusive
    noise = pp.aggregate(controlled(0.0).filter(pl.col("dimension") == "gender"))
    few = pp.gate(noise, max_excess_divergence=0.05)
    assert few.status == "inconclusive"
    straddles = r"straddles the threshold: about \d+ more groups would likely"
    assert re.search(straddles, few.failures["note"][0])
    bias = pp.aggregate(controlled(0.5, groups=40).filter(pl.col("dimension") == "gender"))
    result = pp.gate(bias, max_excess_divergence=0.2)
    assert result.status == "fail"
    assert result.failures.select("slice", "gate", "observed").rows() == [
        ("dimension=gender", "max_excess_divergence", 0.5)
    ]
    # conservative: the upper bound of the excess, which lies above the point estimate
    strict = pp.gate(noise, max_excess_divergence=0.05, conservative=True)
    check = strict.checks.filter(pl.col("gate") == "max_excess_divergence").row(0, named=True)
    assert check["observed"] == noise["excess_divergence_high"].item() > 0.05
    assert check["note"] == "on the interval bound excess_divergence_high"
    assert strict.status == "fail"


def test_excess_gate_without_controls_is_inconclusive_and_says_how_to_add_them() -> None:
    summary = pp.aggregate(controlled(0.0))
    result = pp.gate(summary, max_excess_divergence=0.1)
    assert result.status == "inconclusive"
    failed = result.failures.filter(pl.col("slice") == "dimension=race").row(0, named=True)
    assert (failed["slice"], failed["observed"]) == ("dimension=race", None)
    assert failed["note"].startswith("no control pairs: add control rows (role 'control'")
    assert "counterfactuals() adds one per group" in failed["note"]
    assert result.verdict().startswith(
        "INCONCLUSIVE: a slice has no scored control pairs (no noise floor)"
    )
    # controls whose judgements all failed: unknown, said so
    failed_controls = controlled(0.0).with_columns(
        score=pl.when(pl.col("pair_kind") == "control").then(None).otherwise(pl.col("score"))
    )
    gender = pp.aggregate(failed_controls.filter(pl.col("dimension") == "gender"))
    failed = pp.gate(gender, max_excess_divergence=0.1).failures
    note = failed.filter(pl.col("gate") == "max_excess_divergence")["note"].item()
    assert note.startswith("no scored control pairs (their judgements failed)")
    # and the failed control judgements count against the error gate: 6 of 12 + 6 judgements
    errors = failed.filter(pl.col("gate") == "max_error_rate").row(0, named=True)
    assert errors["observed"] == 6 / 18
    assert errors["note"] == "6 of 18 judgements failed"


def test_excess_gate_threshold_is_validated_like_the_others_and_summary_gates_take_it() -> None:
    summary = pp.summarize(controlled(0.5))
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(pp.GateError, match=r"^max_excess_divergence must be a number from 0"):
            pp.gate(summary, max_excess_divergence=bad)
    result = pp.summary.gate_summary(
        summary,
        overall={"max_excess_divergence": 0.3},
        per_slice={"max_excess_divergence": {"pairwise-bias": 0.3}},
    )
    assert result.failures.select("slice", "gate").rows() == [
        ("overall", "max_excess_divergence"),
        ("dimension=gender", "max_excess_divergence"),
        ("dimension=race", "max_excess_divergence"),
    ]
    assert "max_excess_divergence" in pp.summary.FAIRNESS_GATES
