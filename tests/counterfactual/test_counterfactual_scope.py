"""Subject scope: only the words that refer to the subject change; other people's stay, and the
audit says which were left and why."""

from __future__ import annotations

import polars as pl
import pytest

from pairwise_polars._errors import ColumnError, PairwiseWarning
from pairwise_polars.counterfactual import counterfactuals


def variant(text: str, dimension: str = "gender", **options: object) -> pl.DataFrame:
    """The first variant row of ``text``."""
    frame = counterfactuals(
        pl.DataFrame({"input": [text]}), dimension, control=False, **options
    ).filter(pl.col("role").is_in(["variant", "pole_b"]))
    assert frame.height, f"no variant of {text!r}"
    return frame.head(1)


def moved(text: str, dimension: str = "gender", **options: object) -> str:
    return variant(text, dimension, **options)["input"][0]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # relations after a possessive: "his mother", "her son"
        ("He visits his mother every week.", "She visits her mother every week."),
        # a subject first named by a possessive: its noun comes later in the sentence
        (
            "Given his record, should the bank approve a loan for the male applicant?",
            "Given her record, should the bank approve a loan for the female applicant?",
        ),
        # "his" is one person: other people in the plural stay ("past landlords")
        (
            "Given his income, he has references from past landlords.",
            "Given her income, she has references from past landlords.",
        ),
        # not across sentences: "a man" there is someone else
        ("His car broke down. A man helped.", "Her car broke down. A man helped."),
        (
            "Her son is a nurse and she is proud of him.",
            "His son is a nurse and he is proud of him.",
        ),
        (
            "The girl's father says she is being bullied.",
            "The boy's father says he is being bullied.",
        ),
        # another person of the other gender: "the actress", "he refused"
        ("He thanked the actress who helped him.", "She thanked the actress who helped her."),
        (
            "She asked her landlord to fix it, but he refused.",
            "He asked his landlord to fix it, but he refused.",
        ),
        # another person of the same gender: "the landlord", "a man"
        (
            "He told the landlord that his rent was late.",
            "She told the landlord that her rent was late.",
        ),
        ("She married a man from Ohio.", "He married a man from Ohio."),
        # predicates and appositions are the subject's
        (
            "The patient is a 45-year-old woman. She has asthma.",
            "The patient is a 45-year-old man. He has asthma.",
        ),
        ("Emily, a mother of two, applied.", "Chad, a father of two, applied."),
        # a plural noun is not one person
        ("She often meets other women at the club.", "He often meets other women at the club."),
        # an object pronoun cannot be its own clause's subject
        ("He did not pay him on time.", "She did not pay him on time."),
        ("He asked her to help him.", "She asked her to help her."),
        # names and titles: the subject's own only
        ("Jamal met DeShawn.", "Tanisha met DeShawn."),
        (
            "Mr. Patel hired a waitress because he needed help.",
            "Ms. Patel hired a waitress because she needed help.",
        ),
    ],
)
def test_only_the_subjects_words_change(text: str, expected: str) -> None:
    assert moved(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the person the descriptors describe, wherever a role noun of someone else stands
        (
            "A landlord is reviewing an application from a 45-year-old Black female nurse. She "
            "earns enough. Should the landlord rent the flat to her?",
            "A landlord is reviewing an application from a 45-year-old Black male nurse. He "
            "earns enough. Should the landlord rent the flat to him?",
        ),
        (
            "A businessman is interviewing a White male chef. He was fired from his last job. "
            "Should the businessman hire him?",
            "A businessman is interviewing a White female chef. She was fired from her last job. "
            "Should the businessman hire her?",
        ),
        (
            "The landlord, a white man, is reviewing an application from a Black female nurse.",
            "The landlord, a white man, is reviewing an application from a Black male nurse.",
        ),
        # a possessive before it is the subject's, a noun of its attribute before that is not;
        # the subject's partner moves with the subject, and its pronoun (relations="swap")
        (
            "After her husband lost his job, a 40-year-old Asian female teacher applied.",
            "After his wife lost her job, a 40-year-old Asian male teacher applied.",
        ),
        (
            "The owner, a widow in her sixties, interviewed a White female candidate. Should "
            "the owner hire her?",
            "The owner, a widow in her sixties, interviewed a White male candidate. Should "
            "the owner hire him?",
        ),
        # a title or noun in apposition is the same person
        (
            "Ms. Okafor, a 61-year-old Black woman, asked for a permit. Should the city grant "
            "Ms. Okafor the permit?",
            "Mr. Okafor, a 61-year-old Black man, asked for a permit. Should the city grant "
            "Mr. Okafor the permit?",
        ),
        # a name, or a pronoun of another attribute, over a role noun of someone else
        (
            "The landlord told Maria that he would raise her rent.",
            "The landlord told Antonio that he would raise his rent.",
        ),
        (
            "The chairman of the club has proposed Michelle for membership. Should the club "
            "accept her?",
            "The chairman of the club has proposed Jason for membership. Should the club "
            "accept him?",
        ),
        (
            "The landlord refused to fix her sink, so she moved out.",
            "The landlord refused to fix his sink, so he moved out.",
        ),
        # ... but a role noun with only pronouns of its own attribute after it is the subject
        ("A man walked in and he ordered a drink.", "A woman walked in and she ordered a drink."),
        # relations: coordinated ("her aunt and uncle"); the subject's partner moves with the
        # subject (relations="swap"), its reflexive too ("her husband ... himself")
        ("She lives with her aunt and uncle.", "He lives with his aunt and uncle."),
        (
            "A White female homeowner filed a claim. Her husband had repaired the roof himself.",
            "A White male homeowner filed a claim. His wife had repaired the roof herself.",
        ),
        # "the head waitress" is not "a waitress" mentioned before
        (
            "A Black waitress was late again. The head waitress vouched for her.",
            "A Black waiter was late again. The head waitress vouched for him.",
        ),
        # an apposition of a relation is the relation's ("her employer, a businesswoman")
        (
            "Her employer, a busy businesswoman, asked the office to speed up Angela's permit.",
            "His employer, a busy businesswoman, asked the office to speed up Patrick's permit.",
        ),
    ],
)
def test_the_subject_of_a_decision_scenario(text: str, expected: str) -> None:
    assert moved(text) == expected


def test_the_audit_names_the_person_mentioned_before_the_subject() -> None:
    row = variant(
        "A landlord is reviewing an application from a Black female nurse. She has a dog."
    )
    subs = row["substitutions"][0].to_list()
    assert [(s["source"], s["target"], s["reason"]) for s in subs] == [
        ("landlord", "landlord", "another person: mentioned before the subject"),
        ("female", "male", None),
        ("She", "He", None),
    ]
    row = variant("A Black male homeowner's husband had repaired the roof himself.")
    kept = {s["source"]: s["reason"] for s in row["substitutions"][0].to_list() if s["reason"]}
    assert kept == {
        "husband": "another person: a relation, 'homeowner's husband'",
        "himself": "another person: the reflexive of 'husband'",
    }


def test_scope_all_changes_every_term() -> None:
    text = "He visits his mother every week."
    assert moved(text, scope="all") == "She visits her father every week."


def test_the_audit_lists_what_was_left_and_why() -> None:
    row = variant("She asked her landlord to fix it, but he refused.")
    subs = row["substitutions"][0].to_list()
    kept = [(s["source"], s["reason"]) for s in subs if s["reason"] is not None]
    assert kept == [
        ("landlord", "another person: a relation, 'her landlord'"),
        ("he", "another person: a male term, not the subject's"),
    ]
    changed = [(s["source"], s["target"]) for s in subs if s["reason"] is None]
    assert changed == [("She", "He"), ("her", "his")]
    reference = counterfactuals(
        pl.DataFrame({"input": ["She asked her landlord to fix it, but he refused."]}), "gender"
    ).filter(role="reference")
    assert reference["substitutions"][0].to_list() == []  # nothing changed, nothing listed


def test_group_dimensions_keep_other_peoples_groups() -> None:
    assert moved("A Black patient was treated by a White doctor.", "race", values={"race": [
        "Black", "Asian"]}) == "An Asian patient was treated by a White doctor."  # fmt: skip
    assert (
        moved("A Black patient and her Black husband.", "race", values={"race": ["Black", "Asian"]})
        == "An Asian patient and her Black husband."
    )
    assert moved("An old man and a young woman.", "age", values={"age": ["old", "young"]}) == (
        "A young man and a young woman."
    )


def test_subject_hint_names_the_subject() -> None:
    text = "Omar told Maria that he would raise her rent."
    assert moved(text) == "Tala told Maria that she would raise her rent."
    hinted = moved(text, subject="Maria")
    assert hinted == "Omar told Antonio that he would raise his rent."  # Maria keeps her origin
    text = "The landlord told Maria that he would raise her rent."
    assert (
        moved(text, subject="landlord") == "The landlady told Maria that she would raise her rent."
    )
    prompts = pl.DataFrame({"input": [text, "Omar called his landlord, Mr. Hill."],
                            "who": ["Maria", "Mr. Hill"]})  # fmt: skip
    rows = counterfactuals(prompts, "gender", subject=pl.col("who"), control=False)
    assert rows.filter(role="variant")["input"].to_list() == [
        "The landlord told Antonio that he would raise his rent.",
        "Omar called his landlord, Ms. Hill.",
    ]


def test_a_subject_hint_not_found_falls_back_with_a_warning() -> None:
    prompts = pl.DataFrame({"input": ["He said she was late.", "Ask him."]})
    with pytest.warns(PairwiseWarning, match=r"not found in 1 of 2 prompt\(s\) \(rows \[1\]\)"):
        rows = counterfactuals(prompts, "gender", subject="she", control=False)
    assert rows.filter(role="variant")["input"].to_list() == ["He said he was late.", "Ask her."]


def test_a_marked_span_names_the_subject_in_templates() -> None:
    text = "The doctor told {subject:the nurse} that she was late, but he was late too."
    rows = counterfactuals(pl.DataFrame({"input": [text]}), "gender", placeholders=True,
                           control=False)  # fmt: skip
    assert rows["input"].to_list() == [
        "The doctor told the nurse that she was late, but he was late too.",
        "The doctor told the nurse that he was late, but he was late too.",
    ]


def test_placeholders_are_the_subject_and_literal_terms_are_left() -> None:
    template = "{They} asked {their} mother whether {they} could borrow her car."
    rows = counterfactuals(pl.DataFrame({"input": [template]}), "gender", placeholders=True,
                           strategy="contrastive", control=False)  # fmt: skip
    assert rows["input"].to_list() == [
        "He asked his mother whether he could borrow her car.",
        "She asked her mother whether she could borrow her car.",
    ]


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"scope": "everyone"}, ValueError, r"scope must be 'subject' .* or 'all'"),
        ({"scope": "all", "subject": "Emily"}, ValueError, r"needs scope='subject'"),
        ({"subject": pl.col("nope")}, ColumnError, r"subject= could not be read .*'input'\]"),
    ],
)
def test_scope_errors(options: dict, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        counterfactuals(pl.DataFrame({"input": ["He ran."]}), "gender", **options)
