"""Lexicons: which words mark an attribute of a dimension, and what each becomes in another.

A lexicon is a table, one row per term, with the columns:

- ``dimension``: gender, race, ... (a file without this column takes its file name);
- ``attribute``: the value the term marks (``male``, ``Black``), or one of two reserved values:
  ``neutral``, the form a neutral reference uses (an empty term removes the word), and
  ``ignore``, phrases to leave alone ("white wine", "years old");
- ``concept``: terms with the same concept are counterparts ("man", "woman", "person");
- ``term``: the word or phrase, in its usual case;
- ``next`` (optional): the classes of the next word where the row applies (``word``,
  ``participle``, ``function``, ``end``, joined by ``|``), which tells object "her" from
  determiner "her";
- ``case_sensitive`` (optional): ``true`` to match the case exactly (names, "Mr.").

The i-th term of a concept's attribute maps to the i-th term of the target attribute, or to its
first term when the target has fewer: equal-length lists swap both ways (a bijection). A list
may repeat a term to keep the alignment (the repeat reads as its first place). Every concept
has terms for every attribute, except name concepts (``name...``) and role concepts
(``role...``: clergy, places of worship): name lists exist for some groups only, and not every
faith has a pastor or a church; a variant that needs a missing name or role is reported as not
made, never left half-changed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Union

import polars as pl

from pairwise_polars._errors import LexiconError
from pairwise_polars.counterfactual._grammar import NEXT_CLASSES

NEUTRAL = "neutral"
IGNORE = "ignore"
RESERVED = (NEUTRAL, IGNORE)
ROLE_PREFIX = "role"
"""Concepts named ``role...`` (clergy, places of worship) belong to a faith, not to a person:
they follow the attribute whoever holds them, and some attributes have none."""
COLUMNS = ("dimension", "attribute", "concept", "term", "next", "case_sensitive", "origin")
_SUFFIXES = {".tsv": "\t", ".csv": ","}
_TRUE, _FALSE = {"true", "1", "yes"}, {"", "false", "0", "no"}
_MAX_LISTED = 8

LexiconSource = Union[str, os.PathLike, pl.DataFrame, Mapping[str, Any], "Lexicon"]
"""A lexicon file or folder, a table, a mapping (see ``load_lexicon``) or a ``Lexicon``."""


def term_key(term: pl.Expr) -> pl.Expr:
    """How a term or a matched text is looked up: lower case, one apostrophe, single spaces."""
    return term.str.to_lowercase().str.replace_all("’", "'").str.replace_all(r"\s+", " ")


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: compiled forms are cached
class Lexicon:
    """Terms by dimension, with each dimension's default poles and group values.

    Build one with ``load_lexicon``; combine with ``merge`` (add terms) or ``update`` (replace
    whole dimensions).

    >>> lex = load_lexicon()
    >>> lex.attributes("gender")
    ('male', 'female')
    >>> lex.poles["race"]
    ('White', 'Black')
    """

    terms: pl.DataFrame
    poles: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    values: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _validate(self)

    def __repr__(self) -> str:
        sizes = self.terms.group_by("dimension", maintain_order=True).len()
        listed = ", ".join(f"{d}: {n} terms" for d, n in sizes.iter_rows())
        return f"Lexicon({listed})"

    @property
    def dimensions(self) -> tuple[str, ...]:
        return tuple(self.terms["dimension"].unique(maintain_order=True))

    def attributes(self, dimension: str) -> tuple[str, ...]:
        """The dimension's values (reserved ``neutral``/``ignore`` excluded), in file order."""
        rows = self.terms.filter(pl.col("dimension") == dimension)
        return tuple(
            rows.filter(~pl.col("attribute").is_in(RESERVED))["attribute"].unique(
                maintain_order=True
            )
        )

    def concepts(self, dimension: str) -> tuple[str, ...]:
        """Concept names of a dimension: the placeholders ``{concept}`` it understands."""
        rows = self.terms.filter(
            (pl.col("dimension") == dimension) & (pl.col("attribute") != IGNORE)
        )
        return tuple(rows["concept"].unique(maintain_order=True))

    def default_poles(self, dimension: str) -> tuple[str, str]:
        attrs = self.attributes(dimension)
        return self.poles.get(dimension, (attrs[0], attrs[1]))

    def default_values(self, dimension: str) -> tuple[str, ...]:
        return self.values.get(dimension, self.attributes(dimension))

    def merge(self, other: Lexicon) -> Lexicon:
        """Add ``other``'s terms; where both define a term in a dimension, ``other``'s wins.

        A redefined term takes the place of the one it replaces, and new terms go after the
        existing ones: the i-th term of a concept still maps to the i-th of the other
        attributes, so add new terms in counterpart pairs (a male name and a female name).
        """
        key = ["dimension", "_key"]
        mine = self.terms.with_columns(_key=term_key(pl.col("term"))).with_row_index("_pos")
        theirs = other.terms.with_columns(_key=term_key(pl.col("term"))).with_row_index("_sub")
        kept = mine.join(theirs.select(key).unique(), on=key, how="anti")
        places = mine.group_by(key).agg(pl.col("_pos").min())
        added = theirs.join(places, on=key, how="left").with_columns(
            pl.col("_pos").fill_null(pl.lit(mine.height, pl.UInt32) + pl.col("_sub"))
        )
        terms = (
            pl.concat(
                [
                    kept.with_columns(_sub=pl.lit(0, pl.UInt32)),
                    added.select([*kept.columns, "_sub"]),
                ]
            )
            .sort("_pos", "_sub")
            .select(COLUMNS)
        )
        return Lexicon(terms, {**self.poles, **other.poles}, {**self.values, **other.values})

    def update(self, other: Lexicon) -> Lexicon:
        """Replace whole dimensions by ``other``'s, and add its new ones."""
        dims = list(other.dimensions)
        kept = self.terms.filter(~pl.col("dimension").is_in(dims))
        poles = {d: p for d, p in self.poles.items() if d not in dims} | dict(other.poles)
        values = {d: v for d, v in self.values.items() if d not in dims} | dict(other.values)
        return Lexicon(pl.concat([kept, other.terms]), poles, values)

    def require(self, dimensions: Iterable[str]) -> None:
        """Raise a LexiconError naming the dimensions this lexicon lacks, if any."""
        missing = [d for d in dimensions if d not in self.dimensions]
        if missing:
            raise LexiconError(
                f"Unknown dimension(s) {missing}. The lexicon has {list(self.dimensions)}; "
                "add your own with lexicons=... (a file, folder or mapping, see load_lexicon)."
            )

    def select(self, dimensions: Iterable[str]) -> Lexicon:
        """Only the given dimensions."""
        dims = list(dimensions)
        self.require(dims)
        return Lexicon(
            self.terms.filter(pl.col("dimension").is_in(dims)),
            {d: p for d, p in self.poles.items() if d in dims},
            {d: v for d, v in self.values.items() if d in dims},
        )


def load_lexicon(source: LexiconSource | None = None) -> Lexicon:
    """Load the shipped lexicons (``source=None``) or your own.

    ``source`` may be a ``.tsv``/``.csv`` table or ``.json`` file, a folder of them (with an
    optional ``dimensions.json`` giving ``{"dim": {"poles": [a, b], "values": [...]}}``), a polars
    DataFrame with the table's columns, or a mapping ``{dimension: file | DataFrame | spec}`` where
    a spec is ``{"concepts": {concept: {attribute: [term, ...]}}, "poles": [...], "values": [...]}``
    (a term may be ``{"term": ..., "next": ..., "case_sensitive": true}``). JSON files hold the
    same mapping.

    >>> own = load_lexicon({"caste": {"concepts": {"group": {"Brahmin": ["Brahmin"],
    ...                                                      "Dalit": ["Dalit"]}}}})
    >>> own.attributes("caste")
    ('Brahmin', 'Dalit')
    """
    if source is None:
        return _shipped()
    if isinstance(source, Lexicon):
        return source
    if isinstance(source, pl.DataFrame):
        return Lexicon(_normalise(source, "DataFrame"))
    if isinstance(source, Mapping):
        return _from_mapping(source, "mapping")
    path = Path(source)
    if path.is_dir():
        return _from_folder(path)
    if path.is_file():
        terms, meta = _read_file(path, path.name)
        return Lexicon(terms, *_meta(meta, str(path)))
    raise LexiconError(
        f"Lexicon {os.fspath(source)!r} does not exist. Pass a .tsv/.csv/.json file, a folder of "
        "them, a DataFrame or a mapping; or leave lexicons unset for the shipped ones."
    )


@cache
def _shipped() -> Lexicon:
    folder = resources.files("pairwise_polars.counterfactual") / "lexicons"
    meta = json.loads((folder / "dimensions.json").read_text("utf-8"))
    frames = []
    for spec in meta.values():
        for name in spec["files"]:
            text = (folder / name).read_text("utf-8")
            frames.append(_normalise(_parse_table(text.encode(), "\t"), name))
    return Lexicon(pl.concat(frames), *_meta(meta, "dimensions.json"))


def _from_folder(path: Path) -> Lexicon:
    frames, meta = [], {}
    for file in sorted(path.iterdir()):
        if file.name == "dimensions.json":
            meta = json.loads(file.read_text("utf-8"))
        elif file.suffix in (*_SUFFIXES, ".json"):
            terms, file_meta = _read_file(file, file.name)
            frames.append(terms)
            meta = {**file_meta, **meta}
    if not frames:
        raise LexiconError(f"The folder {os.fspath(path)!r} holds no .tsv, .csv or .json lexicon.")
    return Lexicon(pl.concat(frames), *_meta(meta, f"{path.name}/dimensions.json"))


def _read_file(path: Path, name: str) -> tuple[pl.DataFrame, dict]:
    if path.suffix == ".json":
        spec = json.loads(path.read_text("utf-8"))
        lex = _from_mapping(spec, name)
        return lex.terms, {
            d: {"poles": lex.poles.get(d), "values": lex.values.get(d)} for d in lex.dimensions
        }
    if path.suffix not in _SUFFIXES:
        raise LexiconError(f"Lexicon file {name!r}: use a .tsv, .csv or .json file.")
    table = _parse_table(path.read_bytes(), _SUFFIXES[path.suffix])
    if "dimension" not in table.columns:
        table = table.with_columns(dimension=pl.lit(path.stem))
    return _normalise(table, name), {}


def _parse_table(data: bytes, separator: str) -> pl.DataFrame:
    return pl.read_csv(data, separator=separator, infer_schema=False)  # empty cells: see _normalise


def _from_mapping(spec: Mapping[str, Any], name: str) -> Lexicon:
    frames, meta = [], {}
    for dim, entry in spec.items():
        if isinstance(entry, pl.DataFrame):
            frames.append(_normalise(entry.with_columns(dimension=pl.lit(dim)), f"{name}[{dim}]"))
        elif isinstance(entry, (str, os.PathLike)):
            lex = load_lexicon(entry)
            frames.append(lex.terms.with_columns(dimension=pl.lit(dim)))
            meta[dim] = {"poles": lex.poles.get(dim), "values": lex.values.get(dim)}
        elif isinstance(entry, Mapping) and isinstance(entry.get("concepts"), Mapping):
            frames.append(_normalise(_spec_rows(dim, entry["concepts"]), f"{name}[{dim}]"))
            meta[dim] = {"poles": entry.get("poles"), "values": entry.get("values")}
        else:
            raise LexiconError(
                f"Lexicon {name}[{dim!r}]: expected a file path, a DataFrame or "
                '{"concepts": {concept: {attribute: [terms]}}}, got '
                f"{type(entry).__name__}."
            )
    if not frames:
        raise LexiconError(f"Lexicon {name} defines no dimension.")
    return Lexicon(pl.concat(frames), *_meta(meta, name))


def _spec_rows(dim: str, concepts: Mapping[str, Any]) -> pl.DataFrame:
    rows = []
    for concept, by_attribute in concepts.items():
        for attribute, terms in by_attribute.items():
            for term in [terms] if isinstance(terms, (str, Mapping)) else terms:
                entry = dict(term) if isinstance(term, Mapping) else {"term": term}
                cs = entry.get("case_sensitive", "")
                rows.append(
                    {
                        "dimension": dim,
                        "attribute": attribute,
                        "concept": concept,
                        "term": str(entry.get("term", "")),
                        "next": entry.get("next") or "",
                        "case_sensitive": str(cs).lower() if cs != "" else "",
                    }
                )
    return pl.DataFrame(rows, schema=dict.fromkeys(COLUMNS[:-1], pl.String))


def _normalise(table: pl.DataFrame, name: str) -> pl.DataFrame:
    """The table's columns, stripped and typed, with an ``origin`` naming file and line."""
    missing = [c for c in ("dimension", "attribute", "concept", "term") if c not in table.columns]
    if missing:
        raise LexiconError(
            f"Lexicon {name}: missing column(s) {missing}; it has {table.columns}. A lexicon table "
            "needs dimension, attribute, concept and term (optional: next, case_sensitive)."
        )
    optional = {c: pl.lit("") for c in ("next", "case_sensitive") if c not in table.columns}
    table = table.with_columns(**optional).select(
        [pl.col(c).cast(pl.String).fill_null("").str.strip_chars() for c in COLUMNS[:-1]]
    )
    flags = table["case_sensitive"].str.to_lowercase()
    bad = table.with_row_index("line", offset=2).filter(~flags.is_in(_TRUE | _FALSE))
    if bad.height:
        lines = ", ".join(
            f"{name}:{n} ({v!r})"
            for n, v in bad.select("line", "case_sensitive").head(_MAX_LISTED).iter_rows()
        )
        raise LexiconError(f"case_sensitive must be true or false (or empty): {lines}.")
    return table.with_columns(
        next=pl.col("next").str.to_lowercase().str.replace_all(" ", ""),
        case_sensitive=flags.is_in(_TRUE),
        origin=pl.format(f"{name}:{{}}", pl.int_range(2, pl.len() + 2)),
    )


def _meta(meta: Mapping[str, Any], name: str) -> tuple[dict, dict]:
    poles, values = {}, {}
    for dim, spec in meta.items():
        spec = spec or {}
        if spec.get("poles") is not None:
            pair = tuple(spec["poles"])
            if len(pair) != 2:
                raise LexiconError(f"{name}: poles of {dim!r} must be two attributes, got {pair}.")
            poles[dim] = pair
        if spec.get("values") is not None:
            values[dim] = tuple(spec["values"])
    return poles, values


def _validate(lex: Lexicon) -> None:
    """Raise one LexiconError listing every problem, each with its file and line."""
    t = lex.terms
    if t.columns != list(COLUMNS):
        raise LexiconError(f"Lexicon.terms must have columns {list(COLUMNS)}, got {t.columns}.")
    problems = [
        f"{o}: empty {c}"
        for c in ("dimension", "attribute", "concept")
        for o in t.filter(pl.col(c) == "")["origin"]
    ]
    empty = t.filter((pl.col("term") == "") & (pl.col("attribute") != NEUTRAL))
    problems += [
        f"{o}: empty term (only a neutral row may be empty: it removes the word)"
        for o in empty["origin"]
    ]
    classes = t.with_columns(cls=pl.col("next").str.split("|")).explode("cls")
    bad_next = classes.filter((pl.col("cls") != "") & ~pl.col("cls").is_in(NEXT_CLASSES))
    problems += [
        f"{o}: unknown next class {c!r} (use {'|'.join(NEXT_CLASSES)})"
        for o, c in bad_next.select("origin", "cls").iter_rows()
    ]
    problems += _ambiguities(t)
    for dim in lex.dimensions:
        problems += _coverage(lex, dim)
    if problems:
        listed = "\n  ".join(problems[:_MAX_LISTED])
        more = (
            f"\n  ... and {len(problems) - _MAX_LISTED} more" if len(problems) > _MAX_LISTED else ""
        )
        raise LexiconError(f"The lexicon has {len(problems)} problem(s):\n  {listed}{more}")


def _ambiguities(t: pl.DataFrame) -> list[str]:
    """A detected term must mean one (attribute, concept) before each class of next word."""
    rows = (
        t.filter(pl.col("attribute") != NEUTRAL)
        .with_columns(key=term_key(pl.col("term")), cls=pl.col("next").str.split("|"))
        .with_columns(cls=pl.when(pl.col("next") == "").then(list(NEXT_CLASSES)).otherwise("cls"))
        .explode("cls")
        .unique(["dimension", "key", "cls", "attribute", "concept"], maintain_order=True)
    )
    clash = rows.filter(pl.len().over("dimension", "key", "cls") > 1)
    clash = clash.group_by("dimension", "key", maintain_order=True).agg(
        pl.format("{}/{} ({})", "attribute", "concept", "origin").unique(maintain_order=True)
    )
    return [
        f"term {key!r} in {dim!r} means several things: {', '.join(where)}; give the rows a "
        "`next` column to tell the readings apart, or remove one"
        for dim, key, where in clash.iter_rows()
    ]


def _coverage(lex: Lexicon, dim: str) -> list[str]:
    attrs = lex.attributes(dim)
    rows = lex.terms.filter((pl.col("dimension") == dim) & ~pl.col("attribute").is_in(RESERVED))
    if len(attrs) < 2:
        return [f"dimension {dim!r} has attribute(s) {list(attrs)}: a counterfactual needs two"]
    problems = []
    for concept, have, origins in (
        rows.group_by("concept", maintain_order=True)
        .agg(pl.col("attribute").unique(maintain_order=True), pl.col("origin").first())
        .iter_rows()
    ):
        missing = [a for a in attrs if a not in have]
        # name lists exist for some groups; roles (clergy, places of worship) for some faiths
        if missing and not concept.startswith(("name", ROLE_PREFIX)):
            problems.append(
                f"{origins}: concept {concept!r} of {dim!r} has no term for {missing}; add one "
                "per attribute (terms of a concept are counterparts), or drop the concept"
            )
    for what, names in (("poles", lex.poles.get(dim, ())), ("values", lex.values.get(dim, ()))):
        unknown = [n for n in names if n not in attrs]
        if unknown:
            problems.append(
                f"{what} of {dim!r} name unknown attribute(s) {unknown}; "
                f"the attributes are {list(attrs)}"
            )
    return problems
