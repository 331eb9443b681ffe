"""Apply planned substitutions to every prompt at once and record each change.

Each match is joined with every variant planned for its prompt; a join with the lexicon's
target table gives the new word, the grammar rules add the agreeing verb and article, and the
text is rebuilt from slices of the original between the changes: what is not substituted comes
back byte for byte. Python runs only over distinct words (verb and article choice), never rows.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from pairwise_polars.counterfactual._case import styled, transfer_case
from pairwise_polars.counterfactual._grammar import (
    ADVERBS,
    NOUN_FORMS,
    indefinite_article,
    noun_reading,
    plural_verb,
    same_case,
)
from pairwise_polars.counterfactual._lexicon import IGNORE, NEUTRAL
from pairwise_polars.counterfactual._matches import ROW, TEXT
from pairwise_polars.counterfactual._scope import KEEP

NOTE = "__cf_note"
"""A column of matches: why a change was made, for the audit (null for a plain change)."""

VARIANT = [ROW, "role", "target"]
SUBSTITUTION = pl.Struct(
    {
        "source": pl.String,
        "target": pl.String,
        "start": pl.Int64,
        "end": pl.Int64,
        "reason": pl.String,
    }
)
"""One change: ``original[start:end] == source`` became ``target`` (character offsets). A term
left alone (another person's, see ``_scope``) is listed with ``target == source`` and its
``reason``; ``reason`` is null for a change."""


def substitute(
    texts: pl.DataFrame,
    matches: pl.DataFrame,
    plan: pl.DataFrame,
    targets: pl.DataFrame,
    case_style: str = "capitalized",
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Return (variants, failures).

    ``matches``: found terms with their lexicon reading (attribute, concept, index, canonical),
    ``tdim`` (the dimension whose targets apply), ``fixed`` (the attribute a placeholder of a
    dimension not under test is filled with) and ``placeholder``. ``plan``: ``ROW``, role, target
    (an attribute or ``neutral``) and source (the prompt's own attribute, or null).
    ``variants``: ``VARIANT`` columns, ``input``, ``substitutions``. ``failures``: ``VARIANT``
    columns and a ``reason`` for variants that cannot be made.
    """
    out = (
        pl.when((pl.col("attribute") == IGNORE) | pl.col(KEEP).is_not_null())
        .then(pl.col("attribute"))
        .when(pl.col("fixed").is_not_null())
        .then(pl.col("fixed"))
        .when(pl.col("placeholder") | (pl.col("target") == NEUTRAL))
        .then(pl.col("target"))
        .when(pl.col("attribute") == pl.col("source"))
        .then(pl.col("target"))
        .when(pl.col("attribute") == pl.col("target"))
        .then(pl.col("source"))
        .otherwise(pl.col("attribute"))
    )
    subs = (
        matches.join(plan, on=ROW)
        .with_columns(out=out)
        .filter(pl.col("placeholder") | (pl.col("out") != pl.col("attribute")))
        .join(
            targets,
            left_on=["tdim", "concept", "out", "nclass"],
            right_on=["dimension", "concept", "attribute", "nclass"],
            how="left",
        )
    )
    failures = (
        subs.filter(pl.col("terms").is_null())
        .select(
            *VARIANT,
            reason=pl.format(
                "no {} form of '{}' (concept '{}' of {})", "out", "match", "concept", "tdim"
            ),
        )
        .unique(VARIANT, keep="first", maintain_order=True)
    )
    index = pl.when(pl.col("index") < pl.col("terms").list.len()).then("index").otherwise(0)
    subs = (
        subs.filter(pl.col("terms").is_not_null())
        .with_columns(term=pl.col("terms").list.get(index))
        .with_columns(term=_noun_form(pl.col("term")))
        .with_columns(term=styled(pl.col("term"), pl.col("tdim"), case_style))
        .with_columns(
            new=transfer_case(
                pl.col("match"), pl.col("canonical"), pl.col("term"), pl.col("initial")
            )
        )
    )
    changes = pl.concat(
        [_removals(subs), _verbs(subs), _articles(subs), _kept(matches, plan)],
        how="diagonal_relaxed",
    ).join(plan.select(VARIANT), on=VARIANT)
    starts = matches.select(ROW, "start")
    extras = changes.filter(pl.col("extra")).join(starts, on=[ROW, "start"], how="anti")
    changes = pl.concat([changes.filter(~pl.col("extra")), extras])
    return _rebuild(texts, plan, changes), failures


def _noun_form(term: pl.Expr) -> pl.Expr:
    """ "a devout Muslim" moved to Jewish is "a devout Jew": a group's noun where it differs."""
    noun = term.str.to_lowercase().replace_strict(NOUN_FORMS, default=term)
    return pl.when(noun_reading(pl.col("prior"), pl.col("nclass"))).then(noun).otherwise(term)


def _kept(matches: pl.DataFrame, plan: pl.DataFrame) -> pl.DataFrame:
    """Terms left alone, listed in the audit of every row that changes the subject."""
    moved = plan.filter(pl.col("target") != pl.col("source").fill_null(""))
    return (
        matches.filter(pl.col(KEEP).is_not_null())
        .join(moved, on=ROW)
        .select(*VARIANT, "start", "end", new="match", extra=pl.lit(False), reason=pl.col(KEEP))
    )


def _removals(subs: pl.DataFrame) -> pl.DataFrame:
    """The term changes; an empty target also removes the white space after (or before) it."""
    removed = pl.col("term") == ""
    ws = pl.col("ws1").fill_null("").str.len_chars().cast(pl.Int64)
    eat_after = removed & (ws > 0)
    eat_before = removed & ~eat_after & pl.col("space_before")
    note = pl.col(NOTE) if NOTE in subs.columns else pl.lit(None, pl.String)
    return subs.select(
        *VARIANT,
        start=pl.col("start") - eat_before.cast(pl.Int64),
        end=pl.col("end") + pl.when(eat_after).then(ws).otherwise(0),
        new="new",
        extra=pl.lit(False),
        reason=note,
    )


def _verbs(subs: pl.DataFrame) -> pl.DataFrame:
    """After a new "they", the verb agrees: "he has" -> "they have" (over one adverb)."""
    they = subs.filter(
        (pl.col("term").str.to_lowercase() == "they")
        & (pl.col("match").str.to_lowercase() != "they")
        & pl.col("tok1").is_not_null()
    )
    skip = pl.col("tok1").str.to_lowercase().is_in(list(ADVERBS)) & pl.col("tok2").is_not_null()
    length = pl.col("tok1").str.len_chars() + pl.col("ws2").str.len_chars()
    verbs = they.select(
        *VARIANT,
        verb=pl.when(skip).then("tok2").otherwise("tok1"),
        following=pl.when(skip).then(None).otherwise("tok2"),
        start=pl.col("end")
        + pl.col("ws1").str.len_chars()
        + pl.when(skip).then(length).otherwise(0),
    )
    verbs = _map_distinct(verbs, ["verb", "following"], plural_verb, "new")
    return _changed(verbs, "verb")


def _articles(subs: pl.DataFrame) -> pl.DataFrame:
    """ "a"/"an" before a changed word agrees with it: "a white" -> "an Asian"."""
    follow = pl.when(pl.col("term") != "").then("new").otherwise("tok1")
    arts = subs.filter(pl.col("art").is_not_null()).select(
        *VARIANT,
        art="art",
        follow=follow,
        start=pl.col("start") - pl.col("art_ws").str.len_chars() - pl.col("art").str.len_chars(),
    )
    arts = _map_distinct(arts, ["follow", "art"], _article, "new")
    return _changed(arts, "art")


def _article(follow: str | None, old: str) -> str | None:
    article = indefinite_article(follow) if follow else None
    return same_case(article, old) if article else None


def _changed(words: pl.DataFrame, old: str) -> pl.DataFrame:
    """The extra edits of ``words`` whose ``new`` differs from the word in column ``old``
    (which starts at ``start``)."""
    changed = pl.col("new").is_not_null() & (pl.col("new") != pl.col(old))
    return words.filter(changed).select(
        *VARIANT,
        start=pl.col("start").cast(pl.Int64),
        end=(pl.col("start") + pl.col(old).str.len_chars()).cast(pl.Int64),
        new="new",
        extra=pl.lit(True),
    )


def _map_distinct(
    frame: pl.DataFrame, keys: list[str], fn: Callable[..., str | None], name: str
) -> pl.DataFrame:
    """Add ``fn(*keys)`` as column ``name``, calling ``fn`` once per distinct key, not per row."""
    distinct = frame.select(keys).unique()
    values = pl.Series(name, [fn(*row) for row in distinct.iter_rows()], dtype=pl.String)
    return frame.join(distinct.with_columns(values), on=keys, how="left", nulls_equal=True)


def _rebuild(texts: pl.DataFrame, plan: pl.DataFrame, changes: pl.DataFrame) -> pl.DataFrame:
    """Rebuild each variant from original slices and the changes, in order of position."""
    changes = changes.sort([*VARIANT, "start", "extra"])
    before = pl.col("end").cum_max().shift(1).over(VARIANT).fill_null(0)
    changes = (
        changes.with_columns(before=before)
        .filter(~pl.col("extra") | (pl.col("start") >= pl.col("before")))
        .with_columns(start=pl.max_horizontal("start", "before"))
        .with_columns(before=pl.col("end").shift(1).over(VARIANT).fill_null(0))
        .join(texts, on=ROW)
    )
    text = pl.col(TEXT)
    pieces = changes.group_by(VARIANT).agg(
        body=pl.concat_str(
            text.str.slice(pl.col("before"), pl.col("start") - pl.col("before")), pl.col("new")
        ).str.join(""),
        last=pl.col("end").last(),
        substitutions=pl.struct(
            source=text.str.slice(pl.col("start"), pl.col("end") - pl.col("start")),
            target="new",
            start="start",
            end="end",
            reason="reason",
        ),
    )
    return (
        plan.join(texts, on=ROW)
        .join(pieces, on=VARIANT, how="left")
        .select(
            *VARIANT,
            input=pl.when(pl.col("body").is_null())
            .then(text)
            .otherwise(pl.concat_str("body", text.str.slice(pl.col("last")))),
            substitutions=pl.col("substitutions").fill_null(
                pl.lit([], dtype=pl.List(SUBSTITUTION))
            ),
        )
    )
