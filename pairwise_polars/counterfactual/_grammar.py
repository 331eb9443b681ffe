"""Small English heuristics: the next word's class, subject-verb agreement, "a" versus "an".

They decide what a lexicon alone cannot: whether "her" is an object ("gave her the keys",
"with her.") or a determiner ("her health"), whether "male" is a noun ("a male suffering from")
or an adjective ("a male nurse"), the verb after a new "they" ("he has" -> "they have"), and the
article before a new word ("a white" -> "an Asian"). Each is a rule on the neighbouring words
(and word lists in ``_word_classes``), chosen to be predictable and tested, not a parser: the
audit column shows every change made.
"""

from __future__ import annotations

import re

import polars as pl

from pairwise_polars.counterfactual import _word_classes as words

WORD = "word"  # a content word: "her health" (determiner), "a male nurse" (adjective)
PARTICIPLE = "participle"  # a content word in -ing/-ed: "her wedding", "a male suffering"
FUNCTION = "function"  # a function word: "gave her the", "a male who", "his is"
END = "end"  # punctuation or end of text: "with her.", "is his"
OBJECT = "object"  # a content word the term does not determine: "keep her safe", "gave her
# flowers", "drove her home" (see ``object_position``); a row without it reads as ``word``
NEXT_CLASSES = (WORD, PARTICIPLE, FUNCTION, END, OBJECT)

FUNCTION_WORDS = frozenset(
    """
    a an the this that these those some any each no my your his her its our their all both
    either neither another such
    to in on at for with about from by of into onto upon over under after before through during
    without within against between among across along around behind beyond near off out up down
    toward towards via despite like unlike per except away
    and or but nor so yet because if when while although though since unless until whether than
    as which who whom whose what where why how
    i you he she it we they me him us them myself yourself himself herself itself ourselves
    themselves
    is are was were be been being has have had does do did would can could shall should must
    not too also again yesterday today tomorrow now then there here twice once well
    go get know see feel come take make think speak understand become believe remember forget
    sit something anything nothing everything someone anyone everyone
    """.split()  # noqa: SIM905 (a word list reads better as text)
)
"""Words after which "her" is an object and "his" a pronoun; a noun never follows them."""

ADVERBS = frozenset(
    """
    also always never often still just now really only already usually sometimes recently then
    soon clearly certainly probably currently rarely seldom actually even finally simply
    frequently generally mostly nearly almost truly perhaps thus therefore however nevertheless
    occasionally regularly typically apparently obviously reportedly allegedly constantly
    consistently immediately quickly slowly suddenly eventually initially previously later once
    mainly largely definitely strongly especially personally genuinely hardly barely merely
    """.split()  # noqa: SIM905
)
"""Adverbs that may stand between a subject and its verb ("he also has")."""

_IRREGULAR = {
    "is": "are",
    "was": "were",
    "has": "have",
    "does": "do",
    "isn't": "aren't",
    "wasn't": "weren't",
    "hasn't": "haven't",
    "doesn't": "don't",
    "focuses": "focus",
}
_ES_STEMS = re.compile(r"(?:ss|sh|ch|x|zz|o)es$")
_PERFECT = frozenset({"been", "got", "gotten", "had"})
_AN_EXCEPTIONS = re.compile(r"^(?:uni|use|usu|uti|ure|uro|eu|ewe|one\b|once|ubi|uk)")
_AN_SILENT_H = re.compile(r"^(?:hour|honest|honor|honour|heir)")
_AN_DIGITS = re.compile(r"^(?:8|11(?!\d)|18(?!\d))")
_AN_LETTERS = frozenset("aefhilmnorsx")  # letters whose name starts with a vowel sound


def next_class(token: pl.Expr) -> pl.Expr:
    """Class of the word after a match (``token`` is null at punctuation or end of text)."""
    lower = token.str.to_lowercase()
    return (
        pl.when(token.is_null())
        .then(pl.lit(END))
        .when(lower.is_in(list(FUNCTION_WORDS)))
        .then(pl.lit(FUNCTION))
        .when(lower.str.contains(r"^\w{2,}(?:ing|ed)$"))
        .then(pl.lit(PARTICIPLE))
        .otherwise(pl.lit(WORD))
    )


_OBJECT_STARTS = frozenset(
    "the a an this that these those his her their my your our its it them him me us".split()  # noqa: SIM905
)


def object_position(
    prev: pl.Expr,
    token: pl.Expr,
    following: pl.Expr,
    before_prev: pl.Expr | None = None,
    third: pl.Expr | None = None,
) -> pl.Expr:
    """Whether a term followed by the content word ``token`` stands as an object, not as the
    determiner of ``token``: the reading that tells "keep her safe" from "her safe".

    ``prev`` is the word just before the term (null after punctuation), ``following`` the word
    after ``token``. One rule per construction, each on words listed in ``_word_classes``:

    - a particle or adverb: "left her alone", "yelled at her relentlessly", "called her back",
      "drove her home", "liked her more than";
    - a bare verb: "hoped her enjoy", after let/make/help/see...: "let her stay", "had her
      arrested", "saw her crying";
    - a complement after keep/make/find/consider...: "keep her safe", "kept her informed";
    - a second object after give/send/offer/pay...: "gave her flowers", "provide her new
      documents", "gave her blood pressure medication" (``third`` is the word after
      ``following``), "charged her 200 dollars", "wished her happy birthday" (but "told her
      story", "sent her kids": nouns she is more likely to own);
    - a role after name/appoint/elect/make: "named her captain", "made her partner";
    - a time adverbial: "expelled her last year", "saw her next week".

    Two readings win over all of these: after a participle used as a preposition, with no verb
    form before it, "her" is a determiner ("given her record", but "has given her a loan":
    ``before_prev`` is the word before ``prev``); and so it is before what one pays of one's own
    ("paid her taxes", "paid her way").
    """
    p, t, f = prev.str.to_lowercase(), token.str.to_lowercase(), following.str.to_lowercase()
    p2 = pl.lit(None, pl.String) if before_prev is None else before_prev.str.to_lowercase()
    f3 = pl.lit(None, pl.String) if third is None else third.str.to_lowercase()
    preposition = p.is_in(list(words.PREPOSITION_PARTICIPLES)) & ~p2.is_in(
        list(words.AUXILIARIES)
    ).fill_null(False)
    own_payment = p.is_in(list(words.PAY_VERBS)) & t.is_in(list(words.OBLIGATIONS))
    open_after = f.is_null() | f.is_in(list(FUNCTION_WORDS))  # no noun of ``token`` follows
    # ... but a finite verb after it makes "her <word>" a clause's subject: "thinks her
    # bookkeeping is weak", "found her cooking was bland"
    complement_after = open_after & ~f.is_in(list(words.FINITE_VERBS)).fill_null(False)
    participle = t.str.contains(r"^\w{2,}(?:ing|ed)$") & ~t.is_in(list(words.ING_NOUNS))
    adjective = _adjective(t)
    adverb = t.str.contains(r"^[a-z]{3,}ly$") & ~t.is_in(list(words.LY_WORDS))
    second_object = _second_object(p, t, f, f3, adjective=adjective, open_after=open_after)
    ordinal_end = t.is_in(["first", "last", "again", "second"]) & open_after  # "call her first"
    time_adverbial = (
        t.is_in(["last", "next"])
        & f.is_in(list(words.TIME_NOUNS)).fill_null(False)
        & ~p.is_in(list(words.PREPOSITIONS)).fill_null(False)  # "during her last year"
    )
    return (
        (
            ((t.is_in(list(words.PARTICLES)) | adverb | (t == "more")) & open_after)
            | ordinal_end
            | time_adverbial
            | (p.is_in(list(words.NAMING_VERBS)) & t.is_in(list(words.ROLE_NOUNS)))
            | ((t == "next") & (f == "to"))  # "seated her next to"
            | ((t == "back") & p.is_in(list(words.BACK_VERBS)))
            | ((t == "home") & p.is_in(list(words.MOTION_VERBS)))
            | t.is_in(list(words.PURE_VERBS))
            | p.is_in(["let", "lets", "letting"])
            | (
                p.is_in(list(words.BARE_INFINITIVE_VERBS))
                & (
                    t.is_in(list(words.NOUN_LIKE_VERBS))
                    | (participle & complement_after)
                    | f.is_in(list(_OBJECT_STARTS)).fill_null(False)  # "had her sign the form"
                )
            )
            | (p.is_in(list(words.COMPLEMENT_VERBS)) & (adjective | participle) & complement_after)
            | (p.is_in(list(words.COMPLEMENT_VERBS)) & t.is_in(["more", "less"]))
            | (p.is_in(list(words.DITRANSITIVE_VERBS)) & second_object)
        )
        & ~preposition
        & ~own_payment
    ).fill_null(False)


def _adjective(t: pl.Expr) -> pl.Expr:
    """Whether ``t`` reads as an adjective: listed, or a long word with an adjective's suffix
    ("keep her safe", "found her helpful")."""
    return t.is_in(list(words.ADJECTIVES)) | (
        (t.str.len_chars() >= 6)
        & t.str.contains("(?:" + "|".join(words.ADJECTIVE_SUFFIXES) + ")$")
        & ~t.is_in(list(words.NOT_ADJECTIVES))
    )


def _second_object(
    p: pl.Expr, t: pl.Expr, f: pl.Expr, f3: pl.Expr, *, adjective: pl.Expr, open_after: pl.Expr
) -> pl.Expr:
    """Whether the words from ``t`` on read as a second object after give/send/offer/pay
    ("gave her flowers"), not as what "her" owns ("told her story", "sent her kids"); ``p``,
    ``t``, ``f``, ``f3`` are the words around the term, lowercased."""
    # a possessive 's is no plural: "sell her late husband's car" keeps "her" a determiner
    plural = t.str.contains(r"^[a-z][a-z'-]+[^sui'’]s$")
    plural_next = f.str.contains(r"^[a-z][a-z'-]+[^su'’]s$").fill_null(False)
    return ~t.is_in(list(words.RELATION_NOUNS)) & (
        t.is_in(list(words.QUANTIFIERS))
        | t.str.contains(r"^\d")
        | t.is_in(list(words.MASS_NOUNS))
        | plural
        # a noun phrase of two words whose head has no article: "math questions", "tough
        # questions", "incorrect information"
        | plural_next
        | f.is_in(list(words.MASS_NOUNS)).fill_null(False)
        # three words: "gave her blood pressure medication", "sent her job training leaflets"
        | (
            ~t.is_in(list(FUNCTION_WORDS))
            & ~f.is_in(list(FUNCTION_WORDS))
            & (f3.is_in(list(words.MASS_NOUNS)) | f3.str.contains(r"^[a-z][a-z'-]+[^su]s$"))
        ).fill_null(False)
        | p.is_in(["wish", "wishes", "wished", "wishing"])
        | (adjective & open_after)  # "charged her extra"
    )


NOUN_FORMS = {"jewish": "Jew"}
"""Adjectives of a group whose noun differs ("a devout Muslim" -> "a devout Jew"); the other
groups' adjective is their noun too ("a Muslim", "a Hindu")."""


def noun_reading(prior: pl.Expr, next_class: pl.Expr) -> pl.Expr:
    """Whether a term stands as a noun after an article, maybe over one or two adjectives, with
    no word of its own after it: "a Muslim who", "a devout Muslim." (not "a Muslim man", "is
    Muslim.")."""
    article = ["a", "an"]
    word = r"^[A-Za-z][\w'’-]*$"

    def at(i: int) -> pl.Expr:
        return prior.list.get(i, null_on_oob=True).str.to_lowercase()

    after_article = (
        at(0).is_in(article)
        | (at(1).is_in(article) & at(0).str.contains(word))
        | (at(2).is_in(article) & at(0).str.contains(word) & at(1).str.contains(word))
    )
    return (after_article & next_class.is_in([FUNCTION, END])).fill_null(False)


def plural_verb(verb: str, following: str | None = None) -> str | None:
    """The verb as it agrees with "they", or None when it needs no change.

    >>> plural_verb("has"), plural_verb("wants"), plural_verb("said")
    ('have', 'want', None)
    """
    lower = verb.lower()
    if lower in ("'s", "’s"):
        plural = "'ve" if (following or "").lower() in _PERFECT else "'re"
        return plural.replace("'", verb[0])
    if lower in _IRREGULAR:
        plural = _IRREGULAR[lower]
    elif (
        lower in FUNCTION_WORDS
        or lower in ADVERBS
        or not lower.isalpha()
        or not lower.endswith("s")
        or lower.endswith(("ss", "us", "is"))
        or len(lower) < 3
    ):
        return None
    elif lower.endswith("ies") and len(lower) > 4:
        plural = lower[:-3] + "y"
    elif _ES_STEMS.search(lower):
        plural = lower[:-2]
    else:
        plural = lower[:-1]
    return same_case(plural, verb)


def indefinite_article(word: str) -> str | None:
    """ "a" or "an" before ``word`` (by its first sound), or None when it cannot tell.

    >>> indefinite_article("Asian"), indefinite_article("European"), indefinite_article("80")
    ('an', 'a', 'an')
    """
    if not word or not word[0].isalnum():
        return None
    if word[0].isdigit():
        return "an" if _AN_DIGITS.match(word) else "a"
    head = re.split(r"[^\w]", word, maxsplit=1)[0]
    if 1 < len(head) <= 5 and head.isupper():  # an acronym is read letter by letter
        return "an" if head[0].lower() in _AN_LETTERS else "a"
    lower = word.lower()
    if lower[0] in "aeiou":
        return "a" if _AN_EXCEPTIONS.match(lower) else "an"
    return "an" if _AN_SILENT_H.match(lower) else "a"


def same_case(word: str, like: str) -> str:
    """``word`` in the case pattern of ``like``: UPPER, Title or as given."""
    letters = [c for c in like if c.isalpha()]
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return word.upper()
    if letters and like.lstrip("'’")[:1].isupper():
        return word[:1].upper() + word[1:]
    return word
