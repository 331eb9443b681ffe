"""counterfactuals(): strategies, columns, ids, inputs of every kind, options and errors."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import pairwise_polars as pp
from pairwise_polars._errors import ColumnError, LexiconError, PairwiseWarning
from pairwise_polars.counterfactual import CounterfactualReport, counterfactuals

PROMPTS = pl.DataFrame(
    {
        "input": [
            "He is a white nurse and his shift ends soon.",
            "Ask her about the Asian market.",
            "Describe the weather.",
        ],
        "model": ["m1", "m2", "m3"],
        "temperature": [0.0, 0.5, 1.0],
    }
)
SUBSTITUTIONS = pl.List(
    pl.Struct(
        {
            "source": pl.String,
            "target": pl.String,
            "start": pl.Int64,
            "end": pl.Int64,
            "reason": pl.String,
        }
    )
)


def as_kind(frame: pl.DataFrame, kind: str, tmp_path: Path) -> object:
    if kind == "parquet":
        frame.write_parquet(tmp_path / "prompts.parquet")
        return str(tmp_path / "prompts.parquet")
    return {
        "polars": frame,
        "lazy": frame.lazy(),
        "arrow": frame.to_arrow(),
        "pandas": frame.to_pandas(),
    }[kind]


def run(prompts: object = PROMPTS, *args: object, **options: object) -> CounterfactualReport:
    return counterfactuals(prompts, *args, report=True, **options)  # type: ignore[call-overload]


def test_group_strategy_rows_and_columns() -> None:
    result = run()
    frame = result.frame
    assert frame.columns == [
        "id",
        "group_id",
        "role",
        "dimension",
        "attribute",
        "input",
        "substitutions",
        "model",
        "temperature",
    ]
    assert frame.schema["substitutions"] == SUBSTITUTIONS
    assert frame.schema["group_id"] == pl.String
    assert frame.select("role", "dimension", "attribute", "model").rows() == [
        ("reference", "gender", "male", "m1"),
        ("variant", "gender", "female", "m1"),
        ("control", "gender", "male", "m1"),
        ("reference", "race", "White", "m1"),
        ("variant", "race", "Black", "m1"),
        ("variant", "race", "Asian", "m1"),
        ("variant", "race", "Hispanic", "m1"),
        ("variant", "race", "Arab", "m1"),
        ("control", "race", "White", "m1"),
        ("reference", "gender", "female", "m2"),
        ("variant", "gender", "male", "m2"),
        ("control", "gender", "female", "m2"),
        ("reference", "race", "Asian", "m2"),
        ("variant", "race", "White", "m2"),
        ("variant", "race", "Black", "m2"),
        ("variant", "race", "Hispanic", "m2"),
        ("variant", "race", "Arab", "m2"),
        ("control", "race", "Asian", "m2"),
    ]
    controls = frame.filter(role="control")
    references = frame.filter(role="reference")
    assert controls.select("group_id", "attribute", "input", "substitutions").equals(
        references.select("group_id", "attribute", "input", "substitutions")
    )  # a copy of its group's reference, with its own id
    assert frame["id"].n_unique() == frame.height
    assert controls["id"][0] == f"{controls['group_id'][0]}:control:male"
    assert frame.filter(attribute="Asian", model="m1")["input"][0] == (
        "He is an Asian nurse and his shift ends soon."
    )
    assert result.skipped.select("row", "dimension", "reason").rows() == [
        (2, "gender", "no gender term found"),
        (2, "race", "no race term found"),
    ]


def test_contrastive_strategy_with_chosen_poles() -> None:
    frame = run(strategy="contrastive", poles={"race": ("white", "asian")}).frame
    race = frame.filter(dimension="race")
    assert race.select("role", "attribute").rows() == [
        ("pole_a", "White"),
        ("pole_b", "Asian"),
        ("control", "White"),  # a copy of pole_a
        ("pole_a", "White"),
        ("pole_b", "Asian"),
        ("control", "White"),
    ]
    assert race.filter(role="control")["input"].equals(race.filter(role="pole_a")["input"])
    race = race.filter(pl.col("role") != "control")
    assert race["input"].to_list() == [
        "He is a white nurse and his shift ends soon.",
        "He is an Asian nurse and his shift ends soon.",
        "Ask her about the White market.",
        "Ask her about the Asian market.",
    ]
    assert race.group_by("group_id").len()["len"].to_list() == [2, 2]


def test_control_false_leaves_the_control_rows_out() -> None:
    for strategy in ("group", "contrastive"):
        frame = run(strategy=strategy, control=False).frame
        assert "control" not in frame["role"].to_list()
        assert frame.height == run(strategy=strategy).frame.height - 4  # one per group


def test_values_restrict_the_group_variants() -> None:
    frame = run(dimensions="race", values={"race": ["Black"]}, control=False).frame
    assert frame.select("role", "attribute").rows() == [
        ("reference", "White"),
        ("variant", "Black"),
        ("reference", "Asian"),
        ("variant", "Black"),
    ]


def test_group_ids_are_stable_unique_and_depend_on_strategy(tmp_path: Path) -> None:
    first, again = run().frame, run(PROMPTS.lazy()).frame
    assert_frame_equal(first, again)
    groups = first.select("group_id", "model", "dimension").unique()
    assert groups["group_id"].n_unique() == groups.height == 4
    contrastive = run(strategy="contrastive").frame
    assert set(contrastive["group_id"]).isdisjoint(first["group_id"])
    shuffled = PROMPTS.with_columns(pid=pl.Series(["a", "b", "c"])).reverse()
    by_id = run(shuffled, id_column="pid").frame
    assert (
        run(shuffled.reverse(), id_column="pid")
        .frame.sort("group_id", "role", "attribute")["group_id"]
        .to_list()
        == by_id.sort("group_id", "role", "attribute")["group_id"].to_list()
    )


@pytest.mark.parametrize("kind", ["polars", "lazy", "arrow", "pandas", "parquet"])
def test_every_input_kind_gives_the_same_rows(kind: str, tmp_path: Path) -> None:
    assert_frame_equal(run(as_kind(PROMPTS, kind, tmp_path)).frame, run().frame)


def test_another_text_column_keeps_the_original() -> None:
    prompts = PROMPTS.rename({"input": "prompt"})
    frame = run(prompts, "gender", text="prompt", control=False).frame
    assert frame.columns[:7] == [
        "id",
        "group_id",
        "role",
        "dimension",
        "attribute",
        "input",
        "substitutions",
    ]
    assert frame["prompt"].to_list() == [PROMPTS["input"][0]] * 2 + [PROMPTS["input"][1]] * 2
    assert frame["input"][1] == "She is a white nurse and her shift ends soon."


def test_the_callers_frame_is_not_modified() -> None:
    before = PROMPTS.clone()
    run()
    assert_frame_equal(PROMPTS, before)


def test_skipped_prompts_warn_unless_reported() -> None:
    with pytest.warns(PairwiseWarning, match=r"report=True"):
        frame = counterfactuals(PROMPTS, "gender")
    assert frame.height == 6  # two prompts: reference, variant, control
    assert isinstance(counterfactuals(PROMPTS.head(2), "gender"), pl.DataFrame)  # no warning


def test_null_prompt_is_reported() -> None:
    prompts = pl.DataFrame({"input": [None, "he ran"]}, schema={"input": pl.String})
    result = run(prompts, "gender", control=False)
    assert result.skipped.select("row", "reason").rows() == [(0, "the prompt is null")]
    assert result.frame["input"].to_list() == ["he ran", "she ran"]


def test_variant_the_lexicon_cannot_make_is_reported() -> None:
    result = run(pl.DataFrame({"input": ["Jamal is here."]}), "race", neutral_reference=True)
    assert result.frame.height == 0  # a name has no neutral form in the race lexicon
    assert result.skipped["reason"][0].startswith("no neutral form of 'Jamal'")


def test_forms_pairs_end_to_end() -> None:
    from pairwise_polars import form_pairs

    frame = counterfactuals(PROMPTS.head(2), "gender").with_columns(output=pl.lit("ok"))
    pairs = form_pairs(frame)
    assert pairs.height == 4  # the variant and the control row of each group, paired with its
    # reference: one counterfactual pair and one control pair per group
    assert sorted(pairs.select("pair_kind", "role_b", "attribute_a", "attribute_b").rows()) == [
        ("control", "control", "female", "female"),
        ("control", "control", "male", "male"),
        ("counterfactual", "variant", "female", "male"),
        ("counterfactual", "variant", "male", "female"),
    ]
    control = pairs.filter(pl.col("pair_kind") == "control")
    assert (control["input_a"] == control["input_b"]).all()  # the same request, asked again
    assert pairs["id_b"].to_list() == frame.filter(pl.col("role") != "reference")["id"].to_list()
    contrastive = counterfactuals(PROMPTS.head(2), "gender", strategy="contrastive")
    pairs = form_pairs(contrastive.with_columns(output=pl.lit("ok")), "contrastive")
    # each group: pole_a vs pole_b, and pole_a vs its control (a copy of pole_a's input)
    assert (
        pairs.select("role_a", "role_b", "pair_kind").rows()
        == [
            ("pole_a", "pole_b", "counterfactual"),
            ("pole_a", "control", "control"),
        ]
        * 2
    )
    assert pp.check_groups(contrastive.with_columns(output=pl.lit("ok")), "contrastive").is_empty()


def test_user_lexicon_file_adds_a_dimension(tmp_path: Path) -> None:
    path = tmp_path / "caste.tsv"
    path.write_text("attribute\tconcept\tterm\nBrahmin\tgroup\tBrahmin\nDalit\tgroup\tDalit\n")
    frame = run(
        pl.DataFrame({"input": ["A Brahmin priest."]}), "caste", lexicons=path, control=False
    ).frame
    assert frame["input"].to_list() == ["A Brahmin priest.", "A Dalit priest."]


def test_user_lexicon_mapping_replaces_a_dimension() -> None:
    own = {"gender": {"concepts": {"person": {"male": ["gent"], "female": ["lady"]}}}}
    result = run(
        pl.DataFrame({"input": ["The gent and he."]}), "gender", lexicons=own, control=False
    )
    assert result.frame["input"].to_list() == ["The gent and he.", "The lady and he."]


def test_placeholder_errors_name_the_row_and_the_fix() -> None:
    prompts = pl.DataFrame({"input": ["Hi {they}.", "A {group} and {bogus}."]})
    with pytest.raises(
        LexiconError,
        match=r"row 1: \{group\} is in several dimensions "
        r"\(gender, race\); write \{gender:group\}",
    ):
        run(prompts, placeholders=True)
    with pytest.raises(LexiconError, match=r"row 1: unknown placeholder \{bogus\}"):
        run(prompts, "race", placeholders=True)


def test_braces_are_plain_text_without_placeholders() -> None:
    frame = run(pl.DataFrame({"input": ['{"who": "he"}']}), "gender", control=False).frame
    assert frame["input"].to_list() == ['{"who": "he"}', '{"who": "she"}']


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda: run(PROMPTS, text="prompt"),
            ColumnError,
            r"no column 'prompt'; they have \['input', 'model', 'temperature'\]",
        ),
        (lambda: run(PROMPTS, text="temperature"), ColumnError, r"expected a string column"),
        (
            lambda: run(PROMPTS.with_columns(role=pl.lit("x"))),
            ColumnError,
            r"already have column\(s\) \['role'\]",
        ),
        (
            lambda: run(PROMPTS.with_columns(id=pl.lit(1))),
            ColumnError,
            r"already have column\(s\) \['id'\].*\{'id': 'my_id'\}\), and pass id_column='my_id'",
        ),
        (
            lambda: run(PROMPTS.with_columns(k=pl.lit(1)), id_column="k"),
            ColumnError,
            r"must identify each prompt",
        ),
        (lambda: run(PROMPTS, "caste"), LexiconError, r"Unknown dimension\(s\) \['caste'\]"),
        (
            lambda: run(PROMPTS, strategy="contrastive", poles={"race": ("White", "Martian")}),
            LexiconError,
            r"unknown \['Martian'\].*'White', 'Black'",
        ),
        (lambda: run(PROMPTS, strategy="pairs"), ValueError, r"'group' or 'contrastive'"),
        (
            lambda: run(PROMPTS, values={"gendr": ["male"]}),
            LexiconError,
            r"values names unknown dimension\(s\) \['gendr'\]",
        ),
        (lambda: run(PROMPTS, ()), ValueError, r"at least one dimension"),
    ],
)
def test_errors(call: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call()  # type: ignore[operator]
