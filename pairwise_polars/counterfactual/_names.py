"""The subject's name must follow the change, or the variant is not made.

"Should I hire Priya? She is a Hindu woman" moved to male is half a change when the lexicon
cannot change "Priya": "Should I hire Priya? He is a Hindu man". A name the dimension's lexicon
knows changes with the subject (keeping its origin where the lexicon knows it: Maria <->
Antonio, Priya <-> Rahul); a name it does not know cannot, so every variant that changes the
subject is left out and reported with the name, never made half-changed.

A word is taken for a name when it is capitalised, is no function word, title, month or day
and no term of any dimension (a known name of another dimension is a name), does not follow a
place preposition or an article ("in Chicago", "the Shea"), and, at the start of a sentence, is
followed by a comma or a verb in the singular ("Tomasz wants ...", not "Benefits would ...").
The subject's name is the one at the subject hint, or else the first such word before the
subject's first term when that term is said of someone already there: a pronoun ("Should I
hire Priya? She ..."), a predicate or an apposition ("Aiyana is a Native American woman",
"Aiyana, a nurse"); a subject introduced anew ("The landlord told Maria that a Black tenant
...") is not the earlier name's. Rules on words, like the subject scope; the report names what
was left out.
"""

from __future__ import annotations

import polars as pl

from pairwise_polars.counterfactual._grammar import FUNCTION_WORDS
from pairwise_polars.counterfactual._lexicon import Lexicon, term_key
from pairwise_polars.counterfactual._matches import ROW, find_matches
from pairwise_polars.counterfactual._scope import HINT, KEEP

_CAPITALISED = r"(?-i:\b[A-Z][a-z]+(?:[-'’][A-Z]?[a-z]+)?\b)"
_NOT_NAMES = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "miss",
        "dr",
        "prof",
        "sir",
        "madam",
        "mister",
        "doctor",
        "professor",
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "please",
        "thanks",
        "thank",
        "hello",
        "hi",
        "dear",
        "yes",
        "okay",
        "ok",
        "god",
        "nobody",
        "everyone",
        "everybody",
        "someone",
        "somebody",
        "anyone",
        "anybody",
        "none",
        "everything",
        "something",
        "nothing",
    ]
)
_PRONOUNS = ("they", "them", "their", "theirs", "themselves")
_PREDICATE = ("is", "was", "am", "are", "were", ",", "as")
_PLACE = frozenset(
    [
        "in",
        "at",
        "from",
        "near",
        "into",
        "across",
        "around",
        "outside",
        "inside",
        "of",
        "on",
        "via",
        "through",
        "the",
        "a",
        "an",
        "this",
        "that",
    ]
)  # a place ("in Chicago"), or a thing ("the Shea"): no person's first name
_PERSON_VERBS = frozenset(
    [
        "is",
        "was",
        "has",
        "says",
        "asks",
        "wants",
        "told",
        "tells",
        "needs",
        "works",
        "lives",
        "earns",
        "recently",
        "applied",
        "gets",
        "thinks",
        "believes",
        "feels",
        "goes",
        "comes",
        "makes",
        "takes",
        "gives",
        "seems",
        "writes",
        "calls",
        "runs",
        "owns",
        "hopes",
        "plans",
    ]
)


def subject_names(
    texts: pl.DataFrame, matches: pl.DataFrame, lexicon: Lexicon, dim: str
) -> pl.DataFrame:
    """``ROW`` and ``name``: the subject's name where the ``dim`` lexicon cannot change it."""
    names = find_matches(texts, _CAPITALISED)
    if names.is_empty():
        return pl.DataFrame(schema={ROW: pl.UInt32, "name": pl.String})
    # every word of a term that is no name ("Native" of "Native American") is no name either
    terms = (
        lexicon.terms.filter(~pl.col("concept").str.starts_with("name"))
        .select(term_key(pl.col("term")).str.split(" ").alias("key"))
        .explode("key")
    )
    stop = [*FUNCTION_WORDS, *_NOT_NAMES]
    prev = pl.col("prev").str.to_lowercase().fill_null("")
    after = pl.col("tok1").str.to_lowercase().fill_null("")
    comma = pl.col("ws1").fill_null("").str.starts_with(",")
    named = (
        names.join(matches.select(ROW, "start").unique(), on=[ROW, "start"], how="anti")
        .join(terms.unique(), on="key", how="anti")
        .filter(
            ~pl.col("key").is_in(stop),
            ~prev.is_in(list(_PLACE)),
            ~pl.col("initial") | after.is_in(list(_PERSON_VERBS)) | comma,
        )
    )
    subject_terms = matches.filter(pl.col(KEEP).is_null() & ~pl.col("placeholder"))
    prior = pl.col("prior").list
    word = [prior.get(i, null_on_oob=True).str.to_lowercase() for i in range(4)]
    # "She ...", "... is a Black woman", "... is a devout Sikh man", "Priya, an Asian nurse"
    said_of_someone = (
        pl.col("concept").is_in(_PRONOUNS)
        | word[0].is_in(_PREDICATE)
        | pl.any_horizontal(
            word[i].is_in(["a", "an"]) & word[i + 1].is_in(_PREDICATE) for i in range(3)
        )
    ).fill_null(False)
    first = (
        subject_terms.sort(ROW, "start")
        .group_by(ROW, maintain_order=True)
        .agg(first=pl.col("start").first(), said_of=said_of_someone.first())
        .filter("said_of")  # a subject introduced anew ("a Black tenant") is not the name
        .drop("said_of")
    )
    hint = texts.select(ROW, pl.col(HINT) if HINT in texts.columns else pl.lit(None, pl.UInt32))
    located = named.join(first, on=ROW, how="left").join(
        hint.rename({hint.columns[1]: "hint"}), on=ROW, how="left"
    )
    at_hint = pl.col("hint").is_not_null() & (pl.col("start") == pl.col("hint").cast(pl.Int64))
    before_subject = pl.col("hint").is_null() & (pl.col("start") < pl.col("first"))
    return (
        located.filter(at_hint | before_subject)
        .sort(ROW, "start")
        .group_by(ROW, maintain_order=True)
        .agg(name=pl.col("match").first())
    )


def name_failures(plan: pl.DataFrame, names: pl.DataFrame, dim: str) -> pl.DataFrame:
    """The planned variants that change the subject of a prompt whose subject's name cannot
    change: ``ROW``, role, target, reason."""
    moved = plan.filter(pl.col("target") != pl.col("source").fill_null(""))
    if names.is_empty() or moved.is_empty():
        return moved.clear().select(ROW, "role", "target", reason=pl.lit(None, pl.String))
    return moved.join(names, on=ROW).select(
        ROW,
        "role",
        "target",
        reason=pl.format(
            "the subject's name '{}' is not in the {} lexicon, so it cannot change with the "
            "subject: left out rather than half-changed (add names with add_lexicons=)",
            "name",
            pl.lit(dim),
        ),
    )
