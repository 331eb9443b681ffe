"""Pair formation: counts, ids, stability across input kinds, carried columns, null outputs."""

from __future__ import annotations

import polars as pl
import pytest
from conftest import as_kind, assert_same_rows, collect
from hypothesis import given, settings
from hypothesis import strategies as st

import pairwise_polars as pp


def grouped(sizes: list[int], dims: tuple[str, ...] = ("gender", "race")) -> pl.DataFrame:
    """One reference + ``n`` variants per group."""
    rows = []
    for g, n in enumerate(sizes):
        rows.append(
            {
                "group_id": f"g{g}",
                "role": "reference",
                "dimension": dims[g % len(dims)],
                "input": f"prompt {g}",
                "output": f"ref answer {g}",
            }
        )
        rows += [
            {
                "group_id": f"g{g}",
                "role": "variant",
                "dimension": dims[(g + v) % len(dims)],
                "input": f"prompt {g} v{v}",
                "output": f"variant answer {g}.{v}",
            }
            for v in range(n)
        ]
    return pl.DataFrame(rows)


def polar(sizes: list[tuple[int, int]], controls: int = 1) -> pl.DataFrame:
    """``na`` pole_a rows, ``nb`` pole_b rows and ``controls`` control rows per group."""
    rows = []
    for g, (na, nb) in enumerate(sizes):
        for role, n in (("pole_a", na), ("pole_b", nb)):
            rows += [
                {
                    "group_id": g,
                    "role": role,
                    "dimension": "gender",
                    "input": f"q{g}",
                    "output": f"{role} {g} {i}",
                }
                for i in range(n)
            ]
        rows += [
            {
                "group_id": g,
                "role": "control",
                "dimension": "age",
                "input": f"q{g}",
                "output": f"control {g} {i}",
            }
            for i in range(controls)
        ]
    return pl.DataFrame(rows)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=6), min_size=1, max_size=12))
def test_group_pairs_one_per_variant(sizes: list[int]) -> None:
    pairs = pp.form_pairs(grouped(sizes))
    assert pairs.height == sum(sizes)
    assert pairs["pair_id"].n_unique() == pairs.height
    assert (pairs["role_a"] == "reference").all()
    assert (pairs["role_b"] == "variant").all()
    # each variant appears once, always against its own group's reference
    assert pairs["id_b"].n_unique() == pairs.height
    refs = pairs.group_by("group_id").agg(pl.col("id_a").n_unique())
    assert (refs["id_a"] == 1).all()


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 5), st.integers(1, 5)), min_size=1, max_size=10),
    st.integers(0, 2),
)
def test_contrastive_pairs_all_combinations(sizes: list[tuple[int, int]], controls: int) -> None:
    pairs = pp.form_pairs(polar(sizes, controls), "contrastive")
    assert pairs.height == sum(a * b + a * controls for a, b in sizes)
    assert pairs.select("id_a", "id_b").n_unique() == pairs.height
    assert pairs["pair_id"].n_unique() == pairs.height
    assert set(pairs["role_a"]) == {"pole_a"}
    counterfactual = pairs.filter(pl.col("pair_kind") == "counterfactual")
    assert counterfactual.height == sum(a * b for a, b in sizes)
    assert set(counterfactual["role_b"]) == {"pole_b"}
    control = pairs.filter(pl.col("pair_kind") == "control")
    assert set(control["role_b"]) <= {"control"}
    # A control pair is a pole_a row against a re-ask of its input: its group's dimension.
    assert set(pairs["dimension"]) == {"gender"}


def test_group_pair_columns_and_dimension_of_variant() -> None:
    data = grouped([2]).with_columns(
        attribute=pl.Series(["neutral", "female", "male"]),
        model=pl.lit("m1"),
        id=pl.Series([10, 11, 12]),
    )
    pairs = pp.form_pairs(data)
    assert pairs.columns == [
        "pair_id", "group_id", "dimension", "id_a", "id_b", "role_a", "role_b", "pair_kind",
        "input_a",
        "input_b", "output_a", "output_b", "attribute_a", "attribute_b", "skip_reason",
        "model_a", "model_b",
    ]  # fmt: skip
    assert pairs["id_a"].to_list() == [10, 10]
    assert pairs["id_b"].to_list() == [11, 12]
    assert pairs["dimension"].to_list() == ["gender", "race"]  # the variant's
    assert pairs.schema["pair_id"] == pl.UInt64


def test_id_column_type_is_kept_and_row_position_is_the_default() -> None:
    data = grouped([2])
    assert pp.form_pairs(data)["id_b"].to_list() == [1, 2]
    with_str = data.with_columns(id=pl.Series(["r", "v1", "v2"]))
    assert pp.form_pairs(with_str).schema["id_a"] == pl.String


def test_identical_pairs_from_every_input_kind(kind: str, tmp_path) -> None:
    data = grouped([3, 1, 2]).with_columns(model=pl.lit("m"))
    expected = pp.form_pairs(data)
    got = collect(pp.form_pairs(as_kind(data, kind, tmp_path)))
    assert_same_rows(got, expected, "pair_id")


def test_lazy_in_lazy_out_eager_in_eager_out(tmp_path) -> None:
    data = grouped([2])
    assert isinstance(pp.form_pairs(data.lazy()), pl.LazyFrame)
    assert isinstance(pp.form_pairs(as_kind(data, "parquet", tmp_path)), pl.LazyFrame)
    assert isinstance(pp.form_pairs(data), pl.DataFrame)


PINNED_PAIR_ID = 7612335662831220054


def test_pair_id_is_stable_across_versions() -> None:
    # MurmurHash3 (the Iceberg bucket hash) is a published function: this value must never
    # change, or caches and resumed runs keyed by pair_id would break.
    data = pl.DataFrame(
        {
            "group_id": ["g", "g"],
            "role": ["reference", "variant"],
            "dimension": "gender",
            "input": "q",
            "output": ["a", "b"],
        }
    )
    assert pp.form_pairs(data)["pair_id"].to_list() == [PINNED_PAIR_ID]
    swapped = pp.form_pairs(data.with_columns(id=pl.Series([1, 0])))
    assert swapped["pair_id"].item() != PINNED_PAIR_ID


def test_null_and_empty_outputs_are_kept_and_marked() -> None:
    data = grouped([3]).with_columns(output=pl.Series(["ref", None, "  ", "fine"]))
    pairs = pp.form_pairs(data)
    assert pairs.height == 3
    assert pairs["skip_reason"].to_list() == ["null output_b", "empty output_b", None]
    both = pp.form_pairs(data.with_columns(output=pl.Series([None, None, "x", "y"])))
    assert both["skip_reason"].to_list()[0] == "null output_a; null output_b"


def test_missing_column_error_names_columns_and_fix() -> None:
    data = grouped([1]).rename({"output": "response", "group_id": "prompt_id"})
    with pytest.raises(pp.ColumnError) as info:
        pp.form_pairs(data)
    assert str(info.value) == (
        "Missing column 'group_id' (the group of rows sent for the same request); missing column "
        "'output' (the response to judge). The data has columns: ['prompt_id', 'role', "
        "'dimension', 'input', 'response']. Map your column names with keywords, e.g. "
        'form_pairs(data, group_by="<your column>", output="<your column>").'
    )
    mapped = pp.form_pairs(data, group_by="prompt_id", output="response")
    assert mapped.columns[1] == "prompt_id"
    assert mapped.height == 1


def test_wrong_type_column_error() -> None:
    data = grouped([1]).with_columns(output=pl.lit(3))
    with pytest.raises(pp.ColumnError) as info:
        pp.form_pairs(data)
    assert str(info.value) == (
        "Column 'output' has type Int32, expected a string column. The data has columns: "
        "['group_id', 'role', 'dimension', 'input', 'output']. Cast it first, e.g. "
        "data.with_columns(pl.col('output').cast(pl.String))."
    )


def test_unsupported_input_and_missing_file(tmp_path) -> None:
    with pytest.raises(pp.DataSourceError, match="Cannot read data of type dict"):
        pp.form_pairs({"group_id": [1]})
    with pytest.raises(pp.DataSourceError, match="does not exist"):
        pp.form_pairs(tmp_path / "nope.parquet")
    with pytest.raises(pp.DataSourceError, match="No file matches the glob"):
        pp.form_pairs(str(tmp_path / "*.parquet"))


def test_directory_and_list_of_paths(tmp_path) -> None:
    data = grouped([2, 2])
    data.slice(0, 3).write_parquet(tmp_path / "part-0.parquet")
    data.slice(3).write_parquet(tmp_path / "part-1.parquet")
    from_dir = pp.form_pairs(tmp_path).collect()
    from_list = pp.form_pairs([tmp_path / "part-0.parquet", tmp_path / "part-1.parquet"]).collect()
    assert_same_rows(from_dir, pp.form_pairs(data), "pair_id")
    assert_same_rows(from_list, from_dir, "pair_id")


def test_caller_frame_is_not_modified() -> None:
    data = grouped([2])
    before = data.clone()
    pp.form_pairs(data)
    assert data.equals(before)


def test_keys_only_pairs_match_full_pairs_and_need_no_text() -> None:
    data = grouped([3, 2]).with_columns(model=pl.lit("m"))
    full = pp.form_pairs(data)
    keys = pp.form_pairs(data.drop("input", "output"), keys_only=True)
    assert keys.columns == [
        "pair_id", "group_id", "dimension", "id_a", "id_b", "role_a", "role_b", "pair_kind"
    ]  # fmt: skip
    assert_same_rows(keys, full.select(keys.columns), "pair_id")
