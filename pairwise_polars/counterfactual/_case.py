"""Case transfer: a substituted word keeps the case pattern of the word it replaces.

"he" -> "she", "He" -> "She", "HIS" -> "HER". A term whose lexicon form is capitalised (a name,
"Black", "Asian") is capitalised for itself, not for its position, so mid-sentence it gives the
target's own form ("a Black male" -> "a white male") and only at the start of a sentence is the
target capitalised ("Black patients" -> "White patients"). That keeps a swap reversible.
"""

from __future__ import annotations

import polars as pl

_FIRST_UPPER = r"^\P{L}*\p{Lu}"  # the first letter is upper case ("{They}" counts)


def transfer_case(
    source: pl.Expr, canonical: pl.Expr, target: pl.Expr, initial: pl.Expr
) -> pl.Expr:
    """``target`` in the case of ``source``.

    ``canonical`` is the source term's lexicon form, ``initial`` whether the source starts a
    sentence. All UPPER (two letters or more) gives UPPER; a capitalised source gives a
    capitalised target unless the capital belongs to the term itself (see the module docstring).
    """
    letters = source.str.count_matches(r"\p{L}")
    upper = (letters > 1) & (source == source.str.to_uppercase())
    own_capital = canonical.str.contains(_FIRST_UPPER) & ~initial
    capitalised = pl.concat_str(target.str.slice(0, 1).str.to_uppercase(), target.str.slice(1))
    return (
        pl.when(upper)
        .then(target.str.to_uppercase())
        .when(source.str.contains(_FIRST_UPPER) & ~own_capital)
        .then(capitalised)
        .otherwise(target)
    )
