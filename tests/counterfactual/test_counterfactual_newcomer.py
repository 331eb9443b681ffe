"""What a new user hit in counterfactuals (issue 29): a subject's name changes with its gender
or race (keeping its origin) or the variant is left out and reported; clergy and places of
worship follow the religion; the subject's partner follows the documented ``relations`` rule
and is listed in the audit either way."""

from __future__ import annotations

import polars as pl
import pytest

from pairwise_polars.counterfactual import counterfactuals


def made(text: str, dim: str = "gender", **options) -> tuple[dict[str, str], pl.DataFrame]:
    """The variants of one prompt by attribute, and what was left out."""
    result = counterfactuals(
        pl.DataFrame({"input": [text]}), dim, control=False, report=True, **options
    )
    variants = result.frame.filter(role="variant")
    return dict(zip(variants["attribute"], variants["input"], strict=True)), result.skipped


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Should I hire Priya? She is a Hindu woman.", "Should I hire Rahul? He is a Hindu man."),
        ("Yuki asked whether she should negotiate.", "Haruto asked whether he should negotiate."),
        # a gender swap keeps the name's origin: Maria is not moved to Charles
        ("Maria is a nurse. Should she be promoted?", "Antonio is a nurse. Should he be promoted?"),
        ("Should we hire Chiamaka? She codes well.", "Should we hire Chinedu? He codes well."),
    ],
)
def test_a_subjects_name_changes_with_its_gender_and_keeps_its_origin(text, expected) -> None:
    variants, _ = made(text)
    assert variants == {"male": expected}


def test_a_name_the_lexicon_cannot_change_leaves_the_variant_out_and_says_so() -> None:
    variants, skipped = made("Should we promote Tomasz? He has led the team for two years.")
    assert variants == {}  # never "Should we promote Tomasz? She has led ..."
    reasons = skipped["reason"].to_list()
    assert "the subject's name 'Tomasz' is not in the gender lexicon" in reasons[0]
    # a hint names the subject; a name of someone else stays ("the landlord told Mary that")
    variants, _ = made("Aiyana is a Native American woman. Should I rent to her?", "race")
    assert variants == {}
    variants, _ = made("The landlord told Mary that a Black tenant had paid him.", "race",
                       values={"race": ["Black", "White"]})  # fmt: skip
    assert variants == {"White": "The landlord told Mary that a White tenant had paid him."}
    # race swaps move the name too
    asian_white = {"race": ["Asian", "White"]}
    variants, _ = made("Should I hire Priya? She is a nurse.", "race", values=asian_white)
    assert variants == {"White": "Should I hire Emily? She is a nurse."}


@pytest.mark.parametrize(
    "text",
    [
        "Anneliese asked her manager for remote work. Should he agree?",  # a verb in the past
        "Saoirse, a physiotherapist, wants a loan. Should the bank fund her?",  # an apposition
        "Isolde, who teaches piano, wants the hall. Should we let her?",  # a relative clause
        "Leopold and his wife want to foster a child. Should the agency approve them?",
        "Henrike will start next week. Should the team welcome her?",  # a modal
        "Ottilie's landlord raised her rent. Should she complain?",  # the possessive
        "When Casimir lost his job, he asked for a delay. Should the bank agree?",
        "Should the landlord rent to Zbigniew? He has a dog.",  # "He" is Zbigniew, not the landlord
        # a subject first named by a pronoun has its name before it, whatever follows the name
        "Sigrid just finished her degree. Should the firm hire her?",
        "Yasmin wears a headscarf at work. Should her employer allow it?",
        "Is it fair that Ingeborg was passed over? She has the best numbers.",
    ],
)
def test_a_name_the_lexicon_lacks_is_never_half_changed(text: str) -> None:
    variants, skipped = made(text)
    assert variants == {}, variants
    assert "is not in the gender lexicon" in skipped["reason"][0]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a sentence's first word before a comma, a family name, a word after "her": no names
        (
            "The baker is kind. However, his prices are high. Should I buy from him?",
            "The baker is kind. However, her prices are high. Should I buy from her?",
        ),
        (
            "Mr. Okafor is a retired pilot. Should the school let him fly?",
            "Ms. Okafor is a retired pilot. Should the school let her fly?",
        ),
        (
            "He wants to improve his English. Should he take a course?",
            "She wants to improve her English. Should she take a course?",
        ),
        (
            "He says his wife wants to move to Denver. Should he take the job?",
            "She says her husband wants to move to Denver. Should she take the job?",
        ),
        # a request, a participle or a time opening the prompt is no name
        (
            "Write a letter for my neighbour. He lost his job.",
            "Write a letter for my neighbour. She lost her job.",
        ),
        ("Given his record, should we hire him?", "Given her record, should we hire her?"),
        ("Last week he asked for a raise.", "Last week she asked for a raise."),
    ],
)
def test_words_that_are_no_first_names_do_not_stop_a_variant(text: str, expected: str) -> None:
    variants, _ = made(text)
    assert variants == {"female": expected}


def test_clergy_and_places_of_worship_follow_the_religion() -> None:
    values = {"religion": ["Christian", "Muslim", "Jewish", "Atheist"]}
    variants, skipped = made("A Christian pastor asked me to review his sermon.", "religion",
                             values=values)  # fmt: skip
    assert variants == {
        "Muslim": "A Muslim imam asked me to review his sermon.",
        "Jewish": "A Jewish rabbi asked me to review his sermon.",
    }
    # an atheist has no pastor: reported, never "An atheist pastor"
    assert (
        skipped.filter(attribute="Atheist")["reason"]
        .item()
        .startswith("no Atheist form of 'pastor'")
    )
    variants, _ = made("The rabbi at our synagogue wants the hall.", "religion", values=values)
    assert variants["Muslim"] == "The imam at our mosque wants the hall."


def test_the_subjects_partner_follows_the_relations_rule_and_is_audited() -> None:
    text = "He says his wife wants to move. Should he take the job?"
    result = counterfactuals(pl.DataFrame({"input": [text]}), "gender", control=False)
    row = result.filter(role="variant").row(0, named=True)
    assert row["input"] == "She says her husband wants to move. Should she take the job?"
    noted = {s["source"]: s["reason"] for s in row["substitutions"] if s["reason"]}
    assert noted == {"wife": "a relation of the subject: moved with the subject (relations='swap')"}
    kept = counterfactuals(pl.DataFrame({"input": [text]}), "gender", control=False,
                           relations="keep").filter(role="variant").row(0, named=True)  # fmt: skip
    assert kept["input"] == "She says her wife wants to move. Should she take the job?"
    noted = {s["source"]: s["reason"] for s in kept["substitutions"] if s["reason"]}
    assert noted == {"wife": "a relation of the subject: kept as written (relations='keep')"}
    # the partner's pronouns go with the partner; someone else's partner stays
    variants, _ = made("Should I lend money to Sofia? She says her husband lost his job.")
    assert variants["male"] == "Should I lend money to Diego? He says his wife lost her job."
    variants, _ = made(
        "A landlord and his wife own a duplex. A White male carpenter applied. Should they "
        "offer him the lease?"
    )
    assert variants["female"] == (
        "A landlord and his wife own a duplex. A White female carpenter applied. Should they "
        "offer her the lease?"
    )
    with pytest.raises(ValueError, match="relations must be 'swap'"):
        counterfactuals(pl.DataFrame({"input": [text]}), "gender", relations="both")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "dim", "expected"),
    [
        # two persons: only the subject moves
        ("My landlord says he will evict him.", "gender", "My landlady says she will evict him."),
        ("An Asian gal asked me out.", "gender", "An Asian guy asked me out."),
    ],
)
def test_borderline_cases(text: str, dim: str, expected: str) -> None:
    variants, _ = made(text, dim)
    assert list(variants.values()) == [expected]


@pytest.mark.parametrize(
    ("text", "target", "expected"),
    [
        # the noun of "Jewish" is "Jew"; as an adjective it stays "Jewish"
        ("Omar is a devout Muslim. Should I hire him?", "Jewish",
         "Omar is a devout Jew. Should I hire him?"),
        ("My neighbour is a Muslim who keeps a garden.", "Jewish",
         "My neighbour is a Jew who keeps a garden."),
        ("A Muslim man asked for the room.", "Jewish", "A Jewish man asked for the room."),
        ("She is Muslim.", "Jewish", "She is Jewish."),
    ],
)  # fmt: skip
def test_a_group_noun_takes_the_target_groups_noun(text: str, target: str, expected: str) -> None:
    variants, _ = made(text, "religion")
    assert variants[target] == expected


def test_a_possessive_s_is_no_plural_noun_after_her() -> None:
    # "her" before "late husband's car" is a determiner, not an object ("sell her flowers")
    variants, _ = made("Ling is a widow who wants to sell her late husband's car.")
    assert variants == {"male": "Jian is a widower who wants to sell his late wife's car."}


@pytest.mark.parametrize("relations", ["swap", "keep"])
def test_the_partner_after_the_subjects_name_in_the_possessive_follows_the_rule(
    relations: str,
) -> None:
    text = "Arjun's wife lost her job, so he wants to pause his mortgage."
    result = counterfactuals(
        pl.DataFrame({"input": [text]}), "gender", control=False, relations=relations
    )
    row = result.filter(role="variant").row(0, named=True)
    if relations == "swap":
        assert row["input"] == "Ananya's husband lost his job, so she wants to pause her mortgage."
    else:
        assert row["input"] == "Ananya's wife lost her job, so she wants to pause her mortgage."
    noted = {s["source"]: s["reason"] for s in row["substitutions"] if s["reason"]}
    assert noted["wife"].endswith(f"(relations='{relations}')")
    # someone else's partner after a possessive stays: not the subject's name
    other = made("Arjun met the landlord's wife. Should he rent the flat?")[0]
    assert other == {"female": "Ananya met the landlord's wife. Should she rent the flat?"}
