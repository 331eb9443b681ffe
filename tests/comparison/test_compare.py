"""compare: paired deltas per slice and figure, matched pairs, unmatched pairs counted, the
p-values adjusted over the family, on frames and on score_parquet run directories."""

from __future__ import annotations

import functools
from pathlib import Path

import polars as pl
import polars.selectors as cs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_series_equal
from release_runs import scored_runs

import pairwise_polars as pp
from pairwise_polars._errors import ColumnError, OptionError, ScoreError
from pairwise_polars.report._comparison import readable_comparison, unmatched_line
from pairwise_polars.summary._adjust import adjusted


def _figure(comparison: pl.DataFrame, figure: str) -> pl.DataFrame:
    return comparison.filter(pl.col("figure") == figure)


def test_a_planted_regression_is_found_in_its_slice_only() -> None:
    before, after = scored_runs(groups=40, shift={"gender": 0.2})
    result = pp.compare(before, after)
    mean = _figure(result, "mean_divergence")
    changed = dict(zip(mean["dimension"], mean["changed"], strict=True))
    assert changed == {"age": "no evidence", "gender": "worse", "race": "no evidence"}
    assert set(result["changed"]) <= set(pp.comparison.CHANGES)
    excess = _figure(result, "excess_divergence").filter(pl.col("dimension") == "gender")
    assert excess["changed"].item() == "worse"
    # the equivalence rate falls: that is worse too
    equivalence = _figure(result, "equivalence_rate").filter(pl.col("dimension") == "gender")
    assert equivalence["delta"].item() < 0
    assert equivalence["changed"].item() in ("worse", "no evidence")


def test_figures_are_those_of_aggregate_on_each_run() -> None:
    before, after = scored_runs(groups=12, seed=3)
    result = pp.compare(before, after, adjust=None)
    for run, column in ((before, "before"), (after, "after")):
        summary = pp.aggregate(run)
        for figure in (
            "equivalence_rate",
            "divergence_rate",
            "mean_divergence",
            "excess_divergence",
        ):
            got = _figure(result, figure).sort("dimension")[column]
            assert_series_equal(got, summary.sort("dimension")[figure], check_names=False)
    assert_series_equal(result["delta"], result["after"] - result["before"], check_names=False)
    # adjust=None leaves the p-values as they are; every row has a paired interval around delta
    assert_series_equal(result["p_adjusted"], result["p_value"], check_names=False)
    assert (
        (result["delta_low"] <= result["delta"]) & (result["delta"] <= result["delta_high"])
    ).all()
    assert (result["n_groups"] == 12).all() and (result["n_matched"] == 48).all()


def test_identical_runs_show_no_change() -> None:
    before, _ = scored_runs(groups=10)
    result = pp.compare(before, before)
    assert (result["delta"] == 0).all()
    assert (result["p_value"] == 1).all()
    assert (result["changed"] == "no evidence").all()


def test_swapping_the_runs_negates_the_change() -> None:
    before, after = scored_runs(groups=15, shift={"race": 0.1}, seed=5)
    there, back = pp.compare(before, after), pp.compare(after, before)
    assert_series_equal(there["delta"], -back["delta"], check_names=False)
    assert_series_equal(there["p_value"], back["p_value"], check_names=False)
    flip = {"worse": "better", "better": "worse", "no evidence": "no evidence"}
    assert there["changed"].replace_strict(flip).to_list() == back["changed"].to_list()


def test_holm_is_not_less_cautious_than_no_adjustment() -> None:
    before, after = scored_runs(groups=20, shift={"age": 0.05}, seed=11)
    holm = pp.compare(before, after, adjust="holm")
    raw = pp.compare(before, after, adjust=None)
    bh = pp.compare(before, after, adjust="bh")
    assert (holm["p_adjusted"] >= raw["p_value"] - 1e-12).all()
    assert (holm["p_adjusted"] >= bh["p_adjusted"] - 1e-12).all()
    assert (bh["p_adjusted"] >= raw["p_value"] - 1e-12).all()


def test_unmatched_pairs_are_counted_in_each_direction() -> None:
    before, after = scored_runs(groups=10)
    dropped = after.filter(pl.col("group_id") != "age-0")  # 4 pairs gone in the new run
    added = pl.concat(
        [
            dropped,
            dropped.filter(pl.col("dimension") == "race")
            .head(2)
            .with_columns(pair_id=pl.col("pair_id") + 1, group_id=pl.lit("race-new")),
        ]
    )
    result = pp.compare(before, added)
    counts = (
        result.group_by("dimension")
        .agg(pl.col("n_unmatched_before", "n_unmatched_after", "n_matched", "n_groups").first())
        .sort("dimension")
    )
    assert counts.rows() == [
        ("age", 4, 0, 36, 9),
        ("gender", 0, 0, 40, 10),
        ("race", 0, 2, 40, 10),
    ]


def test_a_slice_in_one_run_only_is_reported_not_dropped() -> None:
    before, after = scored_runs(groups=5, dimensions=("age",))
    extra, _ = scored_runs(groups=3, dimensions=("religion",), seed=9)
    result = pp.compare(before, pl.concat([after, extra]))
    religion = result.filter(pl.col("dimension") == "religion")
    assert religion.height == 3  # every counterfactual figure, none measured
    assert religion["delta"].is_null().all()
    assert (religion["n_unmatched_after"] == 12).all()
    assert (religion["changed"] == "no evidence").all()


def test_pairs_match_by_attributes_when_ids_differ() -> None:
    before, after = scored_runs(groups=8, shift={"gender": 0.3})
    renumbered = after.with_columns(pair_id=pl.col("pair_id") + 7)
    by_ids = pp.compare(before, after)
    by_attributes = pp.compare(before, renumbered)
    assert by_attributes.equals(by_ids)
    with_ids = pp.compare(before, renumbered, match="pair_id")
    assert (with_ids["n_matched"] == 0).all() and (with_ids["n_unmatched_after"] == 32).all()


def test_a_key_naming_two_rows_is_refused() -> None:
    before, after = scored_runs(groups=4, dimensions=("age",))
    twice = pl.concat([after, after.head(1).with_columns(pair_id=pl.lit(1, pl.Int64))])
    with pytest.raises(ColumnError, match=r"2 rows for one pair .*group_id"):
        pp.compare(before.with_columns(pair_id=pl.col("pair_id") + 1), twice)


@pytest.mark.parametrize("bad", [7.0, float("nan"), -1.5])
def test_a_score_outside_the_unit_range_is_refused_as_aggregate_refuses_it(bad: float) -> None:
    before, after = scored_runs(groups=4, dimensions=("age",))
    raw = after.with_columns(
        score=pl.when(pl.col("pair_id") == pl.first("pair_id")).then(bad).otherwise("score")
    )
    with pytest.raises(ScoreError, match=r"1 matched scores of the after run lie outside"):
        pp.compare(before, raw)
    with pytest.raises(ScoreError, match="outside"):
        pp.aggregate(raw)


def test_missing_columns_and_bad_options_are_named() -> None:
    before, after = scored_runs(groups=4, dimensions=("age",))
    with pytest.raises(ColumnError, match=r"\['model'\] in the before run"):
        pp.compare(before, after, by=["model"])
    with pytest.raises(OptionError, match="adjust must be 'holm', 'bh' or None"):
        pp.compare(before, after, adjust="bonferroni")  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="match must be one of"):
        pp.compare(before, after, match="rows")  # type: ignore[arg-type]


def test_compare_reads_two_score_parquet_runs(tmp_path: Path) -> None:
    rows = pl.read_parquet(Path(__file__).parents[2] / "data" / "jobs_group.parquet")
    rows = rows.filter(
        pl.col("group_id").is_in(rows["group_id"].unique().sort().head(12).implode())
    )
    # the new release answers differently in a third of the groups
    changed = rows["group_id"].unique().sort().head(4)
    new = rows.with_columns(
        output=pl.when(pl.col("group_id").is_in(changed.implode()) & (pl.col("role") == "variant"))
        .then(pl.lit("I cannot help with that request."))
        .otherwise(pl.col("output"))
    )
    rows.write_parquet(tmp_path / "old.parquet")
    new.write_parquet(tmp_path / "new.parquet")
    for name in ("old", "new"):
        pp.score_parquet(
            tmp_path / f"{name}.parquet",
            tmp_path / name,
            progress=False,
            cache=False,
            chunk_size=20,
        )
    from_dirs = pp.compare(tmp_path / "old", tmp_path / "new")
    in_memory = pp.compare(
        pl.read_parquet(tmp_path / "old" / "scored"), pl.read_parquet(tmp_path / "new" / "scored")
    )
    assert from_dirs.equals(in_memory)
    mean = _figure(from_dirs, "mean_divergence")
    assert (mean["n_unmatched_before"] == 0).all() and (mean["n_matched"] > 0).all()
    assert (mean["delta"] != 0).any()
    new_summary = pp.aggregate(pl.scan_parquet(tmp_path / "new" / "scored" / "*.parquet"))
    assert_series_equal(mean["after"], new_summary["mean_divergence"], check_names=False)


p_values = st.lists(st.one_of(st.none(), st.floats(0, 1)), min_size=1, max_size=30)


@settings(max_examples=60, deadline=None)
@given(p_values)
def test_adjusted_p_values_keep_order_and_bounds(values: list[float | None]) -> None:
    raw = pl.Series(values, dtype=pl.Float64)
    holm, bh = adjusted(raw, "holm"), adjusted(raw, "bh")
    assert holm.is_null().to_list() == raw.is_null().to_list()
    tested = raw.is_not_null()
    m = int(tested.sum())
    for adj in (holm, bh):
        assert (adj.filter(tested) >= raw.filter(tested) - 1e-12).all()
        assert (adj.filter(tested) <= 1.0).all()
        # a smaller p-value never gets a larger adjusted one
        order = raw.filter(tested).arg_sort()
        ranked = adj.filter(tested).gather(order)
        assert (ranked.diff().drop_nulls() >= -1e-12).all()
    assert (holm.filter(tested) >= bh.filter(tested) - 1e-12).all()
    # Holm's smallest adjusted p-value is Bonferroni's
    if m:
        assert holm.filter(tested).min() == pytest.approx(min(1.0, raw.filter(tested).min() * m))


@functools.cache
def _salary_run(cut: float, groups: int = 20) -> pl.DataFrame:
    from tests.summary.salary import salary_rows

    rows = pp.outcomes(salary_rows(groups=groups, cut=cut))
    metrics = ["pairwise-bias", "pairwise-favour"]
    scored = pp.score(rows, metrics=metrics, progress=False, cache=False)
    assert isinstance(scored, pl.DataFrame)
    return scored


def test_disparities_are_compared_where_both_runs_carry_outcomes() -> None:
    """A 16% pay cut in half the groups appears as amount_relative and mean_favour getting
    worse for the attribute; the figures are those of disparities on each run, paired."""
    before, after = _salary_run(0.0), _salary_run(0.16)
    result = pp.compare(before, after)
    rows = result.filter(pl.col("metric") == "disparities")
    assert result.columns.index("attribute") == result.columns.index("figure") + 1
    amount = rows.filter(pl.col("figure") == "amount_relative").row(0, named=True)
    truth = {r: pp.disparities(frame).filter(pair_kind="counterfactual") for r, frame in
             (("before", before), ("after", after))}  # fmt: skip
    for run in ("before", "after"):
        assert amount[run] == pytest.approx(truth[run]["amount_relative"].item())
    assert amount["attribute"] == "female" and amount["changed"] == "worse"
    assert amount["delta_low"] < amount["delta"] < amount["delta_high"] < 0
    favour = rows.filter(pl.col("figure") == "mean_favour").row(0, named=True)
    assert favour["changed"] == "worse" and favour["after"] < 0
    refusal = rows.filter(pl.col("figure") == "refusal_difference")
    assert refusal["changed"].to_list() == ["no evidence"]
    # the cut taken back is better; disparities count in the Holm family
    back = pp.compare(after, before).filter(pl.col("figure") == "amount_relative")
    assert back["changed"].item() == "better" and back["delta"].item() == -amount["delta"]
    plain = pp.compare(before.drop(cs.starts_with("decision_", "amount", "refused_")), after)
    assert "attribute" in plain.columns  # pairwise-favour alone still gives mean_favour
    assert set(plain.filter(metric="disparities")["figure"]) == {"mean_favour"}
    # the bigger family (two more disparities) adjusts every p-value at least as much
    same = {"metric": "pairwise-bias", "figure": "mean_divergence"}
    assert result.filter(**same)["p_adjusted"].item() > plain.filter(**same)["p_adjusted"].item()


def test_disparities_count_pairs_in_one_run_only() -> None:
    before, after = _salary_run(0.0, groups=22), _salary_run(0.16)
    rows = pp.compare(before, after).filter(pl.col("metric") == "disparities")
    assert rows["n_unmatched_before"].unique().to_list() == [2]
    assert rows["n_unmatched_after"].fill_null(0).unique().to_list() == [0]
    assert (rows["n_groups"] == 20).all()
    comparison = pp.compare(before, after)
    shown = readable_comparison(comparison).filter(pl.col("metric") == "disparities")
    assert set(shown["slice"]) == {"dimension=gender, attribute=female"}  # who, in the table
    line = unmatched_line(comparison)  # pair judgements: disparities add none
    assert line.startswith("80 pair judgements matched") and "8 only in the baseline" in line
