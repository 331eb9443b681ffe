"""Aggregation against an independent straightforward computation, and its identities."""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import pairwise_polars as pp
from pairwise_polars.summary._student_t import t_quantile
from tests.summary.cluster_long_way import clustered_wilson

scores = st.one_of(st.none(), st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]))
rows = st.lists(
    st.tuples(st.integers(0, 6), st.sampled_from(["gender", "race"]),
              st.sampled_from(["pairwise-bias", "pairwise-refusal-disparity"]), scores),
    min_size=1, max_size=60,
)  # fmt: skip


def frame(data: list[tuple[int, str, str, float | None]]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "group_id": [r[0] for r in data],
            "dimension": [r[1] for r in data],
            "metric": [r[2] for r in data],
            "score": pl.Series([r[3] for r in data], dtype=pl.Float64),
            "error": [None if r[3] is not None else "judge failed" for r in data],
        }
    )


@settings(max_examples=60, deadline=None)
@given(rows)
def test_aggregate_matches_straightforward_computation(data) -> None:
    summary = pp.aggregate(frame(data), equivalence_threshold=0.0, divergence_threshold=0.5)
    for row in summary.iter_rows(named=True):
        mine = [r for r in data if r[2] == row["metric"] and r[1] == row["dimension"]]
        scored = [r[3] for r in mine if r[3] is not None]
        assert row["n_pairs"] == len(mine)
        assert row["n_scored"] == len(scored)
        assert row["n_errors"] == len(mine) - len(scored)
        if not scored:
            assert row["equivalence_rate"] is None
            assert row["mean_divergence"] is None
            assert row["divergence_rate_low"] is None
            continue
        k_eq = sum(s <= 0.0 for s in scored)
        k_div = sum(s >= 0.5 for s in scored)
        assert row["equivalence_rate"] == pytest.approx(k_eq / len(scored))
        assert row["divergence_rate"] == pytest.approx(k_div / len(scored))
        assert row["mean_divergence"] == pytest.approx(sum(scored) / len(scored))
        n_groups = len({r[0] for r in mine if r[3] is not None})
        assert row["n_groups"] == n_groups
        by_group: dict[object, dict[str, list[float]]] = {}
        for group, _, _, value in mine:
            if value is None:
                continue
            slot = by_group.setdefault(group, {"eq": [], "div": [], "mean": []})
            slot["eq"].append(float(value <= 0.0))
            slot["div"].append(float(value >= 0.5))
            slot["mean"].append(value)
        for name, key, rate in (
            ("equivalence_rate", "eq", True),
            ("divergence_rate", "div", True),
            ("mean_divergence", "mean", False),
        ):
            values = {g: v[key] for g, v in by_group.items()}
            expected = clustered_wilson(values, 0.95, rate=rate)
            if expected is None:
                assert row[f"{name}_low"] is None and row[f"{name}_high"] is None
                continue
            assert row[f"{name}_low"] == pytest.approx(expected[0], abs=1e-9)
            assert row[f"{name}_high"] == pytest.approx(expected[1], abs=1e-9)
            assert row[f"{name}_low"] <= row[name] + 1e-12 <= row[f"{name}_high"] + 2e-12
            assert row[f"{name}_high"] > row[f"{name}_low"]  # never zero width from 2+ groups


@settings(max_examples=40, deadline=None)
@given(rows)
def test_slices_add_up_to_overall(data) -> None:
    scored = frame(data)
    by_dim = (
        pp.aggregate(scored).group_by("metric").agg(pl.col("n_pairs", "n_scored", "n_errors").sum())
    )
    overall = pp.aggregate(scored, by=()).select("metric", "n_pairs", "n_scored", "n_errors")
    assert by_dim.sort("metric").equals(overall.sort("metric"))


def test_cluster_interval_treats_a_group_as_one_unit() -> None:
    # Two groups with very different scores, many pairs each: an interval that counted pairs as
    # independent would be narrow; clustering by group must keep it wide.
    data = pl.DataFrame(
        {
            "group_id": [1] * 50 + [2] * 50,
            "dimension": "gender",
            "metric": "pairwise-bias",
            "score": [0.0] * 50 + [1.0] * 50,
        }
    )
    row = pp.aggregate(data).row(0, named=True)
    assert row["mean_divergence"] == pytest.approx(0.5)
    iid_half_width = 1.96 * math.sqrt(0.25 / 100)
    assert row["mean_divergence_high"] - row["mean_divergence_low"] > 4 * iid_half_width
    # V = G/(G-1) * sum((s_g - m n_g)^2) / N^2 = 2 * (25^2 + 25^2) / 100^2 = 0.25 = m(1 - m):
    # one effective observation, and a t quantile with one degree of freedom.
    q = t_quantile(0.975, 1)
    half = q * math.sqrt(0.25 + q * q / 4) / (1 + q * q)
    assert row["mean_divergence_low"] == pytest.approx(0.5 - half, abs=1e-12)
    assert row["mean_divergence_low"] < 0.01 and row["mean_divergence_high"] > 0.99
    for rate in ("equivalence_rate", "divergence_rate"):
        assert row[f"{rate}_low"] < 0.01 and row[f"{rate}_high"] > 0.99


def test_few_groups_all_scored_zero_give_a_wide_interval_not_a_point() -> None:
    # Two groups, all scored 0: the former z interval was [0, 0], and a conservative gate of
    # 0.01 passed on two pairs.
    data = pl.DataFrame({"group_id": [1, 2], "dimension": "age", "metric": "m", "score": 0.0})
    row = pp.aggregate(data).row(0, named=True)
    assert row["mean_divergence"] == 0.0
    assert row["mean_divergence_low"] == 0.0
    assert row["mean_divergence_high"] > 0.9  # t with 1 df on 2 pairs
    # Clopper-Pearson for 0 events in 2 (the worst-case effective n, exact with 1 pair per
    # group): 1 - 0.025^(1/2)
    assert row["divergence_rate_high"] == pytest.approx(1 - 0.025**0.5)
    assert row["equivalence_rate_low"] == pytest.approx(0.025**0.5)
    result = pp.gate(pp.aggregate(data), max_mean_divergence=0.01, conservative=True)
    assert not result.passed
    # Many pairs in many groups, all 0: no spread to estimate, so the pairs of a group count as
    # one (the worst case): the bound is a rule of three on the groups, never 0.
    many = pl.DataFrame(
        {"group_id": [g for g in range(200) for _ in range(4)], "dimension": "age",
         "metric": "m", "score": 0.0}
    )  # fmt: skip
    high = pp.aggregate(many)["mean_divergence_high"].item()
    assert 3.8 / 204 < high < 3.9 / 200


def test_a_worst_case_slice_takes_jeffreys_bounds_unless_groups_are_single_pairs() -> None:
    # 4 groups of 5 pairs, all scored 0: no spread, so n_eff is the worst case N^2 / sum n_g^2
    # = 4, and the rates take Jeffreys bounds on it, Beta(x + 1/2, n - x + 1/2) quantiles
    # (Clopper-Pearson's upper bound would be 1 - 0.025^(1/4) = 0.60). Computed apart from the
    # beta quantile: T^2 / (9 + T^2) ~ Beta(1/2, 9/2) for T ~ t_9, so the 0.975 quantile of
    # Beta(1/2, 4 + 1/2) comes from t_9's 0.9875 quantile.
    many = pl.DataFrame(
        {"group_id": [g for g in range(4) for _ in range(5)], "dimension": "age",
         "metric": "m", "score": 0.0}
    )  # fmt: skip
    row = pp.aggregate(many).row(0, named=True)
    t = t_quantile(0.9875, 9)
    assert row["divergence_rate_high"] == pytest.approx(t * t / (9 + t * t), rel=1e-9)
    assert row["equivalence_rate_low"] == pytest.approx(9 / (9 + t * t), rel=1e-9)
    assert row["divergence_rate_low"] == 0.0 and row["equivalence_rate_high"] == 1.0
    # 5 groups of 1 pair: the worst case is the exact binomial n = 5, Clopper-Pearson stays.
    single = pl.DataFrame({"group_id": range(5), "dimension": "age", "metric": "m", "score": 0.0})
    row = pp.aggregate(single).row(0, named=True)
    assert row["n_scored"] == 5 and row["n_groups"] == 5
    assert row["divergence_rate_high"] == pytest.approx(1 - 0.025 ** (1 / 5), rel=1e-9)


def test_skewed_scores_in_few_groups_widen_the_mean_interval() -> None:
    # One group of ten carries every nonzero score: the variance rests on one group, so the
    # degrees of freedom fall (Satterthwaite) and the upper bound is far above the z bound.
    scores = [0.0] * 36 + [0.25, 0.0, 0.0, 0.0]
    data = pl.DataFrame(
        {"group_id": [g for g in range(10) for _ in range(4)], "dimension": "x",
         "metric": "m", "score": scores}
    )  # fmt: skip
    row = pp.aggregate(data).row(0, named=True)
    m = 0.25 / 40
    assert row["mean_divergence"] == pytest.approx(m)
    z_high = m + 1.96 * math.sqrt(
        10 / 9 * (0.25 - m * 4) ** 2 / 1600 + 10 / 9 * 9 * (m * 4) ** 2 / 1600
    )
    assert row["mean_divergence_high"] > 5 * z_high


def test_position_figures_need_both_orders() -> None:
    both = pl.DataFrame(
        {
            "group_id": [1, 1, 2, 2],
            "dimension": "gender",
            "metric": "pairwise-bias",
            "score_ab": [0.0, 0.5, 0.25, None],
            "score_ba": [0.0, 0.0, 0.75, 0.5],
        }
    ).with_columns(score=(pl.col("score_ab") + pl.col("score_ba")) / 2)
    row = pp.aggregate(both).row(0, named=True)
    # three pairs have both orders; gaps 0, 0.5, 0.5; equivalence flips in one (0.5 vs 0)
    assert row["mean_position_gap"] == pytest.approx(1 / 3)
    assert row["position_flip_rate"] == pytest.approx(1 / 3)
    one_order = pp.aggregate(both.drop("score_ab", "score_ba")).row(0, named=True)
    assert one_order["mean_position_gap"] is None
    assert one_order["position_flip_rate"] is None


def test_top_error_names_the_commonest_kind() -> None:
    data = pl.DataFrame(
        {
            "group_id": [1, 2, 3, 4],
            "dimension": "x",
            "metric": "m",
            "score": [None, None, None, 0.0],
            "error": [
                "timeout or dropped connection (gave up after 7 attempts)",
                "timeout or dropped connection (gave up after 3 attempts)",
                "unparseable reply: not JSON",
                None,
            ],
        }
    )
    row = pp.aggregate(data).row(0, named=True)
    assert row["top_error"] == "timeout or dropped connection (gave up after N attempts)"
    assert pp.aggregate(data.filter(pl.col("error").is_null()))["top_error"].item() is None


blocks = st.lists(st.integers(0, 3), min_size=60, max_size=60)


@settings(max_examples=40, deadline=None)
@given(rows, blocks)
def test_sums_of_blocks_merge_to_the_local_summary(data, assignment) -> None:
    # What a distributed runner does: stage one per block of rows, add, stage two.
    from pairwise_polars.summary import combine, error_sums, group_sums, merge_sums

    scored = frame(data).with_columns(block=pl.Series(assignment[: len(data)]))
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


def test_single_group_has_no_mean_interval_and_thresholds_apply() -> None:
    data = pl.DataFrame(
        {"group_id": [1, 1], "dimension": "age", "metric": "m", "score": [0.25, 0.75]}
    )
    row = pp.aggregate(data, equivalence_threshold=0.25, divergence_threshold=0.75).row(
        0, named=True
    )
    assert row["equivalence_rate"] == 0.5
    assert row["divergence_rate"] == 0.5
    assert row["mean_divergence_low"] is None  # one cluster: no variance estimate


def test_aggregate_errors() -> None:
    data = pl.DataFrame({"group_id": [1], "metric": "m", "score": [2.0], "dimension": "x"})
    with pytest.raises(pp.ScoreError, match="1 scores lie outside"):
        pp.aggregate(data)
    with pytest.raises(pp.ColumnError, match=r"aggregate needs columns \['model'\]"):
        pp.aggregate(data, by=["model"])


def test_errors_of_the_summary_stage_belong_to_the_package_tree() -> None:
    data = pl.DataFrame({"group_id": [1], "metric": "m", "score": [2.0], "dimension": "x"})
    with pytest.raises(pp.PairwiseError) as caught:
        pp.aggregate(data)
    assert isinstance(caught.value, ValueError)  # callers catching ValueError still do
    with pytest.raises(pp.OptionError, match=r"confidence must be between 0 and 1, got 1\.5"):
        pp.aggregate(data.with_columns(score=pl.lit(0.5)), confidence=1.5)


def test_combine_without_error_counts_names_no_commonest_error() -> None:
    # combine's errors= is optional: the summary then has every figure and a null top_error.
    from pairwise_polars.summary import combine, group_sums

    data = pl.DataFrame(
        {"group_id": [1, 1, 2], "dimension": "age", "metric": "m", "score": [0.0, 0.5, 1.0]}
    )
    keys = ["metric", "dimension"]
    options = {"equivalence_threshold": 0.0, "divergence_threshold": 0.5}
    summary = combine(group_sums(data.lazy(), keys, "group_id", **options), keys)
    local = pp.aggregate(data, **options)
    assert_frame_equal(summary.drop("top_error"), local.drop("top_error"))
    assert summary["top_error"].dtype == pl.String and summary["top_error"].null_count() == 1


def test_degrees_of_freedom_are_never_floored_below_a_whole_number() -> None:
    from pairwise_polars.summary._intervals import t_quantiles

    frame = pl.DataFrame({"df": [5 - 1e-12, 4.5, 2.0]})
    got = frame.select(t_quantiles(frame, "df", 0.975)).to_series().to_list()
    assert got[0] == pytest.approx(t_quantile(0.975, 5), abs=1e-12)  # not t(4)
    assert t_quantile(0.975, 5) < got[1] < t_quantile(0.975, 4)  # fractional, not t(4)
    assert got[2] == pytest.approx(t_quantile(0.975, 2), abs=1e-12)


def test_unequal_group_sizes_take_bell_mccaffrey_degrees_of_freedom() -> None:
    # Groups of alternately 1 and 20 pairs: the CR2 degrees of freedom are 1.3 / 4.5 / 15.5 at
    # 5 / 10 / 30 groups (issue 23), far below G - 1.
    from pairwise_polars.summary._intervals import DESIGN_DF, design_sums

    for groups, expected in ((5, 1.31), (10, 4.50), (30, 15.50)):
        sizes = pl.DataFrame({"n": [1 if g % 2 == 0 else 20 for g in range(groups)]})
        assert sizes.select(design_sums("n"))[DESIGN_DF].item() == pytest.approx(expected, abs=0.01)
    # A slice of such groups gets a wider interval than one of equal sizes with the same spread.
    scores = [
        (g, 1.0 if g % 4 == 1 and i == 0 else 0.0)
        for g in range(10)
        for i in range(1 if g % 2 == 0 else 20)
    ]
    data = pl.DataFrame(
        {"group_id": [g for g, _ in scores], "metric": "m", "score": [s for _, s in scores]}
    )
    row = pp.aggregate(data, ()).row(0, named=True)
    assert row["divergence_rate_high"] > 0.1


def test_excess_of_all_equal_scores_is_not_a_point() -> None:
    # Every counterfactual and control pair scores 0 in 5 groups: the former interval was
    # [0, 0] (17% of replicates at 5 groups); with no spread the bounds are MOVER's on each
    # side's worst-case interval, so they hold 0 with a width.
    data = pl.DataFrame(
        {"metric": "m", "group_id": [g for g in range(5) for _ in range(4)],
         "pair_kind": ["counterfactual", "counterfactual", "counterfactual", "control"] * 5,
         "score": 0.0}
    )  # fmt: skip
    row = pp.aggregate(data, ()).row(0, named=True)
    assert row["excess_divergence"] == 0.0
    assert row["excess_divergence_low"] < -0.2 and row["excess_divergence_high"] > 0.2
    # Controls all 0 while the variants spread: the interval is not the Wald one, which
    # excluded 0 without any bias when the controls showed no spread.
    data = data.with_columns(
        score=pl.when((pl.col("pair_kind") == "counterfactual") & (pl.col("group_id") == 0))
        .then(0.25)
        .otherwise(0.0)
    )
    row = pp.aggregate(data, ()).row(0, named=True)
    assert row["excess_divergence_low"] < 0 < row["excess_divergence_high"]


def test_one_group_holding_every_control_leaves_the_excess_unbounded() -> None:
    data = pl.DataFrame(
        {"metric": "m", "group_id": [0, 0, 1, 2], "score": [0.0, 0.5, 0.25, 0.5],
         "pair_kind": ["control", "counterfactual", "counterfactual", "counterfactual"]}
    )  # fmt: skip
    row = pp.aggregate(data, ()).row(0, named=True)
    assert row["excess_divergence"] is not None
    assert row["excess_divergence_low"] is None and row["excess_divergence_high"] is None
