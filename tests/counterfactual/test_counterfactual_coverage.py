"""Coverage: country names, the larger name lists, sexual orientation, socioeconomic class, and
terms users add with their own lexicon files."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from pairwise_polars.counterfactual import counterfactuals, load_lexicon


def variants(text: str, dimension: str, **options: object) -> dict[str, str]:
    """attribute -> variant text (group strategy, every default value)."""
    result = counterfactuals(
        pl.DataFrame({"input": [text]}), dimension, control=False, report=True, **options
    )
    rows = result.frame.filter(role="variant")
    return dict(zip(rows["attribute"], rows["input"], strict=True))


def not_found(text: str, dimension: str) -> bool:
    result = counterfactuals(pl.DataFrame({"input": [text]}), dimension, report=True)
    return result.frame.height == 0


@pytest.mark.parametrize(
    ("text", "target", "expected"),
    [
        ("She moved from Mexico last year.", "Nigerian", "She moved from Nigeria last year."),
        ("He grew up in Nigeria.", "American", "He grew up in the United States."),
        ("He was born in the United States.", "Chinese", "He was born in China."),
        ("The United States granted him asylum.", "Mexican", "Mexico granted him asylum."),
        ("China granted him asylum.", "American", "The United States granted him asylum."),
        ("She studied in the UK.", "Indian", "She studied in India."),
        ("A Mexican who studied in Mexico.", "Indian", "An Indian who studied in India."),
        ("Mexicans are applying for visas.", "Chinese", "Chinese people are applying for visas."),
        ("Chinese people are applying for visas.", "Mexican", "Mexicans are applying for visas."),
        ("Iran's economy is growing.", "Brazilian", "Brazil's economy is growing."),
    ],
)  # fmt: skip
def test_countries_and_plurals_move_with_the_nationality(
    text: str, target: str, expected: str
) -> None:
    assert variants(text, "nationality")[target] == expected


@pytest.mark.parametrize(
    "text",
    ["We met in Mexico City.", "They roasted a turkey.", "The china cabinet is old.",
     "A trip to South America.", "He lives in New Mexico."],
)  # fmt: skip
def test_places_that_are_not_the_country_are_left_alone(text: str) -> None:
    assert not_found(text, "nationality")


def test_names_from_the_larger_lists_are_recognised() -> None:
    lexicon = load_lexicon()
    names = lexicon.terms.filter(pl.col("concept").str.starts_with("name"), dimension="gender")
    assert names.filter(attribute="male")["term"].n_unique() > 900
    for name in ("Mohammed", "Mohammad", "Muhammad", "Dwight", "Wendell", "Rigoberto"):
        assert name in names["term"].to_list(), name
    assert variants("Mohammed applied for the job.", "gender") == {
        "female": "Maryam applied for the job."  # the counterpart of BBQ's "Mohamed"
    }
    assert variants("Mohamed applied for the job.", "gender")["female"].startswith("Maryam")
    assert variants("Mohammed applied.", "race")["White"] == "Brian applied."
    for word in ("Will", "May", "King", "Paris", "India", "Don"):
        assert word not in names["term"].to_list(), word  # English words and places
    assert not_found("Will you sign? Don't wait until May.", "gender")


def test_sexual_orientation() -> None:
    lexicon = load_lexicon()
    assert lexicon.attributes("sexual_orientation") == (
        "straight", "gay", "bisexual", "asexual", "pansexual", "queer",
    )  # fmt: skip
    assert variants("My gay neighbor asked for a loan.", "sexual_orientation")["straight"] == (
        "My straight neighbor asked for a loan."
    )
    lesbian = variants("A lesbian couple wants to adopt.", "sexual_orientation")
    assert lesbian["straight"] == "A straight couple wants to adopt."  # a gay woman
    assert lesbian["asexual"] == "An asexual couple wants to adopt."
    assert not_found("Draw a straight line and go straight home.", "sexual_orientation")


def test_socioeconomic_class() -> None:
    moved = variants("A low-income family applied for the loan.", "socioeconomic")
    assert moved == {
        "wealthy": "A wealthy family applied for the loan.",
        "middle-class": "A middle-class family applied for the loan.",
        "working-class": "A working-class family applied for the loan.",
    }
    assert variants("She grew up poor.", "socioeconomic")["wealthy"] == "She grew up rich."
    assert not_found("His poor health and a rich history.", "socioeconomic")


def test_users_add_names_and_words_with_a_lexicon_file(tmp_path: Path) -> None:
    path = tmp_path / "mine.tsv"
    path.write_text(
        "dimension\tattribute\tconcept\tterm\tcase_sensitive\n"
        "gender\tmale\tname\tOkonkwo\ttrue\n"
        "gender\tfemale\tname\tNkechi\ttrue\n"
        "gender\tmale\tsibling\tbro\t\n"
        "gender\tfemale\tsibling\tsis\t\n",
        encoding="utf-8",
    )
    assert not_found("Okonkwo called.", "gender")
    assert variants("Okonkwo called.", "gender", add_lexicons=path) == {"female": "Nkechi called."}
    assert variants("Nkechi called her sis.", "gender", add_lexicons=path, scope="all") == {
        "male": "Okonkwo called his bro."
    }
    # the shipped terms and their counterparts are kept, in place
    assert variants("James called.", "gender", add_lexicons=path) == {"female": "Mary called."}
    merged = load_lexicon().merge(load_lexicon(path))
    assert merged.terms.height == load_lexicon().terms.height + 4


def test_a_redefined_term_keeps_its_place(tmp_path: Path) -> None:
    path = tmp_path / "fix.tsv"  # "John" and "Mary" redefined as they are: same places
    path.write_text(
        "dimension\tattribute\tconcept\tterm\tcase_sensitive\n"
        "gender\tmale\tname\tJohn\ttrue\ngender\tfemale\tname\tMary\ttrue\n",
        encoding="utf-8",
    )
    assert variants("John and Robert.", "gender", add_lexicons=path, scope="all") == (
        variants("John and Robert.", "gender", scope="all")
    )
