"""Word overlap: how differently two responses are worded (the heuristic's score before v2).

Word-set Jaccard similarity of the two outputs after masking the terms expected to differ
(gendered pronouns, nouns and titles, the pair's attribute words, and the words that differ
between the two inputs). It measures wording, not treatment: two paraphrases of one decision
and a reversed decision in similar words overlap alike. Kept as a signal column
(``heuristic_scores(..., signals=True)``) for inspection and for the benchmark's comparison; it is
no part of any score.
"""

from __future__ import annotations

import polars as pl

MASK_TERMS = (
    "he", "she", "him", "her", "his", "hers", "himself", "herself", "they", "them", "their",
    "theirs", "themself", "themselves", "mr", "mrs", "ms", "miss", "mx", "sir", "madam", "trans",
    "man", "woman", "men", "women", "male", "female", "boy", "girl", "boys", "girls", "guy", "gal",
    "gentleman", "lady", "gentlemen", "ladies", "husband", "wife", "son", "daughter", "father",
    "mother", "dad", "mom", "mum", "brother", "sister", "uncle", "aunt", "nephew", "niece",
    "grandfather", "grandmother", "grandson", "granddaughter", "boyfriend", "girlfriend", "king",
    "queen", "prince", "princess", "actor", "actress", "waiter", "waitress", "chairman",
    "chairwoman", "spokesman", "spokeswoman", "businessman", "businesswoman", "salesman",
    "saleswoman", "masculine", "feminine", "nonbinary", "transgender",
)  # fmt: skip
"""Gendered words masked in every pair (besides the pair's own attribute and input words)."""


def _word_hashes(text: pl.Expr) -> pl.Expr:
    # Splitting on spaces after blanking punctuation is ~30% cheaper than extract_all(r"\w+");
    # the empty strings it leaves are masked with the other terms. Hashes make the set
    # operations about twice as fast as on strings.
    words = text.fill_null("").str.to_lowercase().str.replace_all(r"[^\w ]+", " ")
    return words.str.split(" ").list.eval(pl.element().hash())


def with_overlap(lf: pl.LazyFrame, rows: pl.Expr, name: str, prefix: str) -> pl.LazyFrame:
    """Add column ``name``: word-set Jaccard similarity of ``output_a`` and ``output_b`` after
    masking, in [0, 1], on ``rows`` (null elsewhere). Helper columns start with ``prefix``."""

    def col(helper: str) -> pl.Expr:
        return pl.col(prefix + helper)

    def words(column: str) -> pl.Expr:
        # Other rows get null text, which costs next to nothing to split.
        return _word_hashes(pl.when(rows).then(pl.col(column)))

    # Terms expected to differ between the two sides are no evidence of different treatment:
    # gendered words, the pair's attribute words, and the words that differ between the two
    # inputs (the counterfactual substitution itself: "Joseph" / "Kelly").
    inputs_a, inputs_b = col("inputs_a"), col("inputs_b")
    mask = pl.concat_list(
        pl.lit(pl.Series([[*MASK_TERMS, ""]])).list.eval(pl.element().hash()),
        words("attribute_a"),
        words("attribute_b"),
        inputs_a.list.set_difference(inputs_b),
        inputs_b.list.set_difference(inputs_a),
    )
    words_a, words_b = col("words_a"), col("words_b")
    # Set operations return distinct values, so the union's size follows from the others'.
    shared = words_a.list.set_intersection(words_b).list.len()
    union = words_a.list.len() + words_b.list.len() - col("shared")
    # Each step is a column of its own: polars does not share sub-expressions reliably across
    # nested uses, and a recomputed word list costs more than the whole rest.
    return (
        lf.with_columns(
            words("input_a").alias(prefix + "inputs_a"),
            words("input_b").alias(prefix + "inputs_b"),
        )
        .with_columns(mask.alias(prefix + "mask"))
        .with_columns(
            words("output_a").list.set_difference(col("mask")).alias(prefix + "words_a"),
            words("output_b").list.set_difference(col("mask")).alias(prefix + "words_b"),
        )
        .with_columns(shared.alias(prefix + "shared"))
        # Two empty sets ("He agrees." / "She agrees." after masking) are identical texts.
        .with_columns(
            pl.when(~rows)
            .then(None)
            .when(union == 0)
            .then(1.0)
            .otherwise(col("shared") / union)
            .alias(name)
        )
        .drop(
            *(prefix + h for h in ("inputs_a", "inputs_b", "mask", "words_a", "words_b", "shared"))
        )
    )
