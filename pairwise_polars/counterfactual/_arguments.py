"""The arguments of ``counterfactuals``, checked before any prompt is read: the dimensions, the
prompts' columns, the choices, and the ``Options`` they make (attribute names in the lexicon's
spelling). Each refusal says what was given and what would do."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import polars as pl

from pairwise_polars._errors import ColumnError, LexiconError
from pairwise_polars.counterfactual._case import CASE_STYLES
from pairwise_polars.counterfactual._lexicon import NEUTRAL, Lexicon, LexiconSource, load_lexicon
from pairwise_polars.counterfactual._variant_plan import Options

OUTPUT = ("id", "group_id", "role", "dimension", "attribute", "input", "substitutions")
"""The columns ``counterfactuals`` writes, in order (the carried columns follow)."""

Item = str | Sequence[str]
"""A dimension, or an intersection: a pair of dimensions."""


def dimension_items(
    dimensions: str | Sequence[str | tuple[str, str]],
) -> tuple[tuple[Item, ...], tuple[str, ...]]:
    """(the dimensions as given, each a name or a crossed pair; the distinct names in them)."""
    items = (dimensions,) if isinstance(dimensions, str) else tuple(dimensions)
    _check_crossed(items)
    dims = tuple(dict.fromkeys(d for item in items for d in _parts(item)))
    if not dims:
        raise ValueError("Give at least one dimension, e.g. dimensions=('gender', 'race').")
    return items, dims


def _parts(item: Item) -> tuple[str, ...]:
    return (item,) if isinstance(item, str) else tuple(item)


def _check_crossed(items: tuple[Item, ...]) -> None:
    for item in items:
        if isinstance(item, str):
            continue
        parts = tuple(item)
        if len(parts) != 2 or len(set(parts)) != 2 or not all(isinstance(p, str) for p in parts):
            raise ValueError(
                f"An intersection is a pair of two different dimensions, e.g. ('gender', "
                f"'race'); got {item!r}."
            )


def check_columns(frame: pl.DataFrame, text: str, id_column: str | None) -> None:
    """The prompt column is there and a string, no column ``counterfactuals`` writes is taken,
    and ``id_column`` (when given) identifies each prompt."""
    if text not in frame.columns:
        raise ColumnError(
            f"The prompts have no column {text!r}; they have {frame.columns}. Name the prompt "
            'column with text="<your column>".'
        )
    if frame.schema[text] != pl.String:
        raise ColumnError(
            f"Column {text!r} has type {frame.schema[text]}, expected a string column; cast it "
            f"first, e.g. prompts.with_columns(pl.col({text!r}).cast(pl.String))."
        )
    taken = [c for c in OUTPUT if c in frame.columns and not (c == "input" == text)]
    if taken:
        raise ColumnError(
            f"The prompts already have column(s) {taken}, which counterfactuals() writes; rename "
            "them first, e.g. prompts.rename({"
            + ", ".join(f"{c!r}: 'my_{c}'" for c in taken)
            + "})"
            + (
                ", and pass id_column='my_id' to identify the prompts by it"
                if "id" in taken
                else ""
            )
            + "."
        )
    if id_column is not None:
        if id_column not in frame.columns:
            raise ColumnError(
                f"The prompts have no id column {id_column!r}; they have {frame.columns}."
            )
        dupes = frame.filter(pl.col(id_column).is_duplicated())[id_column].unique()
        if dupes.len() or frame[id_column].null_count():
            raise ColumnError(
                f"Column {id_column!r} must identify each prompt, but it has "
                f"{dupes.len()} duplicated value(s) (e.g. {dupes.head(3).to_list()}) and "
                f"{frame[id_column].null_count()} null(s). Pass a unique id column, or leave "
                "id_column unset to use each prompt's position."
            )


def checked_options(
    dims: tuple[str, ...],
    *,
    strategy: str,
    scope: str,
    case_style: str,
    relations: str,
    subject: str | pl.Expr | None,
    values: Mapping[str, Sequence[str]] | None,
    poles: Mapping[str, tuple[str, str]] | None,
    fill: Mapping[str, str] | None,
    neutral_reference: bool,
    placeholders: bool,
    control: bool,
    lexicons: LexiconSource | None,
    add_lexicons: LexiconSource | None,
) -> Options:
    """The ``Options`` of a plan, from ``counterfactuals``' keywords of the same names."""
    _check_choices(strategy, scope, case_style, relations, subject)
    lexicon = _lexicon(lexicons, add_lexicons)
    fill = dict(fill or {})
    lexicon.require(dict.fromkeys([*dims, *fill]))
    for name, given in (("values", values), ("poles", poles)):
        stray = [d for d in given or {} if d not in lexicon.dimensions]
        if stray:
            raise LexiconError(
                f"{name} names unknown dimension(s) {stray}; the lexicon has "
                f"{list(lexicon.dimensions)}."
            )
    options = Options(
        lexicon=lexicon,
        strategy=strategy,
        neutral_reference=neutral_reference,
        placeholders=placeholders,
        bare_placeholders=tuple(dict.fromkeys([*dims, *fill])),
        values={
            d: _attributes(lexicon, d, (values or {}).get(d, lexicon.default_values(d)), "values")
            for d in dims
        },
        poles={
            d: _attributes(lexicon, d, (poles or {}).get(d, lexicon.default_poles(d)), "poles")
            for d in dims
        },
        fill={d: _attributes(lexicon, d, [v], "fill")[0] for d, v in fill.items()},
        control=control,
        scope=scope,
        case_style=case_style,
        relations=relations,
    )
    same = {d: p for d, p in options.poles.items() if p[0] == p[1]}
    if same and strategy == "contrastive":
        raise LexiconError(f"poles must be two different attributes, got {same}.")
    return options


def _check_choices(
    strategy: str, scope: str, case_style: str, relations: str, subject: str | pl.Expr | None
) -> None:
    """Each choice is one of its kind, and a subject hint comes with the subject's scope."""
    if strategy not in ("group", "contrastive"):
        raise ValueError(f"strategy must be 'group' or 'contrastive', got {strategy!r}.")
    if scope not in ("subject", "all"):
        raise ValueError(
            f"scope must be 'subject' (the subject's words only) or 'all' (every term), got "
            f"{scope!r}."
        )
    if case_style not in CASE_STYLES:
        raise ValueError(
            f"case_style must be one of {list(CASE_STYLES)} (how racial group words are "
            f"written: White/Black, white/Black, white/black), got {case_style!r}."
        )
    if relations not in ("swap", "keep"):
        raise ValueError(
            f"relations must be 'swap' (the subject's partner moves with the subject) or "
            f"'keep' (the partner stays as written), got {relations!r}."
        )
    if subject is not None and scope != "subject":
        raise ValueError("subject= names whose words change; it needs scope='subject'.")


def _attributes(lexicon: Lexicon, dim: str, names: Iterable[str], what: str) -> tuple[str, ...]:
    """User-given attribute names, matched case-insensitively, in the lexicon's spelling."""
    known = {a.lower(): a for a in lexicon.attributes(dim)}
    if what == "fill":
        known[NEUTRAL] = NEUTRAL
    names = tuple(names)
    unknown = [n for n in names if str(n).lower() not in known]
    if unknown or (what == "poles" and len(names) != 2):
        raise LexiconError(
            f"{what} for {dim!r}: {list(names)} — unknown {unknown} or not a pair. The attributes "
            f"of {dim!r} are {list(known.values())}."
        )
    return tuple(known[str(n).lower()] for n in names)


def _lexicon(source: LexiconSource | None, added: LexiconSource | None) -> Lexicon:
    if source is None or isinstance(source, Lexicon):
        lexicon = load_lexicon(source)
    else:
        lexicon = load_lexicon().update(load_lexicon(source))
    return lexicon if added is None else lexicon.merge(load_lexicon(added))
