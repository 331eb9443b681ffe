"""``counterfactuals``: from a table of prompts to grouped rows ready for ``form_pairs``."""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple, overload

import polars as pl

from pairwise_polars._errors import ColumnError, PairwiseWarning
from pairwise_polars.counterfactual._arguments import (
    OUTPUT,
    check_columns,
    checked_options,
    dimension_items,
)
from pairwise_polars.counterfactual._case import CaseStyle
from pairwise_polars.counterfactual._intersections import crossed_name, intersection_rows
from pairwise_polars.counterfactual._lexicon import LexiconSource
from pairwise_polars.counterfactual._matches import ROW, TEXT
from pairwise_polars.counterfactual._scope import HINT
from pairwise_polars.counterfactual._substitute import SUBSTITUTION
from pairwise_polars.counterfactual._variant_plan import dimension_rows
from pairwise_polars.io._frames import to_lazy

Strategy = Literal["group", "contrastive"]
Scope = Literal["subject", "all"]
Relations = Literal["swap", "keep"]
_SKIPPED = pl.Schema(
    {ROW: pl.UInt32(), "dimension": pl.String(), "attribute": pl.String(), "reason": pl.String()}
)
_MAX_LISTED = 5
_SUBJECT_MARKER = r"\{subject:([^{}]*)\}"


class CounterfactualReport(NamedTuple):
    """What ``counterfactuals(..., report=True)`` returns: the rows, and what was left out.

    ``skipped`` has one row per prompt (and dimension) or variant that was not generated:
    ``row`` (the prompt's position), ``group_id``, ``dimension``, ``attribute`` (the value that
    failed, null when the whole prompt was skipped), ``reason``, and the prompt's text.
    """

    frame: pl.DataFrame
    skipped: pl.DataFrame


@overload
def counterfactuals(
    prompts: Any,
    dimensions: str | Sequence[str | tuple[str, str]] = ...,
    *,
    report: Literal[False] = ...,
    **options: Any,
) -> pl.DataFrame: ...
@overload
def counterfactuals(
    prompts: Any,
    dimensions: str | Sequence[str | tuple[str, str]] = ...,
    *,
    report: Literal[True],
    **options: Any,
) -> CounterfactualReport: ...
def counterfactuals(  # pyright: ignore[reportInconsistentOverload]  (overloads take **options)
    prompts: Any,
    dimensions: str | Sequence[str | tuple[str, str]] = ("gender", "race"),
    *,
    strategy: Strategy = "group",
    text: str = "input",
    id_column: str | None = None,
    values: Mapping[str, Sequence[str]] | None = None,
    poles: Mapping[str, tuple[str, str]] | None = None,
    neutral_reference: bool = False,
    placeholders: bool = False,
    fill: Mapping[str, str] | None = None,
    lexicons: LexiconSource | None = None,
    add_lexicons: LexiconSource | None = None,
    scope: Scope = "subject",
    subject: str | pl.Expr | None = None,
    case_style: CaseStyle = "capitalized",
    control: bool = True,
    relations: Relations = "swap",
    report: bool = False,
    storage_options: Mapping[str, str] | None = None,
) -> pl.DataFrame | CounterfactualReport:
    """Counterfactual copies of each prompt, one group per (prompt, dimension).

    ``prompts`` is a polars DataFrame/LazyFrame, pyarrow Table, pandas frame or file path(s)
    (object URIs such as ``s3://`` read with ``storage_options``); ``text`` names its prompt
    column; every other column is carried to each row.

    The result has ``id`` (``"<group_id>:<role>:<attribute>"``), ``group_id`` (stable: a hash
    of the prompt's id, the dimension and the strategy), ``role``, ``dimension``,
    ``attribute``, ``input`` (the prompt text of the row; when
    ``text`` is another column, that column keeps the original prompt), ``substitutions`` (every
    change made: ``List(Struct{source, target, start, end})``, offsets into the original), then
    the carried columns.

    - ``strategy="group"``: the ``reference`` row is the prompt as given (attribute: the value
      found in it), or its neutral form with ``neutral_reference=True`` ("they", "person", the
      group word removed); one ``variant`` row per other value in ``values[dim]`` (default: the
      lexicon's values for the dimension).
    - ``strategy="contrastive"``: rows ``pole_a`` and ``pole_b``, the prompt moved to each of
      ``poles[dim]`` (default: the lexicon's, e.g. male/female, White/Black).
    - ``control=True`` (the default) adds one ``control`` row per group: a copy of the
      reference (contrastive: of ``pole_a``), same input, attribute and substitutions, its own
      ``id``. Its response is a second, independent answer to the same request
      (``collect_responses`` sends it as its own draw): the noise floor that a counterfactual
      difference is measured against. ``control=False`` leaves it out.
    - Intersections: a pair of dimensions, ``counterfactuals(prompts, [("gender", "race")])``,
      is crossed into one dimension ``gender×race`` with attributes such as ``female|Black``:
      the cell of both references is the group's reference, every other cell a variant, in one
      group (group strategy only). ``disparities`` then reports each cell and the interaction.

    Terms are found on word boundaries (case-insensitive, names case-sensitive) and replaced in
    the case of the original; pronouns follow their grammatical role ("her" -> "him"/"his"), a
    new "they" takes a plural verb and "a"/"an" follows the new word. Moving a prompt from its
    value ``s`` to ``v`` swaps the terms of ``s`` and ``v`` and leaves other values' terms alone.

    With ``placeholders=True`` a prompt may say where the attribute goes instead: ``{concept}`` or
    ``{dimension:concept}`` with a concept of the lexicon (``{they}``, ``{them}``, ``{their}``,
    ``{theirs}``, ``{themselves}``, ``{man}``, ``{name}`` for gender, ``{group}`` for every
    dimension, ``{race:name_female}`` ...; ``Lexicon.concepts(dim)`` lists them); the case of the
    placeholder is kept (``{They}`` -> "She"). Write the verb after ``{they}`` in the singular.
    Placeholders of a dimension not being varied take ``fill[dim]`` or its neutral form; a bare
    ``{concept}`` is looked up in ``dimensions`` and ``fill``, ``{dim:concept}`` in any dimension.

    ``id_column`` names a column identifying each prompt (default: its position) for
    ``group_id``. ``lexicons`` adds your own (anything ``load_lexicon`` takes): a dimension it
    defines replaces the shipped one of that name, and any ``Lexicon`` is used as it is.
    ``add_lexicons`` adds terms to the dimensions instead (new names, words, dimensions): a term
    both define is yours, in the place of the one it replaces; new terms go after the existing
    ones of their concept, so add them in counterpart pairs.

    Scope. Terms are found on word boundaries everywhere, but with ``scope="subject"`` (the
    default) only the subject's are changed: the first-mentioned person, the one whose phrase
    ``subject`` gives (a string, or an expression over the prompts' columns such as
    ``pl.col("name")``), or in a template (``placeholders=True``) a span written
    ``{subject:the applicant}``. Other people's words stay, and each is listed in the audit with
    ``target == source`` and a ``reason`` ("another person: a relation, 'her landlord'"); the
    rules are in ``pairwise_polars.counterfactual._scope``. ``scope="all"`` swaps every term of
    the prompt's attribute and the target's (the behaviour before scopes).

    ``relations`` (gender, ``scope="subject"``): the subject's partner (wife, husband,
    girlfriend, boyfriend, fiancé(e)) moves with the subject with ``"swap"`` (the default: "He
    says his wife" -> "She says her husband", "her wife" -> "his husband", so the couple stays
    what it was), or stays as written with ``"keep"`` ("She says her wife"); the audit lists
    the partner either way, with the rule (``reason``). Roles of a faith (clergy: pastor, imam,
    rabbi, priest, monk, granthi; places of worship: church, mosque, synagogue, temple, ...)
    always follow the religion; a variant whose faith has no counterpart (an atheist "pastor")
    is left out and reported, never kept half-changed.

    ``case_style`` writes racial group words one way in both directions: ``"capitalized"``
    (White, Black), ``"ap"`` (white, Black) or ``"lowercase"`` (white, black).

    A prompt with no term (and no placeholder) of a dimension, or a variant the lexicon cannot
    make, is left out and reported: a ``PairwiseWarning``, or with ``report=True`` a
    ``CounterfactualReport(frame, skipped)``.

    >>> import polars as pl
    >>> prompts = pl.DataFrame({"input": ["He said his plan works."]})
    >>> rows = counterfactuals(prompts, "gender")
    >>> rows.select("role", "attribute", "input").rows()  # doctest: +NORMALIZE_WHITESPACE
    [('reference', 'male', 'He said his plan works.'),
     ('variant', 'female', 'She said her plan works.'),
     ('control', 'male', 'He said his plan works.')]
    """
    frame = to_lazy(prompts, storage_options)[0].collect()
    items, dims = dimension_items(dimensions)
    check_columns(frame, text, id_column)
    options = checked_options(
        dims,
        strategy=strategy,
        scope=scope,
        case_style=case_style,
        relations=relations,
        subject=subject,
        values=values,
        poles=poles,
        fill=fill,
        neutral_reference=neutral_reference,
        placeholders=placeholders,
        control=control,
        lexicons=lexicons,
        add_lexicons=add_lexicons,
    )
    texts = frame.select(pl.col(text).alias(TEXT)).with_row_index(ROW)
    if placeholders:
        texts = _subject_markers(texts)
    if subject is not None:
        texts = _with_hints(frame, texts, subject)
    rows, skipped = [], []
    for order, item in enumerate(items):
        if isinstance(item, str):
            dim = item
            made, left_out = dimension_rows(texts, dim, options)
        else:
            dim = crossed_name(tuple(item))
            made, left_out = intersection_rows(texts, (item[0], item[1]), options)
        rows.append(made.with_columns(dimension=pl.lit(dim), _dim=pl.lit(order)))
        skipped.append(left_out.with_columns(dimension=pl.lit(dim)))
    keys = _prompt_keys(frame, id_column)
    result = _assemble(frame, text, rows, keys, strategy)
    left = _skipped(frame, text, id_column, skipped, keys, strategy)
    if report:
        return CounterfactualReport(result, left)
    if left.height:
        warnings.warn(_skip_message(left, frame.height), PairwiseWarning, stacklevel=2)
    return result


def _with_hints(frame: pl.DataFrame, texts: pl.DataFrame, subject: str | pl.Expr) -> pl.DataFrame:
    """Where each prompt's subject hint starts; a prompt without it falls back, with a warning,
    to its first-mentioned person."""
    phrase = pl.lit(subject) if isinstance(subject, str) else subject
    try:
        phrases = frame.select(phrase.cast(pl.String).alias(HINT))
    except pl.exceptions.PolarsError as exc:
        raise ColumnError(
            f"subject= could not be read from the prompts ({' '.join(str(exc).split())[:160]}); "
            f"pass the subject's phrase (subject='Emily') or an expression over the prompts' "
            f"columns {frame.columns} (subject=pl.col('name'))."
        ) from exc
    found = pl.col(TEXT).str.find(pl.lit(phrases[HINT]), literal=True)
    marked = pl.col(HINT) if HINT in texts.columns else pl.lit(None, pl.UInt32)
    texts = texts.with_columns(pl.coalesce(marked, found).alias(HINT))
    missing = texts.filter(pl.col(HINT).is_null() & pl.col(TEXT).is_not_null())
    if missing.height:
        listed = missing[ROW].head(_MAX_LISTED).to_list()
        warnings.warn(
            f"The subject hint was not found in {missing.height} of {texts.height} prompt(s) "
            f"(rows {listed}{', ...' if missing.height > _MAX_LISTED else ''}); there the "
            "first-mentioned person is the subject.",
            PairwiseWarning,
            stacklevel=3,
        )
    return texts


def _subject_markers(texts: pl.DataFrame) -> pl.DataFrame:
    """``{subject:Emily}`` in a template marks the subject: the marker goes, "Emily" stays."""
    marked = pl.col(TEXT).str.find(_SUBJECT_MARKER)
    if not texts.select(marked.is_not_null().any()).item():
        return texts
    return texts.with_columns(
        pl.col(TEXT).str.replace_all(_SUBJECT_MARKER, "${1}"), marked.alias(HINT)
    )


def _prompt_keys(frame: pl.DataFrame, id_column: str | None) -> pl.DataFrame:
    if id_column is None:
        ids = pl.int_range(pl.len(), dtype=pl.UInt32).cast(pl.String)
    else:
        ids = pl.col(id_column).cast(pl.String)
    return frame.select(ids.alias("_key")).with_row_index(ROW)


def _group_ids(pairs: pl.DataFrame, strategy: str) -> pl.Series:
    # hashlib, not Expr.hash: the id must be the same on every machine and polars version
    return pl.Series(
        "group_id",
        [
            hashlib.blake2b(f"{k}\x1f{d}\x1f{strategy}".encode(), digest_size=8).hexdigest()
            for k, d in pairs.iter_rows()
        ],
        dtype=pl.String,
    )


def _with_group_ids(frame: pl.DataFrame, keys: pl.DataFrame, strategy: str) -> pl.DataFrame:
    distinct = frame.select(ROW, "dimension").unique().join(keys, on=ROW)
    ids = distinct.with_columns(_group_ids(distinct.select("_key", "dimension"), strategy))
    return frame.join(ids.drop("_key"), on=[ROW, "dimension"], how="left")


def _assemble(
    frame: pl.DataFrame, text: str, rows: list[pl.DataFrame], keys: pl.DataFrame, strategy: str
) -> pl.DataFrame:
    made = pl.concat(rows) if rows else pl.DataFrame()
    made = _with_group_ids(made, keys, strategy).sort([ROW, "_dim", "_order"])
    made = made.with_columns(id=pl.format("{}:{}:{}", "group_id", "role", "attribute"))
    carried = frame.drop("input" if text == "input" else []).with_row_index(ROW)
    return (
        made.join(carried, on=ROW, how="left", maintain_order="left")
        .with_columns(pl.col("substitutions").cast(pl.List(SUBSTITUTION)))
        .select(*OUTPUT, *[c for c in carried.columns if c != ROW])
    )


def _skipped(
    frame: pl.DataFrame,
    text: str,
    id_column: str | None,
    skipped: list[pl.DataFrame],
    keys: pl.DataFrame,
    strategy: str,
) -> pl.DataFrame:
    left = pl.concat([s.select(list(_SKIPPED)).cast(_SKIPPED) for s in skipped])
    left = _with_group_ids(left, keys, strategy).sort(ROW, maintain_order=True)
    extra = [c for c in dict.fromkeys([id_column, text]) if c is not None]
    context = frame.select(extra).with_row_index(ROW)
    return left.join(context, on=ROW, how="left", maintain_order="left").select(
        pl.col(ROW).alias("row"), "group_id", "dimension", "attribute", "reason", *extra
    )


def _skip_message(left: pl.DataFrame, n_prompts: int) -> str:
    whole = left.filter(pl.col("attribute").is_null())
    parts = []
    for (dim,), rows in whole.group_by("dimension", maintain_order=True):
        listed = rows["row"].head(_MAX_LISTED).to_list()
        parts.append(
            f"{rows.height} of {n_prompts} prompts have no {dim} variants (rows "
            f"{listed}{', ...' if rows.height > _MAX_LISTED else ''}: "
            f"{rows['reason'][0]})"
        )
    partial = left.filter(pl.col("attribute").is_not_null())
    if partial.height:
        parts.append(
            f"{partial.height} variant(s) could not be made (e.g. row "
            f"{partial['row'][0]}: {partial['reason'][0]})"
        )
    return (
        "counterfactuals() left some out: "
        + "; ".join(parts)
        + ". Pass report=True to get them as a frame (CounterfactualReport.skipped)."
    )
