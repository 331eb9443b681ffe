"""Small English heuristics: the next word's class, subject-verb agreement, "a" versus "an".

They decide what a lexicon alone cannot: whether "her" is an object ("gave her the keys",
"with her.") or a determiner ("her health"), whether "male" is a noun ("a male suffering from")
or an adjective ("a male nurse"), the verb after a new "they" ("he has" -> "they have"), and the
article before a new word ("a white" -> "an Asian"). Each is a rule on one neighbouring word,
chosen to be predictable and tested, not a parser: the audit column shows every change made.
"""

from __future__ import annotations

import re

import polars as pl

WORD = "word"  # a content word: "her health" (determiner), "a male nurse" (adjective)
PARTICIPLE = "participle"  # a content word in -ing/-ed: "her wedding", "a male suffering"
FUNCTION = "function"  # a function word: "gave her the", "a male who", "his is"
END = "end"  # punctuation or end of text: "with her.", "is his"
NEXT_CLASSES = (WORD, PARTICIPLE, FUNCTION, END)

FUNCTION_WORDS = frozenset(
    """
    a an the this that these those some any every each no my your his her its our their all both
    either neither another such much many more most several few
    to in on at for with about from by of into onto upon over under after before through during
    without within against between among across along around behind beyond near off out up down
    toward towards via despite like unlike per except away
    and or but nor so yet because if when while although though since unless until whether than
    as which who whom whose what where why how
    i you he she it we they me him us them myself yourself himself herself itself ourselves
    themselves
    is are was were be been being has have had does do did would can could shall should must
    not too also again yesterday today tomorrow now then there here twice once well
    go get know see feel stay leave come take make think speak understand become believe
    remember forget sit stand
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
