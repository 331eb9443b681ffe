"""Masking an attribute's terms: the text a judge reads with every word that marks the
attribute under test (names, pronouns, group words) replaced by one neutral mark, the same on
both sides of a pair. The judge's audit (``audit="mask"``) judges each pair again so: what
changes is the judge's reaction to the attribute itself.

Terms are found with the counterfactual generator's lexicons (the dimension's every
non-neutral term, names included) and, where rows came from the generator, its substitution
record (``substitutions_a`` / ``substitutions_b``: the words it swapped, which a custom lexicon
may hold and the shipped one not). A row whose dimension the lexicons do not know, or whose
texts hold no term, is reported as not found, never guessed.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from pairwise_polars.counterfactual._lexicon import Lexicon, LexiconSource, load_lexicon
from pairwise_polars.counterfactual._patterns import compile_dimension, term_regex

FOUND = "__pairwise_mask_found"
"""Boolean column :func:`mask_terms` adds: whether any term was found in the row's texts."""
SUBSTITUTIONS = ("substitutions_a", "substitutions_b")


def mask_token(dimension: str) -> str:
    """What a masked term becomes: ``[gender]``, ``[race]`` ..."""
    return f"[{dimension}]"


def mask_terms(
    frame: pl.DataFrame,
    texts: Sequence[str],
    *,
    dimension: str = "dimension",
    lexicons: LexiconSource | None = None,
) -> pl.DataFrame:
    """``frame`` with the ``texts`` columns masked for each row's ``dimension`` and a boolean
    :data:`FOUND` column. A dimension the lexicons lack is masked with the substitution record
    alone (when there is one).

    >>> import polars as pl
    >>> rows = pl.DataFrame({"dimension": ["gender", "flavour"],
    ...     "a": ["She said her plan works.", "Vanilla."], "b": ["Kelly agreed.", "Mint."]})
    >>> mask_terms(rows, ["a", "b"]).rows()  # doctest: +NORMALIZE_WHITESPACE
    [('gender', '[gender] said [gender] plan works.', '[gender] agreed.', True),
     ('flavour', 'Vanilla.', 'Mint.', False)]
    """
    lexicon = lexicons if isinstance(lexicons, Lexicon) else load_lexicon(lexicons)
    if dimension not in frame.columns or frame.is_empty():
        return frame.with_columns(pl.lit(False).alias(FOUND))
    known = set(lexicon.dimensions)
    recorded = _recorded_terms(frame, dimension)
    masked = {c: pl.col(c).cast(pl.String) for c in texts}
    found = pl.lit(False)
    for dim in frame[dimension].drop_nulls().unique().sort().to_list():
        parts = [compile_dimension(lexicon, dim).pattern] if dim in known else []
        extra = recorded.get(dim)
        if extra:
            parts.append(term_regex(pl.DataFrame({"term": extra, "case_sensitive": False})))
        if not parts:
            continue
        pattern = "|".join(p for p in parts if p)
        here = pl.col(dimension) == dim
        hit = pl.any_horizontal(masked[c].str.contains(pattern).fill_null(False) for c in texts)
        found = pl.when(here).then(hit).otherwise(found)
        for c in texts:
            replaced = masked[c].str.replace_all(pattern, mask_token(dim), literal=False)
            masked[c] = pl.when(here).then(replaced).otherwise(masked[c])
    return frame.with_columns(
        *[expr.alias(c) for c, expr in masked.items()], found.fill_null(False).alias(FOUND)
    )


def _recorded_terms(frame: pl.DataFrame, dimension: str) -> dict[str, list[str]]:
    """The words the generator swapped, by dimension (both the source and the target)."""
    columns = [c for c in SUBSTITUTIONS if c in frame.columns]
    if not columns:
        return {}
    parts = []
    for column in columns:
        if not isinstance(frame.schema[column], pl.List):
            continue
        rows = frame.select(dimension, pl.col(column).alias("__s")).explode("__s")
        rows = rows.filter(pl.col("__s").is_not_null()).unnest("__s")
        for side in ("source", "target"):
            if side in rows.columns:
                parts.append(rows.select(dimension, term=pl.col(side).cast(pl.String)))
    if not parts:
        return {}
    terms = (
        pl.concat(parts)
        .filter(pl.col("term").str.contains(r"\w"))
        .unique(maintain_order=True)
        .group_by(dimension, maintain_order=True)
        .agg("term")
    )
    return {d: t for d, t in terms.iter_rows() if d is not None}
