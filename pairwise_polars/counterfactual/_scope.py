"""Subject scope: which terms refer to the prompt's subject, and which to other people.

A counterfactual changes one thing: the subject's attribute. "She asked her landlord to fix it,
but he refused" moved to male is "He asked his landlord to fix it, but he refused": the
landlord and the "he" who refused are someone else and stay as they are. The subject is the
one at a hint (``subject=`` or a ``{subject:...}`` span), or else, in this order:

- the first person described by two or more descriptors in one noun phrase (a race, an age, a
  religion, "male"/"female": "A landlord is reviewing an application from a 45-year-old Black
  female nurse"): who a decision scenario is about, and the descriptors are what it varies;
- when the first mention is a bare noun ("the landlord", "a businessman"), a later name or a
  pronoun of another attribute with no noun of its own before it ("The landlord told Maria
  that ...", "The landlord refused to fix her sink"): the person named or referred to;
- the first person mentioned (a pronoun, a name, a gendered or group word).

A noun or title joined to the subject's mention by a comma or "named" is the subject's too ("Ms.
Okafor, a 61-year-old Black woman", "the landlord, Mr. Hill"). Then, term by term, in this order:

- a term before the subject's mention is someone else's ("his" in "Omar called his landlord,
  Mr. Hill" with ``subject="Mr. Hill"``; "a landlord" above), except, without a hint, a
  possessive of the subject's attribute in the subject's sentence with no noun of that
  attribute before it ("After her husband lost his job, a Black female teacher applied");
- a noun after a possessive is a relation, someone else ("his wife", "the girl's father",
  "her aunt and uncle");
- a term of another attribute than the subject's is someone else's ("her landlord ... he");
- a name or title other than the subject's own is someone else ("Mr. Patel hired Ms. Rao";
  after a pronoun, "he asked his manager, Mr. Alvarez");
- an object pronoun after a subject pronoun of its own gender in the same clause is someone
  else ("he did not pay him": "him" cannot be "he");
- a plural noun is not a singular subject ("she met other women"), and the other way round;
- a noun after "a"/"an" is the subject's only as a predicate or an apposition of the subject
  ("she is a mother", "Emily, a White woman"), otherwise someone else ("she married a man",
  "the doctor, a young woman");
- a noun after "the"/"this"/"that" is the subject's when the subject was called so before
  ("the woman" after "a woman"), otherwise someone else ("the actress");
- a subject first mentioned by a possessive or object pronoun is named by the first noun or name
  of its attribute later in the sentence ("Given her record, should the bank hire the female
  applicant?", "Her son asked whether Elizabeth ..."): that noun is the subject's;
- a noun after "the" with "other", "head", "chief", ... is someone else ("the head waitress");
- everything else (pronouns of the subject's gender, bare adjectives) is the subject's, except
  a reflexive right after another person's noun in its clause ("her husband repaired it
  himself").

Rules on words, not a parser: every term left alone is in the audit with its reason. What the
words around each term say (its determiner, descriptors, number, clause) is read in
``_noun_phrase``.
"""

from __future__ import annotations

import polars as pl

from pairwise_polars.counterfactual._lexicon import IGNORE
from pairwise_polars.counterfactual._matches import ROW, TEXT
from pairwise_polars.counterfactual._noun_phrase import (
    CLAUSE_BREAK,
    DEFINITE,
    INDEFINITE,
    POSSESSIVE,
    term_features,
)

HINT = "__cf_hint"  # the subject hint's start offset in the prompt (null: none)
KEEP = "keep"  # why a term is left alone; null for the subject's terms
_PREDICATE_LEAD = (
    "is", "was", "are", "were", "be", "been", "being", "'s", "’s", "as", "became", "becomes",
    "become", "remains", "remained", "seems", "seemed", "like", ",", "(", ":", "—", "–", "-",
)  # fmt: skip
_PRONOUN_OF = {"male": "he", "female": "she"}
_CATAPHORIC = ("his", "her", "him", "their", "them")  # a first mention that names no one yet
_NAMED = r"^\s+(?:named|called)\s+$"  # "a man named Omar"


def subject_scope(
    matches: pl.DataFrame, texts: pl.DataFrame, dim: str, descriptors: tuple[str, ...] = ()
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Return (matches with a ``KEEP`` column, subjects: ``ROW``, source).

    ``texts`` has ``ROW`` and, when some prompt has a hint, ``HINT``. ``source`` is the
    subject's attribute: the attribute the prompt is moved from. ``descriptors`` are the words
    that say who a person is ("Black", "female", "45-year-old": ``descriptor_words``).
    """
    found = matches.filter(~pl.col("placeholder") & (pl.col("attribute") != IGNORE))
    terms = term_features(found, texts, descriptors)
    subjects = _subjects(terms, texts)
    scoped = _reflexives(
        terms.join(subjects, on=ROW, how="left").with_columns(_reason(dim).alias(KEEP)), texts
    )
    holders = matches.filter(pl.col("placeholder") & (pl.col("tdim") == dim)).select(ROW).unique()
    templated = pl.col(ROW).is_in(holders[ROW].implode())
    scoped = scoped.with_columns(
        pl.when(templated)
        .then(pl.lit("another person: the template's placeholders mark the subject"))
        .otherwise(KEEP)
        .alias(KEEP)
    )
    keep = scoped.select(ROW, "start", KEEP)
    out = matches.join(keep, on=[ROW, "start"], how="left")
    return out, subjects.filter(~pl.col(ROW).is_in(holders[ROW].implode())).select(
        ROW, source="sattr"
    )


def _reflexives(scoped: pl.DataFrame, texts: pl.DataFrame) -> pl.DataFrame:
    """A reflexive goes with the noun just before it in its clause: "Her husband repaired the
    roof himself" keeps "himself" when the husband is someone else."""
    prev = {c: pl.col(c).shift(1).over(ROW) for c in ("end", "attribute", "match", KEEP)}
    gap = pl.col(TEXT).str.slice(prev["end"], pl.col("start") - prev["end"])
    follows_other = (
        (pl.col("concept") == "themselves")
        & pl.col(KEEP).is_null()
        & ~pl.col("pronoun").shift(1).over(ROW).fill_null(True)
        & (prev["attribute"] == pl.col("attribute"))
        & prev[KEEP].is_not_null()
        & ~gap.str.contains(CLAUSE_BREAK)
    ).fill_null(False)
    return (
        scoped.sort(ROW, "start")
        .join(texts.select(ROW, TEXT), on=ROW, how="left")
        .with_columns(
            pl.when(follows_other)
            .then(pl.format("another person: the reflexive of '{}'", prev["match"]))
            .otherwise(KEEP)
            .alias(KEEP)
        )
        .drop(TEXT)
    )


def _subjects(terms: pl.DataFrame, texts: pl.DataFrame) -> pl.DataFrame:
    """Per prompt: the subject's mention (see ``_ranked``, or the first at the hint) and what
    identifies it."""
    candidates = terms.with_columns(hinted=pl.lit(False))
    if HINT in texts.columns:
        hints = texts.select(ROW, HINT)
        candidates = (
            terms.join(hints, on=ROW, how="left")
            .filter(pl.col(HINT).is_null() | (pl.col("end") > pl.col(HINT)))
            .with_columns(hinted=pl.col(HINT).is_not_null())
            .drop(HINT)
        )
    best = _ranked(candidates, texts).sort(ROW, "priority", "start")
    first = best.group_by(ROW, maintain_order=True).agg(
        sstart=pl.col("start").first(),
        sattr=pl.col("attribute").first(),
        skey=pl.col("key").first(),
        splural=pl.col("plural").first(),
        sname=pl.col("name").first(),
        sident=pl.col("ident").first(),
        # "doctor" in "a Muslim doctor" (not "employer" in "her employer")
        snoun=pl.when(~pl.col("pronoun").first()).then(pl.col("tok1").first().str.to_lowercase()),
        ssentence=pl.col("sentence").first(),
        shinted=pl.col("hinted").first(),
        lstart=pl.when(pl.col("linked").first()).then(pl.col("prev_start").first()),
        lkey=pl.when(pl.col("linked").first()).then(pl.col("prev_key").first()),
    )
    first = first.join(_antecedents(terms, first, texts), on=ROW, how="left")
    with_subject = terms.join(first, on=ROW)
    # Nouns said of the subject as a predicate or apposition ("she is a mother") name it too.
    same = pl.col("attribute") == pl.col("sattr")
    said = (
        with_subject.filter(same & ~pl.col("pronoun") & _predicate())
        .group_by(ROW)
        .agg(said=pl.col("key").unique())
    )
    return (
        first.join(said, on=ROW, how="left")
        .with_columns(
            sident=pl.when(pl.col("sname")).then("sident").otherwise("aident"),
            skeys=pl.concat_list(
                pl.col("skey"),
                pl.col("said").fill_null([]),
                pl.col("akey").fill_null([]),
                pl.concat_list("lkey").list.drop_nulls(),
            ),
        )
        .drop("said", "sname", "aident", "lkey")
    )


def _ranked(candidates: pl.DataFrame, texts: pl.DataFrame) -> pl.DataFrame:
    """Candidates with a ``priority`` (the subject is the first of the lowest) and whether the
    term before each is linked to it (``linked``, ``prev_start``, ``prev_key``).

    0. A person described by two or more descriptors in one noun phrase ("a 45-year-old Black
       female applicant", "a White man"... but not "a white man" alone): who a decision
       scenario is about, wherever it stands ("A landlord is reviewing an application from a
       Black female nurse").
    1. When the first mention is a bare noun ("the landlord", "a businessman": no pronoun, name
       or descriptor), a later name, or a pronoun of another attribute with no noun of its own
       before it: that person is named or referred to, the noun's person is only described
       ("The chairman proposed Jason", "The landlord refused to fix her sink").
    2. Everything else: the first mention, as before (and every candidate after a hint).
    """
    noun = ~pl.col("pronoun")
    rich = noun & ~pl.col("plural") & (pl.col("desc") >= 2)
    bare = noun & ~pl.col("name") & ~rich
    first_attr = pl.col("attribute").first().over(ROW)
    other_person = pl.col("name") | (
        pl.col("pronoun") & (pl.col("attribute") != first_attr) & (pl.col("nouns_before") == 0)
    )
    priority = (
        pl.when(pl.col("hinted"))
        .then(2)
        .when(rich)
        .then(0)
        .when(bare.first().over(ROW) & other_person)
        .then(1)
        .otherwise(2)
    )
    # "The owner, Mr. Grant", "the waitress, a 30-year-old Black woman", "a man named Omar":
    # the noun just before the mention, joined to it by a comma or "named", is the same person.
    prev = {c: pl.col(c).shift(1).over(ROW) for c in ("start", "end", "key", "attribute")}
    gap = pl.col(TEXT).str.slice(prev["end"], pl.col("start") - prev["end"])
    prev_noun = ~pl.col("pronoun").shift(1).over(ROW).fill_null(True)
    surname = pl.col("tok1").shift(1).over(ROW).str.to_lowercase()  # "Ms. Okafor, a ..."
    linked = (
        prev_noun
        & (prev["attribute"] == pl.col("attribute"))
        & (
            gap.str.contains(_NAMED)
            | (
                (pl.col("lead") == ",")
                & ((pl.col("said_of") == prev["key"]) | (pl.col("said_of") == surname))
            )
        )
    ).fill_null(False)
    # A rich mention in apposition lends its rank to the mention it describes ("Ms. Okafor, a
    # 61-year-old Black woman"), which is then the subject and the apposition its predicate.
    # (from the columns, not the expressions: a window inside a window fails on older polars)
    lent = (pl.col("linked") & pl.col("rich")).shift(-1).over(ROW).fill_null(False)
    return (
        candidates.sort(ROW, "start")
        .join(texts.select(ROW, TEXT), on=ROW, how="left")
        .with_columns(rich=rich, linked=linked)
        .with_columns(
            priority=pl.when(lent & ~pl.col("hinted")).then(0).otherwise(priority),
            linked=pl.col("linked") & ~pl.col("rich"),
            prev_start=prev["start"],
            prev_key=prev["key"],
        )
        .drop(TEXT, "rich")
    )


def _antecedents(terms: pl.DataFrame, first: pl.DataFrame, texts: pl.DataFrame) -> pl.DataFrame:
    """A subject first mentioned by a possessive or object pronoun names its noun later in the
    same sentence ("Given her record, should the bank hire the female applicant?", "Her son asked
    whether Elizabeth ..."): that first noun or name of the subject's attribute is the subject's
    too (``astart``, ``akey``, and ``aident`` for a name)."""
    cataphoric = first.filter(pl.col("skey").is_in(_CATAPHORIC)).select(ROW, "sstart", "sattr")
    later = (
        terms.join(cataphoric, on=ROW)
        .filter(
            (pl.col("start") > pl.col("sstart"))
            & ~pl.col("pronoun")
            & ~pl.col("plural")
            & ~pl.col("apposed_to_relation")
            & (pl.col("attribute") == pl.col("sattr"))
            & ~pl.col("det").is_in(POSSESSIVE).fill_null(False)
        )
        .group_by(ROW, maintain_order=True)
        .agg(
            astart=pl.col("start").first(),
            akey=pl.col("key").first(),
            aident=pl.when(pl.col("name").first()).then(pl.col("ident").first()),
            sstart=pl.col("sstart").first(),
        )
    )
    between = (
        pl.col(TEXT)
        .str.slice(pl.col("sstart"), pl.col("astart") - pl.col("sstart"))
        .str.contains(r"[.!?]\s")
    )
    return (
        later.join(texts.select(ROW, TEXT), on=ROW)
        .filter(~between)
        .select(ROW, "astart", "aident", akey=pl.concat_list("akey"))
    )


def _predicate() -> pl.Expr:
    """ "a <noun>" said of the subject: after a copula or a comma that follows the subject's
    own word ("she is a mother", "Emily, a nurse"), not another person's ("the doctor, a
    woman")."""
    said_of = pl.col("said_of")
    subject_word = (
        said_of.is_in(["who", "that"])
        | (said_of == pl.col("skey").str.to_lowercase())
        | (said_of == pl.col("snoun"))
        | (said_of == pl.col("sattr").replace_strict(_PRONOUN_OF, default=None))
    )
    return (
        pl.col("det").is_in(INDEFINITE)
        & pl.col("lead").is_in(_PREDICATE_LEAD)
        & subject_word
        & ~pl.col("apposed_to_relation")
    )


def _reason(dim: str) -> pl.Expr:
    det = pl.col("det")
    quoted = pl.format("'{} {}'", det, pl.col("match"))
    is_subject = pl.col("start") == pl.col("sstart")
    relation = det.is_in(POSSESSIVE) | det.str.contains(r"['’]s$|s['’]$")
    # Before a subject chosen further in, its own possessive in the same sentence, with no noun
    # of its attribute before it: "After her husband left, a Black female teacher applied".
    cataphoric = (
        ~pl.col("shinted")
        & (pl.col("concept") == "their")
        & (pl.col("attribute") == pl.col("sattr"))
        & (pl.col("nouns_before") == 0)
        & (pl.col("sentence") == pl.col("ssentence"))
    )
    own = is_subject | (pl.col("start") == pl.col("astart")) | (pl.col("start") == pl.col("lstart"))
    return (
        pl.when(own.fill_null(False) | pl.col("sattr").is_null())
        .then(None)
        .when((pl.col("start") < pl.col("sstart")) & cataphoric)
        .then(None)
        .when(pl.col("start") < pl.col("sstart"))
        .then(pl.lit("another person: mentioned before the subject"))
        .when(~pl.col("pronoun") & ~pl.col("name") & relation)
        .then(pl.format("another person: a relation, {}", quoted))
        .when(pl.col("attribute") != pl.col("sattr"))
        .then(pl.format("another person: a {} term, not the subject's", "attribute"))
        .when(pl.col("name"))
        .then(
            pl.when(pl.col("ident") == pl.col("sident"))
            .then(None)
            .otherwise(pl.lit("another person: another name than the subject's"))
        )
        .when(pl.col("pronoun"))
        .then(
            pl.when(
                (pl.col("concept") == "them") & (pl.col("clause_subject") == pl.col("attribute"))
            )
            .then(pl.lit("another person: the object of a subject pronoun in its clause"))
            .otherwise(None)
        )
        .when(pl.lit(dim == "gender") & (pl.col("plural") != pl.col("splural")))
        .then(pl.lit("another person: a plural noun, the subject is one person"))
        .when(det.is_in(INDEFINITE))
        .then(
            pl.when(_predicate())
            .then(None)
            .otherwise(pl.format("another person: {}, not said of the subject", quoted))
        )
        .when(det.is_in(DEFINITE) & pl.lit(dim == "gender"))
        .then(
            pl.when(pl.col("skeys").list.contains(pl.col("key")) & ~pl.col("other_one"))
            .then(None)
            .otherwise(pl.format("another person: {}, not the subject's noun", quoted))
        )
        .otherwise(None)
    )


def hint_starts(texts: pl.DataFrame, hint: pl.Expr) -> pl.Expr:
    """Where the hint phrase first occurs in each prompt (null when it does not)."""
    return pl.col(TEXT).str.find(hint, literal=True)
