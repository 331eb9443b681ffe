"""Intersections: counterfactuals crosses two dimensions into one, disparities reports each cell
and the interaction (the cell's effect minus its two main effects) with an interval."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import pairwise_polars as pp


def test_counterfactuals_cross_two_dimensions_into_cells() -> None:
    # no first name: a name the race lexicon lacks would leave the race cells out (issue 29)
    prompts = pl.DataFrame({"input": ["Should we hire the White engineer? He has 5 years."]})
    rows = pp.counterfactuals(prompts, [("gender", "race")], values={"race": ["White", "Black"]})
    assert rows["dimension"].unique().to_list() == ["gender×race"]
    assert rows.select("role", "attribute").rows() == [
        ("reference", "male|White"), ("variant", "male|Black"), ("variant", "female|White"),
        ("variant", "female|Black"), ("control", "male|White"),
    ]  # fmt: skip
    inputs = dict(zip(rows["attribute"], rows["input"], strict=False))
    assert "the Black engineer? She" in inputs["female|Black"]
    assert rows["group_id"].n_unique() == 1  # one group: the cells are compared within it
    with pytest.raises(ValueError, match="strategy='group'"):
        pp.counterfactuals(prompts, [("gender", "race")], strategy="contrastive")
    with pytest.raises(ValueError, match="pair of two different dimensions"):
        pp.counterfactuals(prompts, [("gender", "gender")])


def test_a_cell_that_cannot_be_made_leaves_the_others_and_is_named() -> None:
    """Emily's gender counterpart has no race counterparts: male|Black etc. are left out and
    reported as those cells, but male|White (a gender change only) is kept, and the prompt is
    not reported as one with no variant at all."""
    prompts = pl.DataFrame({"input": ["Should we hire Emily, a White woman? She is great."]})
    report = pp.counterfactuals(
        prompts, [("gender", "race")], values={"race": ["White", "Black"]}, report=True
    )
    rows = report.frame
    assert rows.select("role", "attribute").rows() == [
        ("reference", "female|White"), ("variant", "female|Black"), ("variant", "male|White"),
        ("control", "female|White"),
    ]  # fmt: skip
    skipped = report.skipped.select("attribute", "reason").rows()
    assert [attribute for attribute, _ in skipped] == ["male|Black"]
    assert "is not in the race lexicon" in skipped[0][1]


def test_the_interaction_is_the_cell_minus_its_main_effects_within_groups() -> None:
    rng = np.random.default_rng(5)
    groups = 12
    rates = {"male|White": 0.9, "female|White": 0.7, "male|Black": 0.7, "female|Black": 0.3}
    yes = {cell: rng.random(groups) < p for cell, p in rates.items()}
    rows = [
        (g, "reference" if cell == "male|White" else "variant", cell,
         "Yes, I would approve it." if said[g] else "No, I would not approve it.")
        for cell, said in yes.items() for g in range(groups)
    ]  # fmt: skip
    frame = pl.DataFrame(rows, schema=["group_id", "role", "attribute", "output"], orient="row")
    frame = frame.with_columns(dimension=pl.lit("gender×race"), input=pl.lit("Approve?"))
    d = pp.disparities(frame)
    cell = d.filter(pl.col("attribute") == "female|Black").row(0, named=True)
    y = {c: v.astype(float) for c, v in yes.items()}
    per_group = (
        (y["female|Black"] - y["male|White"])
        - (y["female|White"] - y["male|White"])
        - (y["male|Black"] - y["male|White"])
    )
    assert cell["decision_difference_interaction"] == pytest.approx(per_group.mean())
    half = (
        cell["decision_difference_interaction_high"] - cell["decision_difference_interaction_low"]
    ) / 2
    assert half == pytest.approx(2.2010 * per_group.std(ddof=1) / np.sqrt(groups), rel=1e-3)
    mains = d.filter(pl.col("attribute") != "female|Black")
    assert mains["decision_difference_interaction"].null_count() == mains.height
