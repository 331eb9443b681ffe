"""The subject's name must follow the change, or the variant is not made.

"Should I hire Priya? She is a Hindu woman" moved to male is half a change when the lexicon
cannot change "Priya": "Should I hire Priya? He is a Hindu man". A name the dimension's lexicon
knows changes with the subject (keeping its origin where the lexicon knows it: Maria <->
Antonio, Priya <-> Rahul); a name it does not know cannot, so every variant that changes the
subject is left out and reported with the name, never made half-changed.

A word is taken for a name when it is capitalised, is no function word, title, month or day
and no term of any dimension (a known name of another dimension is a name), does not follow a
place preposition or an article ("in Chicago", "the Shea"), and, at the start of a sentence, is
followed by a comma, a verb in the singular or a verb in the past ("Tomasz wants ...", "Anneliese
asked ...", not "Benefits would ...").
The subject's name is the one at the subject hint, or else the first such word before the
subject's first term when that term is said of someone already there: a pronoun ("Should I
hire Priya? She ..."), a predicate or an apposition ("Aiyana is a Native American woman",
"Aiyana, a nurse"); a subject introduced anew ("The landlord told Maria that a Black tenant
...") is not the earlier name's. Rules on words, like the subject scope; the report names what
was left out.
"""

from __future__ import annotations

import polars as pl

from pairwise_polars.counterfactual._grammar import ADVERBS, FUNCTION_WORDS
from pairwise_polars.counterfactual._lexicon import Lexicon, term_key
from pairwise_polars.counterfactual._matches import ROW, TEXT, find_matches
from pairwise_polars.counterfactual._scope import HINT, KEEP

_CAPITALISED = r"(?-i:\b[A-Z][a-z]+(?:[-'’][A-Z]?[a-z]+)?\b)"
_TITLES = ("mr", "mrs", "ms", "miss", "dr", "prof", "sir", "madam", "mister", "doctor", "professor")
_NOT_NAMES = frozenset(
    [
        *_TITLES,
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
        # words that open a sentence before a comma ("However, ...", "Yesterday, a man ...")
        "however",
        "therefore",
        "meanwhile",
        "yesterday",
        "today",
        "tomorrow",
        "tonight",
        "also",
        "then",
        "now",
        "still",
        "besides",
        "instead",
        "otherwise",
        "moreover",
        "furthermore",
        "finally",
        "first",
        "second",
        "next",
        "later",
        "overall",
        "sadly",
    ]
)
# Words that open a prompt's sentence and are no names: requests ("Write a letter for her"),
# participles, quantifiers and times ("Given her record", "Last week she ...")
_OPENERS = """
given based according write tell consider imagine suppose assume describe explain draft help
rate evaluate decide answer review assess recommend suggest compose create generate give provide
list summarize summarise read note keep let find choose pick act pretend respond reply translate
rewrite use include ask say last next every many most several few other recent new old
concerned worried married divorced retired born raised
""".split()  # noqa: SIM905 (a word list reads better as text)
_POSSESSIVES = ["his", "her", "their", "my", "our", "your", "its"]
_GREETINGS = ["dear", "hi", "hello", "hey", "thanks"]  # the function words are in stop already
_APPOSITION = ("a", "an", "who", "whose", "aged")
_MODALS = ("will", "would", "can", "could", "should", "may", "might", "must", "shall")
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
        # the past of everyday verbs that do not end in "-ed" (those that do are read by rule)
        "had",
        "said",
        "got",
        "went",
        "came",
        "made",
        "took",
        "gave",
        "left",
        "lost",
        "won",
        "paid",
        "sent",
        "found",
        "bought",
        "sold",
        "met",
        "spent",
        "built",
        "felt",
        "heard",
        "kept",
        "knew",
        "began",
        "became",
        "wrote",
        "ran",
        "drove",
        "saw",
        "thought",
        "brought",
        "taught",
        "fell",
        "grew",
    ]
)


def subject_names(
    texts: pl.DataFrame, matches: pl.DataFrame, lexicon: Lexicon, dim: str
) -> pl.DataFrame:
    """``ROW`` and ``name``: the subject's name where the ``dim`` lexicon cannot change it."""
    named = _unknown_names(texts, matches, lexicon)
    if named.is_empty():
        return pl.DataFrame(schema={ROW: pl.UInt32, "name": pl.String})
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
        .agg(
            first=pl.col("start").first(),
            said_of=said_of_someone.first(),
            pronoun=pl.col("concept").is_in(_PRONOUNS).first(),
        )
        .filter("said_of")  # a subject introduced anew ("a Black tenant") is not the name
        .drop("said_of")
    )
    hint = texts.select(ROW, pl.col(HINT) if HINT in texts.columns else pl.lit(None, pl.UInt32))
    located = named.join(first, on=ROW, how="left").join(
        hint.rename({hint.columns[1]: "hint"}), on=ROW, how="left"
    )
    at_hint = pl.col("hint").is_not_null() & (pl.col("start") == pl.col("hint").cast(pl.Int64))
    # A subject first named by a pronoun ("Sigrid just finished her degree") has its name before
    # it, whatever words follow the name: any word taken for a name there counts, at a sentence's
    # start too unless it reads as a plural ("Benefits would help her"): a false one leaves the
    # variant out, reported; a missed one would half-change it.
    before_subject = (
        pl.col("hint").is_null()
        & (pl.col("start") < pl.col("first"))
        & (pl.col("strict") | (pl.col("pronoun") & ~pl.col("plural")))
    )
    return (
        pl.concat(
            [
                located.filter(at_hint | before_subject).select(ROW, "start", "match"),
                _nearest_before_pronoun(named, subject_terms, hint),
            ]
        )
        .sort(ROW, "start")
        .group_by(ROW, maintain_order=True)
        .agg(name=pl.col("match").first())
    )


def _unknown_names(texts: pl.DataFrame, matches: pl.DataFrame, lexicon: Lexicon) -> pl.DataFrame:
    """The words taken for names that no lexicon term matched: ``ROW``, start, match, and
    ``personal`` (said as of a person: a verb of a person after it, an apposition, a possessive,
    or the end of its sentence)."""
    names = find_matches(texts, _CAPITALISED)
    if names.is_empty():
        schema = {ROW: pl.UInt32, "start": pl.Int64, "match": pl.String}
        flags = {"personal": pl.Boolean, "strict": pl.Boolean, "plural": pl.Boolean}
        return pl.DataFrame(schema={**schema, **flags})
    # every word of a term that is no name ("Native" of "Native American") is no name either
    terms = (
        lexicon.terms.filter(~pl.col("concept").str.starts_with("name"))
        .select(term_key(pl.col("term")).str.split(" ").alias("key"))
        .explode("key")
    )
    stop = [*FUNCTION_WORDS, *ADVERBS, *_NOT_NAMES, *_OPENERS]
    prev = pl.col("prev").str.to_lowercase().fill_null("")
    after = pl.col("tok1").str.to_lowercase().fill_null("")
    # "Saoirse, a physiotherapist, ...", "Isolde, who teaches ...": an apposition or a relative
    # clause after the comma ("However, the bank ..." is no name)
    names = names.join(texts.select(ROW, TEXT), on=ROW).with_columns(
        comma=pl.col(TEXT)
        .str.slice(pl.col("end"), 16)
        .str.extract(r"^,\s*([A-Za-z0-9]+)")
        .str.to_lowercase()
        .is_in(list(_APPOSITION))
        | pl.col(TEXT).str.slice(pl.col("end"), 16).str.contains(r"^,\s*\d")
    )
    # "Leopold and his wife", "Henrike will start": a person, unless a plural ("Benefits would")
    singular = ~pl.col("key").str.ends_with("s") | pl.col("key").str.ends_with("ss")
    joined = singular & after.is_in(["and", *_MODALS])
    personal = (
        after.is_in(list(_PERSON_VERBS))
        | after.is_in(list(ADVERBS))  # "Sigrid just finished"
        | _past(after)
        | pl.col("comma")
        | joined
        | _possessive(pl.col("key"))
    )
    # "Should the landlord rent to Zbigniew? He ...": a name that ends its sentence
    ends = pl.col(TEXT).str.slice(pl.col("end"), 1).is_in([".", "?", "!", ";"])
    return (
        names.join(matches.select(ROW, "start").unique(), on=[ROW, "start"], how="anti")
        .join(terms.unique(), on="key", how="anti")
        .filter(
            ~pl.col("key").is_in(stop),
            ~pl.col("key").str.ends_with("ly"),  # "Unfortunately, a ...": an adverb
            ~pl.col("key").str.contains(r"^\w{3,}ing$"),  # "Having worked ...": a participle
            ~prev.is_in(list(_PLACE)) | (prev.is_in(["that", "this"]) & personal),
            ~prev.is_in(_POSSESSIVES),  # "improve her English"
            ~_after_name(stop),  # "James Jones": a family name
            ~_after_title(),  # "Mr. Okafor": a family name
        )
        .select(
            ROW,
            "start",
            "match",
            personal=personal | ends,
            # at a sentence's start only with a sign of a person after it ("Benefits would")
            strict=~pl.col("initial") | personal,
            plural=~singular,
        )
    )


def _nearest_before_pronoun(
    named: pl.DataFrame, subject_terms: pl.DataFrame, hint: pl.DataFrame
) -> pl.DataFrame:
    """Names a subject's pronoun refers to: the nearest person before the pronoun is the name,
    not a term of the subject ("Should the landlord rent to Zbigniew? He has a dog": "He" is
    Zbigniew, so the variant cannot change him whole). Only before the subject's first pronoun
    ("He says his wife wants to move to Denver. Should he ...": "he" goes on from "He"), and not
    where a subject hint is given."""
    terms = subject_terms.sort(ROW, "start").select(
        ROW,
        "start",
        pronoun=pl.col("concept").is_in(_PRONOUNS),
        previous=pl.col("start").shift(1).over(ROW).fill_null(-1),
    )
    # the subject's first pronoun only: once the subject is "he", a later "he" continues it
    pronouns = terms.filter("pronoun").group_by(ROW).agg(pl.all().first())
    pronouns = pronouns.join(hint, on=ROW, how="left")
    pronouns = pronouns.filter(pl.col(hint.columns[1]).is_null())
    return (
        named.filter("personal", "strict")
        .join(pronouns.select(ROW, "previous", at=pl.col("start")), on=ROW)
        .filter((pl.col("start") > pl.col("previous")) & (pl.col("start") < pl.col("at")))
        .select(ROW, "start", "match")
        .unique()
    )


def _after_name(stop: list[str]) -> pl.Expr:
    """The word follows a capitalised word in the same sentence that is no function word or
    greeting ("James Jones", not "When Casimir", "Dear Anneliese"): a family name."""
    prev = pl.col("prev").fill_null("")
    return (
        ~pl.col("initial")
        & prev.str.contains(r"^[A-Z][a-z]")
        & ~prev.str.to_lowercase().is_in([*stop, *_GREETINGS])
    )


def _after_title() -> pl.Expr:
    """The word follows a title ("Mr. Okafor", "Dr Alvarez"): a family name, no first name."""
    prior = pl.col("prior").list
    title = [prior.get(i, null_on_oob=True).str.to_lowercase() for i in range(2)]
    return (
        title[0].is_in(list(_TITLES)) | ((title[0] == ".") & title[1].is_in(list(_TITLES)))
    ).fill_null(False)


def _possessive(key: pl.Expr) -> pl.Expr:
    """A name in the possessive ("Ottilie's landlord", "Evander's wife") is a person's."""
    return key.str.contains(r"['’]s$")


def _past(word: pl.Expr) -> pl.Expr:
    """A verb in the past by its ending ("Anneliese asked her manager"): a capitalised word
    before it at the start of a sentence is a person. A plural before one ("Prices rose") is
    rarely a past in "-ed"; when it is, the variant is left out and reported, never half-made."""
    return word.str.contains(r"^[a-z]{2,}ed$")


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
