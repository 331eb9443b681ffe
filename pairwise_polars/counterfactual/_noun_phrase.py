"""What the words around each term say about the person it names: the features the subject
scope (``_scope``) reads.

A term's noun phrase starts at its determiner ("a", "the", "her", "the girl's") or at the
nearest function word or punctuation mark; the words between say how the person is described
("a 45-year-old Black female nurse"), the words before the determiner how the phrase is joined
to the sentence ("she is a mother", "Emily, a nurse"). Also the term's number, its sentence,
and the subject pronoun of its clause. Rules on words, not a parser.
"""

from __future__ import annotations

import polars as pl

from pairwise_polars.counterfactual._grammar import FUNCTION_WORDS
from pairwise_polars.counterfactual._matches import ROW, TEXT

POSSESSIVE = ("his", "her", "their", "my", "your", "our", "its", "whose")
DEFINITE = ("the", "this", "that", "these", "those")
INDEFINITE = ("a", "an")
CLAUSE_BREAK = (
    r"(?i)(?:\b(?:to|that|and|but|or|because|when|if|so|while|who|whom|which|after|before|until"
    r"|since|as|than|whether|where|though|although)\b|[,;:.!?()])"
)
_PRONOUNS = ("they", "them", "their", "theirs", "themselves")
_TITLES = ("mr", "mr.")
_SUBJECT_PRONOUN = r"(?i)\b(he|she)\s+((?:[\w'’-]+\s+){1,6})$"
_NOMINATIVE = {"he": "male", "she": "female"}
_OTHER_ONE = ("other", "head", "chief", "senior", "second")
_SENTENCE_END = r"[.!?][\"'”’)\]]*\s+"
_OWNED = r"\w['’]s$|s['’]$"  # "the girl's", "the parents'"


def term_features(
    terms: pl.DataFrame, texts: pl.DataFrame, descriptors: tuple[str, ...] = ()
) -> pl.DataFrame:
    """``terms`` sorted by prompt and offset, with the columns the scope rules read:
    ``sentence``, ``pronoun``, ``name``, ``ident``, ``plural``, ``desc``, ``nouns_before``,
    ``det``, ``lead``, ``said_of``, ``apposed_to_relation``, ``other_one``, ``clause_subject``."""
    return _features(_with_sentence(terms, texts), descriptors)


def _with_sentence(terms: pl.DataFrame, texts: pl.DataFrame) -> pl.DataFrame:
    """``sentence``: how many sentence ends come before the term."""
    ends = pl.col(TEXT).str.slice(0, pl.col("start")).str.count_matches(_SENTENCE_END)
    return (
        terms.join(texts.select(ROW, TEXT), on=ROW, how="left")
        .with_columns(sentence=ends.fill_null(0))
        .drop(TEXT)
    )


def _described(word: pl.Expr, descriptors: list[str]) -> pl.Expr:
    low = word.str.to_lowercase()
    return (low.is_in(descriptors) | low.str.contains(r"\w-year-old$")).fill_null(False)


def _determiner(terms: pl.DataFrame) -> pl.DataFrame:
    """Where the noun phrase starts (``_at``: an index into ``prior``, the words before the term
    nearest first), its determiner (``_det``) and the three words before it (``_lead``...)."""
    prior = pl.col("prior")
    # The noun phrase starts at the nearest function word, possessive or punctuation mark:
    # its determiner if it is one ("a 45-year-old woman"), none otherwise ("studied in Mexico").
    stop = prior.list.eval(
        pl.element().str.to_lowercase().is_in([*POSSESSIVE, *DEFINITE, *FUNCTION_WORDS])
        | pl.element().str.contains(r"['’]s$|s['’]$|^[^\w]$")
    )
    at = pl.col("_at")
    word = pl.col("_word")
    is_det = word.is_in([*POSSESSIVE, *DEFINITE, *INDEFINITE]) | word.str.contains(
        r"['’]s$|s['’]$|^[^\w]$"
    )
    # A noun coordinated with a relation is a relation too: "her aunt and uncle".
    owner = prior.list.get(at + 2, null_on_oob=True).str.to_lowercase()
    coordinated = word.is_in(["and", "or"]) & (owner.is_in(POSSESSIVE) | owner.str.contains(_OWNED))
    lead = [prior.list.get(at + i, null_on_oob=True).str.to_lowercase() for i in (1, 2, 3)]
    return (
        terms.with_columns(_at=pl.when(stop.list.any()).then(stop.list.arg_max()))
        .with_columns(_word=prior.list.get(at, null_on_oob=True).str.to_lowercase())
        .with_columns(
            _det=pl.when(coordinated).then(owner).when(is_det).then(word),
            _lead=lead[0],
            _lead2=lead[1],
            _lead3=lead[2],
        )
    )


def _descriptions(descriptors: tuple[str, ...]) -> pl.Expr:
    """How the person is described in the noun phrase: the descriptors among the words before
    the term up to its determiner, the term itself, and up to two words after it ("a
    45-year-old Black female nurse": 3 for "female"; "a white man": 1)."""
    prior = pl.col("prior")
    words = list(descriptors)
    np_words = prior.list.head(pl.col("_at").fill_null(prior.list.len()))
    return (
        np_words.list.eval(_described(pl.element(), words)).list.sum().fill_null(0)
        + _described(pl.col("match"), words).cast(pl.Int64)
        + _described(pl.col("tok1"), words).cast(pl.Int64)
        + (_described(pl.col("tok1"), words) & _described(pl.col("tok2"), words)).cast(pl.Int64)
    )


def _features(terms: pl.DataFrame, descriptors: tuple[str, ...] = ()) -> pl.DataFrame:
    """The person each term names, as its noun phrase (``_determiner``) and clause tell it."""
    prior = pl.col("prior")
    at = pl.col("_at")
    punct = pl.col("_det").str.contains(r"^[^\w]$")
    key = pl.col("key")
    clause = pl.col("before").str.extract_groups(_SUBJECT_PRONOUN)
    not_pronoun = (~pl.col("concept").is_in(_PRONOUNS)).cast(pl.Int32)
    return (
        _determiner(terms.sort(ROW, "start"))
        .with_columns(
            pronoun=pl.col("concept").is_in(_PRONOUNS),
            name=pl.col("concept").str.starts_with("name") | pl.col("concept").is_in(_TITLES),
            ident=pl.when(pl.col("concept").is_in(_TITLES))
            .then(pl.concat_str(key, pl.lit(" "), pl.col("tok1").str.to_lowercase()))
            .otherwise(key),
            # "his" is not a plural, nor is "James": a pronoun's or a name's number is its
            # concept's, not its spelling's
            plural=~pl.col("concept").is_in(_PRONOUNS)
            & ~pl.col("concept").str.starts_with("name")
            & key.str.contains(r"(?:[^s]s|men|children|people)$"),
            desc=_descriptions(descriptors),
            # nouns (and names) of the term's attribute before it in the prompt
            nouns_before=not_pronoun.cum_sum().over(ROW, "attribute") - not_pronoun,
            det=pl.when(punct).then(None).otherwise("_det"),
            lead=pl.when(punct).then("_det").otherwise("_lead"),
            said_of=pl.when(punct).then("_lead").otherwise("_lead2"),
            # "her employer, a busy businesswoman": said of a relation, not of whoever "her" is
            apposed_to_relation=(pl.when(punct).then("_det").otherwise("_lead") == ",")
            & pl.when(punct)
            .then(pl.col("_lead2"))
            .otherwise(pl.col("_lead3"))
            .pipe(lambda w: w.is_in(POSSESSIVE) | w.str.contains(_OWNED))
            .fill_null(False),
            # "the head waitress", "the other woman": someone else than "a waitress" before
            other_one=prior.list.head(at.fill_null(0))
            .list.eval(pl.element().str.to_lowercase().is_in(_OTHER_ONE))
            .list.any(),
            clause_subject=pl.when(~clause.struct[1].str.contains(CLAUSE_BREAK))
            .then(clause.struct[0].str.to_lowercase().replace_strict(_NOMINATIVE, default=None))
            .otherwise(None),
        )
        .drop("_at", "_word", "_det", "_lead", "_lead2", "_lead3")
    )
