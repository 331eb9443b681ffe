"""Pair formation: the frame joined with itself on the group column, filtered by role."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields
from typing import TYPE_CHECKING, cast, overload

import polars as pl

from pairwise_polars._errors import ColumnError, EmptyDataWarning, OptionError
from pairwise_polars.io import (
    DataLike,
    PathLike,
    StorageOptions,
    input_files,
    is_paths,
    open_data,
)
from pairwise_polars.pairing._columns import (
    KEY_FIELDS,
    PAIR_FIELDS,
    ColumnNames,
    Columns,
    OnInvalid,
    has_dimension,
    unknown_keyword,
)
from pairwise_polars.pairing._groups import (
    CONTROL_ROLE,
    GroupOptions,
    Strategy,
    checked_rows,
    enforce,
    group_problems,
    key_facts,
)
from pairwise_polars.pairing._pair_id import mm3, pair_id_a
from pairwise_polars.pairing._skip import MAX_PAIR_CHARS as MAX_PAIR_CHARS
from pairwise_polars.pairing._skip import SKIP_REASON, reason_from_flags, row_flags

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    from typing_extensions import Unpack

_BUILD_SIDE = "build_side" in inspect.signature(pl.LazyFrame.join).parameters

PAIR_KIND = "pair_kind"
"""Column saying what a pair measures: ``"counterfactual"`` (the attribute changed) or
``"control"`` (two answers to the same input: the noise floor)."""
PAIR_KINDS = ("counterfactual", "control")
_GROUP_DIMENSION = "__pairwise_group_dimension"
_PID, _FLAGS, _BYTES = "__pairwise_pair_id_", "__pairwise_flags_", "__pairwise_bytes_"


class PairOptions(GroupOptions, total=False):
    """The keywords :func:`form_pairs` takes beside the strategy, for its overloads' typing."""

    on_invalid: OnInvalid
    keys_only: bool


@overload
def form_pairs(
    data: pl.LazyFrame | PathLike | Sequence[PathLike],
    strategy: Strategy = ...,
    **options: Unpack[PairOptions],
) -> pl.LazyFrame: ...
@overload
def form_pairs(
    data: pl.DataFrame | pa.Table | pd.DataFrame,
    strategy: Strategy = ...,
    **options: Unpack[PairOptions],
) -> pl.DataFrame: ...
@overload
def form_pairs(
    data: DataLike, strategy: Strategy = ..., **options: Unpack[PairOptions]
) -> pl.DataFrame | pl.LazyFrame: ...
def form_pairs(
    data: DataLike,
    strategy: Strategy = "group",
    *,
    columns: Columns | None = None,
    reference: str = "reference",
    poles: Sequence[str] = ("pole_a", "pole_b"),
    control: str = CONTROL_ROLE,
    on_invalid: OnInvalid = "raise",
    keys_only: bool = False,
    storage_options: StorageOptions | None = None,
    **names: Unpack[ColumnNames],
) -> pl.DataFrame | pl.LazyFrame:
    """Form the pairs to judge, one row per pair.

    ``group``: every non-reference row is paired with its group's reference (``_a`` = the
    reference, ``_b`` = the variant). ``contrastive``: every ``poles[0]`` row is paired with every
    ``poles[1]`` row of its group. A row whose role is ``control`` (a second answer to the same
    input as the reference, or as a ``poles[0]`` row) pairs with that row as a control pair:
    ``pair_kind`` is ``"control"`` for those and ``"counterfactual"`` for the rest, and a
    control pair carries its group's ``dimension``. Invalid groups (see :func:`check_groups`)
    raise, or are left out with a warning when ``on_invalid="skip"``. Other input columns ride
    along with ``_a`` / ``_b`` suffixes. Lazy in, lazy out; eager in, eager out.
    ``keys_only=True`` returns only ``pair_id``, the group column, ``dimension``, ids, roles,
    ``pair_kind`` and attributes (no text, no carried columns): the cheap frame for planning
    large runs, where text is attached later. Paths may be object URIs (``s3://``, ``gs://``,
    ``az://``, ``hf://``, ``https://``), read with ``storage_options``.

    >>> import polars as pl
    >>> df = pl.DataFrame({"group_id": [1, 1, 1], "role": ["reference", "variant", "variant"],
    ...     "dimension": "gender", "input": "Describe Alex.", "output": ["A", "B", "C"]})
    >>> form_pairs(df).select("id_a", "id_b", "output_a", "output_b").rows()
    [(0, 1, 'A', 'B'), (0, 2, 'A', 'C')]
    >>> controlled = df.with_columns(role=pl.Series(["reference", "variant", "control"]))
    >>> form_pairs(controlled).select("id_b", "pair_kind").rows()
    [(1, 'counterfactual'), (2, 'control')]
    """
    if on_invalid not in ("raise", "skip"):
        raise OptionError(f'on_invalid must be "raise" or "skip", got {on_invalid!r}.')
    data = open_data(data, storage_options)
    columns = Columns.of(columns, names)
    group_by = columns.group_by
    required = KEY_FIELDS if keys_only else PAIR_FIELDS
    frame, eager, id_col = checked_rows(
        data, columns, strategy, poles, control=control, reference=reference, required=required
    )
    if eager:
        frame = frame.collect().lazy()  # read once: both join branches reuse it

    facts = key_facts(frame, columns, id_col, in_memory=eager)
    problems = group_problems(frame, columns, id_col, strategy, reference, poles, control, facts)
    problems = problems.collect()
    if facts.n_groups == 0 and problems.is_empty():
        warn_empty(data)
    enforce(problems, columns, strategy, on_invalid, facts.n_groups)
    if not problems.is_empty():
        frame = frame.join(
            problems.lazy().select(group_by).unique(),
            on=group_by,
            how="anti",
            nulls_equal=True,
            maintain_order="left",  # the in-memory order promise holds when groups are skipped
        )

    pairs = _join_sides(
        frame, columns, id_col, strategy, reference, poles, control, keys_only, eager
    )
    # In memory, polars' in-memory engine joins these sides in about half the streaming
    # engine's CPU (benchmarks/RESULTS.md); lazy results are left to the caller's engine.
    return pairs.collect(engine="in-memory") if eager else pairs


def refuse_unknown_keywords(
    pairing: Mapping[str, object], caller: Callable[..., object], name: str
) -> None:
    """``caller`` (``score``, ``plan``, ...) hands the keywords it does not take itself on to
    :func:`form_pairs`: one that neither takes is a TypeError that names ``name`` (not
    ``form_pairs``) and the nearest of all their keywords (``both_order``: ``both_orders``)."""
    known = [
        keyword
        for function in (caller, form_pairs)
        for keyword, parameter in inspect.signature(function).parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY
    ]
    known += [f.name for f in fields(Columns)]
    unknown = [keyword for keyword in pairing if keyword not in known]
    if unknown:
        raise unknown_keyword(name, unknown[0], known)


def _join_sides(
    frame: pl.LazyFrame,
    columns: Columns,
    id_col: str,
    strategy: Strategy,
    reference: str,
    poles: Sequence[str],
    control: str = CONTROL_ROLE,
    keys_only: bool = False,
    ordered: bool = True,
) -> pl.LazyFrame:
    g, r = columns.group_by, pl.col(columns.role)
    schema = frame.collect_schema()
    has_attribute = columns.attribute in schema
    with_dimension = has_dimension(schema, columns)
    standard = {id_col: "id", columns.role: "role"}
    if not keys_only:
        standard |= {columns.input: "input", columns.output: "output"}
    if has_attribute:
        standard[columns.attribute] = "attribute"
    skip = {g, columns.dimension, columns.input, columns.output, *standard}
    carried = [] if keys_only else [c for c in schema.names() if c not in skip]
    names = {**standard, **{c: c for c in carried}}
    _check_clashes(names, columns)
    # Each row's share of pair_id and skip_reason is worked out once, before the join.
    helpers = {"a": [pair_id_a(g, id_col).alias(_PID + "a")], "b": [mm3(id_col).alias(_PID + "b")]}
    if not keys_only:
        flags, n_bytes = row_flags(columns.input, columns.output, elementwise=not ordered)
        for s in helpers:
            helpers[s] += [flags.alias(_FLAGS + s), n_bytes.alias(_BYTES + s)]

    def side(suffix: str, keep: pl.Expr, dimension: str | None) -> pl.LazyFrame:
        cols = [pl.col(g)] + [pl.col(c).alias(f"{n}_{suffix}") for c, n in names.items()]
        if dimension and with_dimension:
            cols.append(pl.col(columns.dimension).alias(dimension))
        return frame.filter(keep).select(*cols, *helpers[suffix])

    dimension = pl.col("dimension")
    if strategy == "group":
        # A counterfactual pair takes its variant's dimension; a control pair its reference's
        # (the group's), or the control row's own when the reference names none.
        left = side("a", r == reference, dimension=_GROUP_DIMENSION)
        right = side("b", (r != reference) & r.is_not_null(), dimension="dimension")
        dimension = (
            pl.when(pl.col("role_b") == control)
            .then(pl.coalesce(_GROUP_DIMENSION, "dimension"))
            .otherwise(dimension)
            .alias("dimension")
        )
    else:
        left = side("a", r == poles[0], dimension="dimension")
        right = side("b", r.is_in([poles[1], control]), dimension=None)
    pairs = _join(left, right, g, ordered)
    kind = pl.when(pl.col("role_b") == control).then(pl.lit("control"))
    kind = kind.otherwise(pl.lit("counterfactual")).alias(PAIR_KIND)
    first = [g, *([dimension] if with_dimension else []), "id_a", "id_b", "role_a", "role_b", kind]
    if not keys_only:
        first += ["input_a", "input_b", "output_a", "output_b"]
    if has_attribute:
        first += ["attribute_a", "attribute_b"]
    n_bytes = pl.col(_BYTES + "a") + pl.col(_BYTES + "b")
    reason = reason_from_flags(pl.col(_FLAGS + "a"), pl.col(_FLAGS + "b"), n_bytes)
    rest = [] if keys_only else [reason.alias(SKIP_REASON)]
    rest += [f"{c}_{s}" for c in carried for s in ("a", "b")]
    pid = (pl.col(_PID + "a") + pl.col(_PID + "b")).alias("pair_id")
    return pairs.select(pid, *first, *rest)


def _join(left: pl.LazyFrame, right: pl.LazyFrame, g: str, ordered: bool) -> pl.LazyFrame:
    if ordered:  # in memory: pairs in the input's order, the same on every run
        return left.join(right, on=g, how="inner", maintain_order="left_right")
    # Lazy: build the hash table on the references (one per group, the smaller side by
    # construction) and stream the variants. Keeping row order forbids both: ~2x the time,
    # and a sink that holds everything (benchmarks/RESULTS.md). The order is not defined.
    if _BUILD_SIDE:
        return left.join(right, on=g, how="inner", maintain_order="none", build_side="force_left")
    # older polars choose the build side themselves
    return left.join(right, on=g, how="inner", maintain_order="none")


def warn_empty(data: DataLike) -> None:
    """Say that the input has no rows (an :class:`EmptyDataWarning`): nothing will be paired,
    judged or summarised, which is rarely what was meant."""
    where = ""
    if is_paths(data):
        files = input_files(cast("PathLike | Sequence[PathLike]", data)).files
        where = f" ({files[0]!r})" if len(files) == 1 else f" ({len(files)} files)"
    warnings.warn(
        EmptyDataWarning(
            f"The input{where} has no rows: there is nothing to pair or judge. Check the "
            "source (the path, a filter that removed every row)."
        ),
        stacklevel=3,
    )


def _check_clashes(names: dict[str, str], columns: Columns) -> None:
    produced = [f"{n}_{s}" for n in names.values() for s in ("a", "b")]
    reserved = {"pair_id", "dimension", SKIP_REASON, PAIR_KIND, columns.group_by}
    reserved |= {f"{h}{s}" for h in (_PID, _FLAGS, _BYTES) for s in ("a", "b")}
    clashes = sorted({p for p in produced if produced.count(p) > 1 or p in reserved})
    if clashes:
        raise ColumnError(
            f"Pairing would create duplicate column names {clashes}: rename the input columns "
            "that end up with these names (carried columns get _a / _b suffixes)."
        )
