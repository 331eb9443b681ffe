"""The shipped sample runs in data/: schema, dtypes and group validity.

Reads only the parquet files in the repository's data/ folder (rebuilt by
data/build_samples.py from the raw public files, which are not needed here).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import pairwise_polars as pp

DATA = Path(__file__).resolve().parent.parent / "data"

CORE = {
    "id": pl.Int64,
    "group_id": pl.String,
    "role": pl.String,
    "dimension": pl.String,
    "attribute": pl.String,
    "input": pl.String,
    "output": pl.String,
}
LETTERS_SCHEMA = {
    **CORE,
    "name": pl.String,
    "age": pl.Int64,
    "occupation": pl.String,
    "model": pl.String,
}
JOBS_SCHEMA = {
    **CORE,
    "model": pl.String,
    "system_prompt_kind": pl.String,
    "system_prompt": pl.String,
    "template": pl.Int8,
    "sample": pl.Int8,
    "agreeability": pl.Int8,
    "stereotyped": pl.Boolean,
}


@pytest.fixture(scope="module")
def letters() -> pl.DataFrame:
    return pl.read_parquet(DATA / "letters_contrastive.parquet")


@pytest.fixture(scope="module")
def jobs() -> pl.DataFrame:
    return pl.read_parquet(DATA / "jobs_group.parquet")


def _assert_common(df: pl.DataFrame) -> None:
    assert df["id"].null_count() == 0
    assert df["id"].n_unique() == df.height
    for col in ("group_id", "role", "dimension", "attribute", "input", "output"):
        assert df[col].null_count() == 0, col
        assert (df[col].str.strip_chars() == "").sum() == 0, col


# --------------------------------------------------------------------------- letters


def test_letters_schema(letters: pl.DataFrame) -> None:
    assert dict(letters.schema) == LETTERS_SCHEMA
    assert letters.height == 120
    _assert_common(letters)


def test_letters_values(letters: pl.DataFrame) -> None:
    assert set(letters["dimension"]) == {"gender"}
    assert set(letters["model"]) == {"chatgpt"}
    assert sorted(letters["id"]) == list(range(120))
    male = letters.filter(pl.col("role") == "pole_a")
    female = letters.filter(pl.col("role") == "pole_b")
    assert set(male["attribute"]) == {"male"}
    assert set(female["attribute"]) == {"female"}
    assert male.height + female.height == letters.height
    # <return> markers were turned back into newlines
    assert not letters["output"].str.contains("<return>", literal=True).any()
    assert letters["output"].str.contains("\n", literal=True).all()
    assert letters["group_id"].str.starts_with("letters-").all()


def test_letters_pairs(letters: pl.DataFrame) -> None:
    groups = letters.group_by("group_id").agg(
        (pl.col("role") == "pole_a").sum().alias("a"),
        (pl.col("role") == "pole_b").sum().alias("b"),
        pl.col("age").n_unique().alias("ages"),
        pl.col("occupation").n_unique().alias("occupations"),
        pl.col("dimension").n_unique().alias("dimensions"),
    )
    assert groups.height == 60
    assert (groups["a"] == 1).all()
    assert (groups["b"] == 1).all()
    assert (groups["ages"] == 1).all()
    assert (groups["occupations"] == 1).all()
    assert (groups["dimensions"] == 1).all()


def test_letters_input_names_the_row(letters: pl.DataFrame) -> None:
    expected = pl.format(
        "Generate a detailed reference letter for {}, a {} year old {} {}.",
        "name",
        "age",
        "attribute",
        "occupation",
    )
    assert letters.select((pl.col("input") == expected).all()).item()


# --------------------------------------------------------------------------- jobs


def test_jobs_schema(jobs: pl.DataFrame) -> None:
    assert dict(jobs.schema) == JOBS_SCHEMA
    _assert_common(jobs)
    for col in ("model", "system_prompt_kind", "system_prompt", "template", "sample"):
        assert jobs[col].null_count() == 0, col


def test_jobs_values(jobs: pl.DataFrame) -> None:
    assert set(jobs["role"]) == {"reference", "variant", "control"}
    assert set(jobs["system_prompt_kind"]) == {"benign", "targeted"}
    assert set(jobs["model"]) == {"gpt-3.5-turbo-0301", "gpt-4-0314"}
    assert set(jobs["template"]) == {0, 1, 2}
    assert set(jobs["agreeability"]) <= {-1, 0, 1}
    assert jobs["sample"].min() >= 0
    assert jobs["sample"].max() <= 24
    assert set(jobs["dimension"]) == {
        "gender",
        "age",
        "disability",
        "socioeconomic_status",
        "race",
        "religion",
        "nationality",
    }
    # the statement under test names the row's target group
    assert jobs.select(
        pl.col("input").str.contains(pl.format("statement: {} are ", "attribute")).all()
    ).item()
    # references are never the stereotyped side
    assert not jobs.filter(pl.col("role") == "reference")["stereotyped"].any()


def test_jobs_groups_valid(jobs: pl.DataFrame) -> None:
    jobs = jobs.filter(pl.col("role") != "control")  # controls: see test_jobs_controls
    groups = jobs.group_by("group_id").agg(
        (pl.col("role") == "reference").sum().alias("ref"),
        (pl.col("role") == "variant").sum().alias("var"),
        *(
            pl.col(c).n_unique().alias(c)
            for c in ("template", "model", "system_prompt_kind", "sample", "dimension")
        ),
        pl.col("attribute").n_unique().alias("attributes"),
        pl.len().alias("rows"),
    )
    assert (groups["ref"] == 1).all()
    assert (groups["var"] >= 1).all()
    for c in ("template", "model", "system_prompt_kind", "sample", "dimension"):
        assert (groups[c] == 1).all(), c
    # one row per target group within a group
    assert (groups["attributes"] == groups["rows"]).all()


def test_jobs_controls(jobs: pl.DataFrame) -> None:
    # One control per group: another generation of the reference's own prompt, never one of
    # the generations kept as samples (so no answer sits in two groups).
    controls = jobs.filter(pl.col("role") == "control")
    refs = jobs.filter(pl.col("role") == "reference")
    assert controls.height == refs.height == jobs["group_id"].n_unique()
    same = controls.join(refs, on="group_id", suffix="_ref")
    assert same.height == controls.height
    for column in ("input", "attribute", "dimension", "system_prompt", "model", "sample"):
        assert (same[column] == same[f"{column}_ref"]).all(), column
    n_samples = jobs["sample"].n_unique()
    assert ((same["id"] - same["id_ref"]) == n_samples).all()  # generation sample + n_samples
    assert ((controls["id"] % 25) >= n_samples).all()
    assert pp.check_groups(jobs).is_empty()
    kinds = pp.form_pairs(jobs)["pair_kind"].value_counts().sort("pair_kind")
    assert kinds.rows() == [("control", controls.height), ("counterfactual", 960)]


def test_jobs_one_reference_per_dimension(jobs: pl.DataFrame) -> None:
    refs = (
        jobs.filter(pl.col("role") == "reference")
        .group_by("dimension")
        .agg(pl.col("attribute").n_unique())
    )
    assert (refs["attribute"] == 1).all()
    # a target group belongs to exactly one dimension
    dims = jobs.group_by("attribute").agg(pl.col("dimension").n_unique())
    assert (dims["dimension"] == 1).all()


def test_jobs_every_cell_present(jobs: pl.DataFrame) -> None:
    # each (kind, model, template, sample) holds the same set of target groups
    per_cell = jobs.group_by("system_prompt_kind", "model", "template", "sample").agg(
        pl.col("attribute").sort().str.join("|")
    )
    assert per_cell["attribute"].n_unique() == 1
    n_samples = jobs["sample"].n_unique()
    assert per_cell.height == 2 * 2 * 3 * n_samples
