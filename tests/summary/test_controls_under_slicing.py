"""Controls under any slicing: every slice of counterfactual pairs draws its noise floor from
the control pairs of the groups it contains, and control pairs never form slices of their own
(a control pair carries the reference's attribute as ``attribute_b`` and ``control`` as
``role_b``, values no counterfactual pair has)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pairwise_polars as pp
from pairwise_polars.cli import EXIT_PASS, main
from pairwise_polars.summary import combine, error_sums, group_sums, merge_sums

GROUPS = 96  # every attribute_b slice has >= 30 groups (a gate's default min_groups)
SLICINGS = (["attribute_b"], ["role_b"], ["attribute_a", "attribute_b"], ["dimension", "role_b"])


def rows(groups: int = GROUPS) -> pl.DataFrame:
    """Per group a male reference, a female and a nonbinary variant and a control (gender), or
    a young reference, an old variant and a control (age)."""
    data = []
    for g in range(groups):
        gender = g % 3 != 0
        cells = (
            [("reference", "male"), ("variant", "female"), ("variant", "nonbinary")]
            if gender
            else [("reference", "young"), ("variant", "old")]
        )
        for i, (role, attribute) in enumerate([*cells, ("control", cells[0][1])]):
            data.append(
                {
                    "group_id": g,
                    "id": 10 * g + i,
                    "role": role,
                    "dimension": "gender" if gender else "age",
                    "attribute": attribute,
                    "input": f"request {g}",
                    "output": f"answer {g} {i}",
                }
            )
    return pl.DataFrame(data)


def scored(seed: int) -> pl.DataFrame:
    """The pairs of :func:`rows` with scores on the rubric drawn from ``seed``."""
    pairs = pp.form_pairs(rows()).with_columns(metric=pl.lit("pairwise-bias"))
    draw = pl.Series(pl.int_range(pairs.height, eager=True).hash(seed) % 5, dtype=pl.Float64)
    return pairs.with_columns(score=draw / 4)


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from(SLICINGS))
def test_every_slice_draws_its_noise_floor_from_the_controls_of_its_groups(seed, by) -> None:
    frame = scored(seed)
    summary = pp.aggregate(frame, by)
    cf = frame.filter(pl.col("pair_kind") == "counterfactual")
    controls = frame.filter(pl.col("pair_kind") == "control")
    # no slice of control pairs alone: every slice is a slice of counterfactual pairs
    assert summary.select(by).sort(by).rows() == cf.select(by).unique().sort(by).rows()
    assert (summary["n_pairs"] > 0).all()
    for row in summary.iter_rows(named=True):
        cells = cf.filter(*[pl.col(c).eq_missing(row[c]) for c in by])
        mine = controls.filter(pl.col("group_id").is_in(cells["group_id"].implode()))
        assert row["n_control"] == mine.height
        assert row["control_mean_divergence"] == pytest.approx(mine["score"].mean())
        assert row["excess_divergence"] == pytest.approx(
            cells["score"].mean() - mine["score"].mean()
        )


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 2**32), st.lists(st.integers(0, 3), min_size=300, max_size=300))
def test_blocks_split_anywhere_merge_to_the_same_sliced_noise_floor(seed, blocks) -> None:
    frame = scored(seed).with_columns(block=pl.Series(blocks[: scored(seed).height]))
    keys = ["metric", "attribute_b"]
    options = {"equivalence_threshold": 0.0, "divergence_threshold": 0.5}
    parts = [p.drop("block").lazy() for _, p in frame.group_by("block", maintain_order=True)]
    sums = merge_sums([group_sums(p, keys, "group_id", **options) for p in parts],
                      [*keys, "group_id"])  # fmt: skip
    errors = merge_sums([error_sums(p, keys) for p in parts], [*keys, "error_kind"])
    merged = combine(sums, keys, errors=errors)
    local = pp.aggregate(frame.drop("block"), ["attribute_b"], **options)
    assert merged.equals(local)


def test_a_gate_by_attribute_passes_with_controls_as_it_does_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.chdir(tmp_path)
    frame = scored(7)
    frame.write_parquet("with.parquet")
    frame.filter(pl.col("pair_kind") == "counterfactual").write_parquet("without.parquet")
    gates = ["--by", "attribute_b", "--max-mean-divergence", "0.9"]
    for name in ("with", "without"):
        assert main(["summarize", f"{name}.parquet", *gates]) == EXIT_PASS, name
        out = capsys.readouterr().out
        assert "attribute_b=male" not in out  # the controls' value is no slice


@pytest.mark.parametrize("by", SLICINGS)
def test_labelled_control_pairs_count_under_any_slicing(by: list[str]) -> None:
    # People who read every pair as the judge did: the corrected excess is the judge's, in
    # slices whose control pairs sit in slice rows of their own too (attribute_b, role_b).
    frame = scored(7).with_columns(label=pl.col("score"), raw_label=pl.col("score") * 4)
    summary = pp.aggregate(frame, by)
    assert summary["excess_divergence"].null_count() == 0
    for row in summary.iter_rows(named=True):
        assert row["excess_divergence_ppi"] == pytest.approx(row["excess_divergence"])
