"""Relations of the subject under a gender swap: "He says his wife ..." moved to female.

The subject's partner (wife, husband, girlfriend, boyfriend, fiancé(e)) is another person, so
the subject scope leaves it alone, and "She says her wife ..." is a different story, not the
same one told of a woman. ``relations="swap"`` (the default) moves the partner with the
subject, so the couple stays what it was: "his wife" -> "her husband", "her wife" -> "his
husband". ``relations="keep"`` leaves the partner as written: "his wife" -> "her wife". Either
way the audit lists the partner with the rule that was applied (``reason``).

A partner is the subject's when its possessive is the subject's own ("his" of a male subject,
"her" of a female one, maybe with "late", "former", ... between); a partner of someone else
("her landlord's wife", "the tenant's boyfriend") stays. Moved, the
partner takes its pronouns later in the sentence along ("her husband lost his job" -> "his
wife lost her job").
"""

from __future__ import annotations

import polars as pl

from pairwise_polars.counterfactual._matches import ROW, TEXT
from pairwise_polars.counterfactual._scope import KEEP
from pairwise_polars.counterfactual._substitute import NOTE

RELATIONS = ("swap", "keep")
PARTNERS = ("husband", "husbands", "fiance", "fiances", "boyfriend", "boyfriends")
"""The gender lexicon's concepts of a partner (the male term names the concept)."""
_I = "__cf_i"
_REACH = 12  # characters from the end of the possessive to the partner ("her late husband")
_BEFORE_PARTNER = ("late", "former", "new", "current", "future", "longtime", "elderly", "sick")
"""A word allowed between the possessive and the partner: "her late husband"."""
SWAPPED = "a relation of the subject: moved with the subject (relations='swap')"
FOLLOWS = "the pronoun of the subject's partner: moved with the partner (relations='swap')"
_PRONOUNS = ("they", "them", "their", "theirs", "themselves")
KEPT = "a relation of the subject: kept as written (relations='keep')"


def partners(
    matches: pl.DataFrame, source: pl.DataFrame, relations: str, texts: pl.DataFrame
) -> pl.DataFrame:
    """``matches`` with the subject's partners moved with it (``"swap"``) or kept with the
    rule in ``KEEP`` (``"keep"``); ``source``: ``ROW`` and the subject's attribute."""
    subject_word = pl.when(pl.col("source") == "male").then(pl.lit("his")).otherwise(pl.lit("her"))
    prior = pl.col("prior").list
    owner = (
        pl.when(prior.get(0, null_on_oob=True).str.to_lowercase().is_in(_BEFORE_PARTNER))
        .then(prior.get(1, null_on_oob=True))
        .otherwise(pl.col("prev"))
        .str.to_lowercase()
    )
    # the possessive itself must be the subject's: not "a landlord and his wife"
    marked = matches.join(source.select(ROW, "source"), on=ROW, how="left").with_row_index(_I)
    owned = (
        marked.filter(pl.col("concept").is_in(PARTNERS))
        .select(_I, ROW, "start")
        .join(
            matches.filter(
                (pl.col("concept").is_in(["their"]) | pl.col("concept").str.starts_with("name"))
                & pl.col(KEEP).is_null()
            ).select(ROW, owner_end="end"),
            on=ROW,
        )
        .filter(pl.col("owner_end").is_between(pl.col("start") - _REACH, pl.col("start")))
        .select(_I)
        .unique()
    )
    marked = marked.with_columns(pl.col(_I).is_in(owned[_I].implode()).alias("__cf_owned"))
    # ... or the subject's name in the possessive: "Arjun's wife" (the name moves with it)
    names = (
        matches.filter(pl.col("concept").str.starts_with("name") & pl.col(KEEP).is_null())
        .group_by(ROW)
        .agg(owner_names=pl.col("match").str.to_lowercase() + "'s")
    )
    marked = marked.join(names, on=ROW, how="left")
    by_name = pl.col("owner_names").list.contains(owner.str.replace("’s$", "'s"))
    partner = (
        pl.col("concept").is_in(PARTNERS)
        & pl.col(KEEP).is_not_null()
        & ((owner == subject_word) | by_name)
        & pl.col("__cf_owned")
    ).fill_null(False)
    if relations == "swap":
        marked = marked.with_columns(partner.alias("__cf_partner"))
        marked = marked.with_columns(
            pl.when("__cf_partner").then(pl.lit(SWAPPED)).alias(NOTE),
            pl.when("__cf_partner").then(None).otherwise(pl.col(KEEP)).alias(KEEP),
        )
        marked = _partner_pronouns(marked, pl.col("__cf_partner"), texts).drop("__cf_partner")
    else:
        marked = marked.with_columns(
            pl.lit(None, pl.String).alias(NOTE),
            pl.when(partner).then(pl.lit(KEPT)).otherwise(pl.col(KEEP)).alias(KEEP),
        )
    return marked.drop("source", _I, "__cf_owned", "owner_names")


def _partner_pronouns(marked: pl.DataFrame, partner: pl.Expr, texts: pl.DataFrame) -> pl.DataFrame:
    """A pronoun of the partner's attribute after a moved partner, in its sentence, is the
    partner's: it moves too."""
    moved = (
        marked.filter(partner)
        .group_by(ROW)
        .agg(p_end=pl.col("end").min(), p_attr=pl.col("attribute").first())
    )
    if moved.is_empty():
        return marked
    text = pl.col(TEXT)
    between = text.str.slice(pl.col("p_end"), (pl.col("start") - pl.col("p_end")).clip(0))
    follows = (
        pl.col("concept").is_in(_PRONOUNS)
        & pl.col(KEEP).is_not_null()
        & (pl.col("attribute") == pl.col("p_attr"))
        & (pl.col("start") > pl.col("p_end"))
        & ~between.str.contains(r"[.!?]")
    ).fill_null(False)
    return (
        marked.join(moved, on=ROW, how="left")
        .join(texts.select(ROW, TEXT), on=ROW, how="left")
        .with_columns(
            pl.when(follows).then(pl.lit(FOLLOWS)).otherwise(pl.col(NOTE)).alias(NOTE),
            pl.when(follows).then(None).otherwise(pl.col(KEEP)).alias(KEEP),
        )
        .drop("p_end", "p_attr", TEXT)
    )
