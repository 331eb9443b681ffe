"""One dimension's variant plan: read the prompts' terms, plan the variants, make them, check
the groups."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from pairwise_polars._errors import LexiconError
from pairwise_polars.counterfactual._grammar import OBJECT, PARTICIPLE, WORD
from pairwise_polars.counterfactual._lexicon import (
    IGNORE,
    NEUTRAL,
    ROLE_PREFIX,
    Lexicon,
    term_key,
)
from pairwise_polars.counterfactual._matches import ROW, TEXT, find_matches
from pairwise_polars.counterfactual._names import name_failures, subject_names
from pairwise_polars.counterfactual._patterns import (
    UNKNOWN_PLACEHOLDER,
    compile_dimension,
    compile_placeholders,
    descriptor_words,
)
from pairwise_polars.counterfactual._relations import partners
from pairwise_polars.counterfactual._scope import KEEP, subject_scope
from pairwise_polars.counterfactual._substitute import VARIANT, substitute


@dataclass(frozen=True)
class Options:
    """The checked arguments of ``counterfactuals`` (attribute names in the lexicon's spelling)."""

    lexicon: Lexicon
    strategy: str
    neutral_reference: bool
    placeholders: bool
    bare_placeholders: tuple[str, ...]  # dimensions whose {concept} needs no "dimension:"
    values: Mapping[str, tuple[str, ...]]
    poles: Mapping[str, tuple[str, ...]]
    fill: Mapping[str, str]
    control: bool = True
    scope: str = "subject"
    case_style: str = "capitalized"
    relations: str = "swap"
    keep_alone: bool = False
    """Keep a reference whose every variant failed (the cross of two dimensions does: its
    second pass over a first pass's variant text still holds that cell)."""


def dimension_rows(
    texts: pl.DataFrame, dim: str, opts: Options
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Return (rows, skipped) for one dimension.

    rows: ``ROW``, role, attribute, input, substitutions, ``_order``.
    skipped: ``ROW``, attribute (null when the whole prompt is out), reason.
    """
    present = texts.filter(pl.col(TEXT).is_not_null())
    matches = _read(present, dim, opts)
    if opts.scope == "subject":
        matches, source = subject_scope(matches, present, dim, descriptor_words(opts.lexicon))
        # Roles of a faith (clergy, places of worship) follow the religion, whoever holds them:
        # "a Muslim pastor" or "the rabbi at our church" is half a change.
        role = pl.col("concept").str.starts_with(ROLE_PREFIX).fill_null(False)
        matches = matches.with_columns(pl.when(role).then(None).otherwise(pl.col(KEEP)).alias(KEEP))
        if dim == "gender":
            matches = partners(matches, source, opts.relations, present)
    else:
        matches = matches.with_columns(pl.lit(None, pl.String).alias(KEEP))
        source = _majority(matches)
    has_placeholder = (
        matches.filter(pl.col("placeholder") & (pl.col("tdim") == dim))
        .select(ROW, has_placeholder=pl.lit(True))
        .unique()
    )
    info = (
        texts.select(ROW, TEXT)
        .join(source, on=ROW, how="left")
        .join(has_placeholder, on=ROW, how="left")
    )
    usable = pl.col("source").is_not_null() | pl.col("has_placeholder").fill_null(False)
    none_found = info.filter(~usable).select(
        ROW,
        attribute=pl.lit(None, pl.String),
        reason=pl.when(pl.col(TEXT).is_null())
        .then(pl.lit("the prompt is null"))
        .otherwise(pl.lit(f"no {dim} term found")),
    )
    plan = _plan(info.filter(usable).select(ROW, "source"), dim, opts)
    dims = opts.lexicon.dimensions if opts.placeholders else (dim,)
    targets = pl.concat([compile_dimension(opts.lexicon, d).targets for d in dims])
    variants, failures = substitute(present, matches, plan, targets, opts.case_style)
    if opts.scope == "subject" and _has_names(opts.lexicon, dim):  # its name must follow
        names = subject_names(present, matches, opts.lexicon, dim)
        failures = pl.concat([failures, name_failures(plan, names, dim)])
    rows, dropped = _check_groups(variants.join(plan, on=VARIANT), failures, opts)
    if opts.control:
        rows = pl.concat([rows, _controls(rows, opts)])
    return rows, pl.concat([none_found, dropped])


def _has_names(lexicon: Lexicon, dim: str) -> bool:
    concepts = lexicon.terms.filter(pl.col("dimension") == dim)["concept"]
    return bool(concepts.str.starts_with("name").any())


CONTROL = "control"
_CONTROL_ORDER = 1_000_000  # after every variant of its group
NO_VARIANT = "no variant could be made"
"""Why a prompt (or a crossed prompt) is out: not one of its variants could be made."""


def _controls(rows: pl.DataFrame, opts: Options) -> pl.DataFrame:
    """One control row per group: a copy of the reference (``pole_a``), role ``control``.

    Its response is a second, independent answer to the same input: paired with the row it
    copies, it measures how much two answers differ by sampling alone (the noise floor).
    """
    first = "reference" if opts.strategy == "group" else "pole_a"
    return rows.filter(pl.col("role") == first).with_columns(
        role=pl.lit(CONTROL), _order=pl.lit(_CONTROL_ORDER, pl.Int32)
    )


def _majority(matches: pl.DataFrame) -> pl.DataFrame:
    """``scope="all"``: a prompt's attribute is its most frequent one (ties: the first)."""
    found = matches.filter(~pl.col("placeholder") & (pl.col("attribute") != IGNORE))
    return (
        found.group_by(ROW, "attribute")
        .agg(n=pl.len(), first=pl.col("start").min())
        .sort([ROW, "n", "first"], descending=[False, True, False])
        .group_by(ROW, maintain_order=True)
        .agg(source=pl.col("attribute").first())
    )


def _read(texts: pl.DataFrame, dim: str, opts: Options) -> pl.DataFrame:
    """Matches of the dimension's terms (and of placeholders), with their lexicon reading."""
    compiled = compile_dimension(opts.lexicon, dim)
    pattern = compiled.pattern
    if opts.placeholders:
        holders = compile_placeholders(opts.lexicon, opts.bare_placeholders)
        _check_placeholders(texts, holders.table)
        pattern = f"{holders.pattern}|{pattern}"
    matches = find_matches(texts, pattern).with_columns(
        nclass=pl.when(pl.col("object") & pl.col("nclass").is_in([WORD, PARTICIPLE]))
        .then(pl.lit(OBJECT))
        .otherwise("nclass")
    )
    is_holder = pl.lit(opts.placeholders) & pl.col("match").str.contains(r"^\{.*\}$")
    terms = (
        matches.filter(~is_holder)
        .join(compiled.detect, on=["key", "nclass"])
        .with_columns(tdim=pl.lit(dim), fixed=pl.lit(None, pl.String), placeholder=pl.lit(False))
    )
    if not opts.placeholders:
        return terms
    fills = {d: opts.fill.get(d, NEUTRAL) for d in opts.lexicon.dimensions if d != dim}
    holders_found = (
        matches.filter(is_holder)
        .with_columns(
            key=term_key(pl.col("match").str.slice(1, pl.col("match").str.len_chars() - 2))
        )
        .join(holders.table.select("key", "dimension", "concept"), on="key")
        .with_columns(
            attribute=pl.lit(None, pl.String),
            index=pl.lit(0, pl.Int64),
            canonical=pl.col("concept").str.to_lowercase(),
            tdim="dimension",
            fixed=pl.col("dimension").replace_strict(fills, default=None, return_dtype=pl.String),
            placeholder=pl.lit(True),
        )
        .drop("dimension")
    )
    return pl.concat([terms, holders_found.select(terms.columns)])


def _check_placeholders(texts: pl.DataFrame, table: pl.DataFrame) -> None:
    """Every ``{name}`` must be a known, unambiguous placeholder: one error lists them all."""
    written = (
        texts.select(ROW, found=pl.col(TEXT).str.extract_all(UNKNOWN_PLACEHOLDER))
        .explode("found")
        .drop_nulls("found")
        .with_columns(key=term_key(pl.col("found").str.strip_chars("{}")))
        .join(table, on="key", how="left")
    )
    bad = written.filter(pl.col("concept").is_null() | pl.col("dimension").is_null())
    if not bad.height:
        return
    problems = []
    for row, holder, dims in bad.select(ROW, "found", "dimensions").head(8).iter_rows():
        if dims:
            problems.append(
                f"row {row}: {holder} is in several dimensions ({dims}); write "
                f"{{{dims.split(', ')[0]}:{holder[1:-1]}}}"
            )
        else:
            problems.append(f"row {row}: unknown placeholder {holder}")
    known = ", ".join(
        f"{{{k}}}" for k in table.filter(pl.col("dimension").is_not_null())["key"].head(24)
    )
    raise LexiconError(
        f"{bad.height} placeholder problem(s): "
        + "; ".join(problems)
        + f". Known placeholders include {known}, ... (Lexicon.concepts(dimension) lists them)."
    )


def _plan(rows: pl.DataFrame, dim: str, opts: Options) -> pl.DataFrame:
    """``ROW``, role, target, source, ``_order``: which variants each prompt gets."""
    if opts.strategy == "contrastive":
        a, b = opts.poles[dim]
        poles = pl.DataFrame({"role": ["pole_a", "pole_b"], "target": [a, b], "_order": [0, 1]})
        return rows.join(poles, how="cross").select(ROW, "role", "target", "source", "_order")
    reference = (
        pl.when(pl.col("source").is_null() | pl.lit(opts.neutral_reference))
        .then(pl.lit(NEUTRAL))
        .otherwise("source")
    )
    refs = rows.with_columns(role=pl.lit("reference"), target=reference, _order=pl.lit(0))
    values = pl.DataFrame({"target": list(opts.values[dim])}).with_row_index("_order", offset=1)
    variants = (
        refs.select(ROW, "source", ref="target")
        .join(values.with_columns(pl.col("_order").cast(pl.Int32)), how="cross")
        .filter(pl.col("target") != pl.col("ref"))
        .select(ROW, role=pl.lit("variant"), target="target", source="source", _order="_order")
    )
    return pl.concat(
        [refs.select(ROW, "role", "target", "source", pl.col("_order").cast(pl.Int32)), variants]
    )


def _check_groups(
    made: pl.DataFrame, failures: pl.DataFrame, opts: Options
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Drop what cannot form pairs, and say why: a failed variant, or a whole failed group.

    A group loses a variant that failed or equals its reference; it is dropped whole when its
    reference (or a pole) failed, when poles are identical, or when no variant is left.
    """
    first = "reference" if opts.strategy == "group" else "pole_a"
    ref = made.filter(pl.col("role") == first).select(ROW, _ref="input")
    made = made.join(failures.select(VARIANT), on=VARIANT, how="anti").join(ref, on=ROW, how="left")
    same = made.filter((pl.col("role") != first) & (pl.col("input") == pl.col("_ref")))
    same_reason = pl.lit("the variant equals the " + first.replace("_", " ") + " (nothing to swap)")
    dropped = [
        failures.select(ROW, attribute="target", reason="reason"),
        same.select(ROW, attribute="target", reason=same_reason),
    ]
    made = made.join(same.select(VARIANT), on=VARIANT, how="anti")
    whole_failed = failures.filter(pl.col("role").is_in(["reference", "pole_a", "pole_b"]))
    made = made.join(whole_failed.select(ROW), on=ROW, how="anti")
    n_rows = pl.len().over(ROW)
    lonely = made.filter(n_rows < 2).select(ROW).unique()
    if opts.strategy == "contrastive":
        lonely = pl.concat([lonely, same.select(ROW)]).unique()
    if lonely.height and not opts.keep_alone:
        dropped.append(
            lonely.select(ROW, attribute=pl.lit(None, pl.String), reason=pl.lit(NO_VARIANT))
        )
        made = made.join(lonely, on=ROW, how="anti")
    rows = made.select(
        ROW,
        "role",
        attribute="target",
        input="input",
        substitutions="substitutions",
        _order=pl.col("_order").cast(pl.Int32),
    )
    return rows, pl.concat([d.cast({"attribute": pl.String}) for d in dropped])
