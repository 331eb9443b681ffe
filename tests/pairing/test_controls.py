"""Control rows: a second answer to the reference's (or a poles[0] row's) input pairs with that
row as a control pair; every other pair is counterfactual."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pairwise_polars as pp


def groups(shape: list[tuple[int, int]], control: str = "control") -> pl.DataFrame:
    """Per group: one reference, ``n`` variants (the group's dimension on every row) and
    ``c`` control rows."""
    rows = []
    for g, (n, c) in enumerate(shape):
        dim = ("gender", "race")[g % 2]
        roles = ["reference"] + ["variant"] * n + [control] * c
        rows += [
            {
                "group_id": f"g{g}",
                "role": role,
                "dimension": dim,
                "input": f"prompt {g}" if role != "variant" else f"prompt {g} v{i}",
                "output": f"answer {g}.{i}",
            }
            for i, role in enumerate(roles)
        ]
    return pl.DataFrame(rows)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(0, 3)), min_size=1, max_size=10))
def test_group_control_pairs_counted_and_kinded(shape: list[tuple[int, int]]) -> None:
    pairs = pp.form_pairs(groups(shape))
    kinds = pairs["pair_kind"]
    assert pairs.height == sum(n + c for n, c in shape)
    assert (kinds == "counterfactual").sum() == sum(n for n, _ in shape)
    assert (kinds == "control").sum() == sum(c for _, c in shape)
    assert set(kinds) <= {"counterfactual", "control"}
    control = pairs.filter(pl.col("pair_kind") == "control")
    assert (control["role_a"] == "reference").all()
    assert (control["role_b"] == "control").all()
    # the same input on both sides: a re-ask, not a counterfactual
    assert (control["input_a"] == control["input_b"]).all()
    # without control rows everything is counterfactual and the pairs are unchanged
    plain = pp.form_pairs(groups([(n, 0) for n, _ in shape]))
    assert set(plain["pair_kind"]) == {"counterfactual"}
    assert plain.height == sum(n for n, _ in shape)


def test_control_pair_carries_the_groups_dimension() -> None:
    data = groups([(2, 1), (1, 1)])
    # A control row without a dimension of its own still lands in its group's slice.
    data = data.with_columns(
        dimension=pl.when(pl.col("role") == "control").then(None).otherwise(pl.col("dimension"))
    )
    pairs = pp.form_pairs(data).filter(pl.col("pair_kind") == "control")
    assert pairs.select("group_id", "dimension").rows() == [("g0", "gender"), ("g1", "race")]


def test_contrastive_control_pairs_with_the_first_pole() -> None:
    data = pl.DataFrame(
        {
            "group_id": [1, 1, 1, 1],
            "role": ["pole_a", "pole_b", "control", "control"],
            "dimension": ["gender", "gender", None, "gender"],
            "input": ["He asked.", "She asked.", "He asked.", "He asked."],
            "output": ["a", "b", "a2", "a3"],
        }
    )
    pairs = pp.form_pairs(data, "contrastive")
    assert pairs.select("role_a", "role_b", "pair_kind", "dimension").rows() == [
        ("pole_a", "pole_b", "counterfactual", "gender"),
        ("pole_a", "control", "control", "gender"),
        ("pole_a", "control", "control", "gender"),
    ]
    assert pp.check_groups(data, "contrastive").is_empty()  # two controls are fine


def test_a_custom_control_role_and_keys_only() -> None:
    data = groups([(1, 1)], control="re-ask")
    default = pp.form_pairs(data)  # "re-ask" is just another variant by default
    assert set(default["pair_kind"]) == {"counterfactual"}
    pairs = pp.form_pairs(data, control="re-ask")
    assert pairs["pair_kind"].to_list() == ["counterfactual", "control"]
    keys = pp.form_pairs(data.drop("input", "output"), control="re-ask", keys_only=True)
    assert keys.select("pair_id", "pair_kind").equals(pairs.select("pair_id", "pair_kind"))
    lazy = pp.form_pairs(data.lazy(), control="re-ask").collect()
    assert lazy.sort("pair_id").equals(pairs.sort("pair_id"))


def test_control_without_reference_or_pole_is_a_problem() -> None:
    data = pl.DataFrame(
        {
            "group_id": [1, 1, 2, 2, 3, 3],
            "role": ["control", "variant", "reference", "control", "reference", "variant"],
            "dimension": "gender",
            "input": "q",
            "output": "x",
        }
    )
    assert pp.check_groups(data).rows() == [
        (
            1,
            "control_without_reference",
            2,
            "1 'control' row(s) and no 'reference' row: a control row is a second answer to "
            "the reference's input and pairs with the reference; add the reference or drop "
            "the control rows",
        ),
        (1, "no_reference", 2, "roles seen: 'control', 'variant'"),
        # a reference and its control but nothing to compare: no counterfactual pair
        (2, "no_variants", 2, None),
    ]
    with pytest.raises(pp.InvalidGroupsError, match="control_without_reference: 1 group"):
        pp.form_pairs(data)
    with pytest.warns(pp.PairwiseWarning, match="Skipped 2 of 3 groups"):
        kept = pp.form_pairs(data, on_invalid="skip")
    assert kept["group_id"].to_list() == [3]

    poles = pl.DataFrame(
        {
            "group_id": [1, 1, 2, 2, 2],
            "role": ["pole_b", "control", "pole_a", "pole_b", "control"],
            "dimension": "gender",
            "input": "q",
            "output": "x",
        }
    )
    problems = pp.check_groups(poles, "contrastive")
    assert problems.select("group_id", "problem").rows() == [
        (1, "control_without_pole"),
        (1, "missing_pole"),
    ]
    assert "no 'pole_a' row" in problems["detail"][0]


def test_a_control_role_that_is_a_reference_or_pole_is_refused() -> None:
    data = groups([(1, 1)])
    with pytest.raises(pp.OptionError, match="control='reference' is also the reference role"):
        pp.form_pairs(data, control="reference")
    with pytest.raises(pp.OptionError, match="is also a pole"):
        pp.check_groups(data, "contrastive", control="pole_b")


def test_a_typo_of_the_control_role_is_unknown_not_a_variant() -> None:
    data = groups([(1, 0)]).vstack(
        pl.DataFrame(
            {
                "group_id": ["g0"],
                "role": ["Control"],
                "dimension": ["gender"],
                "input": ["prompt 0"],
                "output": ["again"],
            }
        )
    )
    assert pp.check_groups(data).rows() == [
        ("g0", "unknown_role", 1, "role 'Control': did you mean 'control'?")
    ]
