"""Group diagnostics: which groups cannot form pairs, and why. Found before any judge call."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypedDict, overload

import polars as pl

from pairwise_polars._errors import Fix, InvalidGroupsError, OptionError, PairwiseWarning
from pairwise_polars.io._frames import DataLike, PathLike, finish, open_data, to_lazy
from pairwise_polars.io._stores import StorageOptions
from pairwise_polars.pairing._columns import (
    PAIR_FIELDS,
    ROW_INDEX,
    ColumnNames,
    Columns,
    check_columns,
    has_dimension,
    with_ids,
)
from pairwise_polars.pairing._roles import DETAIL, unknown_roles

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    from typing_extensions import Unpack

Strategy = Literal["group", "contrastive"]
STRATEGIES = ("group", "contrastive")
GROUP_PROBLEMS = (
    "null_group",
    "null_role",
    "no_reference",
    "multiple_references",
    "no_variants",
    "control_without_reference",
    "unknown_role",
    "null_id",
    "duplicate_ids",
)
CONTRASTIVE_PROBLEMS = (
    "null_group",
    "null_role",
    "missing_pole",
    "mixed_dimension",
    "control_without_pole",
    "unknown_role",
    "null_id",
    "duplicate_ids",
)
CONTROL_ROLE = "control"
"""The default role of a control row: a second, independent answer to the same input as the
group's reference (``group``) or as a ``poles[0]`` row (``contrastive``). It pairs with that row
as a control pair (``pair_kind == "control"``): the divergence re-asking alone gives."""
_EXAMPLES = 5
_SEEN_ROLES = ("no_reference", "missing_pole")  # problems whose detail lists the role values


class GroupOptions(ColumnNames, total=False):
    """The keywords :func:`check_groups` takes beside the strategy (and :func:`form_pairs`,
    with more), for the typing of their overloads."""

    columns: Columns | None
    reference: str
    poles: Sequence[str]
    control: str
    storage_options: StorageOptions | None


@overload
def check_groups(
    data: pl.LazyFrame | PathLike | Sequence[PathLike],
    strategy: Strategy = ...,
    **options: Unpack[GroupOptions],
) -> pl.LazyFrame: ...
@overload
def check_groups(
    data: pl.DataFrame | pa.Table | pd.DataFrame,
    strategy: Strategy = ...,
    **options: Unpack[GroupOptions],
) -> pl.DataFrame: ...
@overload
def check_groups(
    data: DataLike, strategy: Strategy = ..., **options: Unpack[GroupOptions]
) -> pl.DataFrame | pl.LazyFrame: ...
def check_groups(
    data: DataLike,
    strategy: Strategy = "group",
    *,
    columns: Columns | None = None,
    reference: str = "reference",
    poles: Sequence[str] = ("pole_a", "pole_b"),
    control: str = CONTROL_ROLE,
    storage_options: StorageOptions | None = None,
    **names: Unpack[ColumnNames],
) -> pl.DataFrame | pl.LazyFrame:
    """One row per problem: the group column, ``problem``, ``n_rows`` (the group's rows; for
    ``unknown_role``, the rows with that role value) and ``detail`` (or null).

    Problems for ``group``: ``no_reference`` (with the role values seen),
    ``multiple_references``, ``no_variants`` (no row besides the reference and its controls),
    ``control_without_reference`` (control rows and no reference to pair them with); for
    ``contrastive``: ``missing_pole`` (with the role values seen), ``mixed_dimension``,
    ``control_without_pole`` (control rows and no ``poles[0]`` row). Rows whose role is
    ``control`` (default ``"control"``) are control rows: several per group are fine, each
    makes a control pair. Both report ``null_group`` (rows without a group
    id), ``null_role``, ``null_id`` (rows without an id), ``duplicate_ids`` (an id twice in a
    group) and ``unknown_role``: with ``group``, every role other than the reference is a
    variant, so an unknown role is one that looks like a typo of the reference (``"refrence"``,
    ``"Reference "``); with ``contrastive``, any role other than the two poles and
    ``"control"``. Its ``detail`` names the value, with a near match when there is one. Column
    names as for :func:`form_pairs`.

    >>> import polars as pl
    >>> df = pl.DataFrame({"group_id": [1, 1, 2], "role": ["reference", "variant", "variant"],
    ...     "dimension": "gender", "input": "q", "output": ["a", "b", "c"]})
    >>> check_groups(df).rows()
    [(2, 'no_reference', 1, "roles seen: 'variant'")]
    """
    data = open_data(data, storage_options)
    columns = Columns.of(columns, names, caller="check_groups")
    frame, eager, id_col = checked_rows(
        data, columns, strategy, poles, control=control, reference=reference, caller="check_groups"
    )
    # eager: one small query first; lazy: one plan, nothing run before the caller collects
    facts = key_facts(frame, columns, id_col, in_memory=True) if eager else None
    problems = group_problems(frame, columns, id_col, strategy, reference, poles, control, facts)
    return finish(problems, eager)


class PairingChecks(TypedDict, total=False):
    """The keywords of :func:`check_pairing` (and :func:`checked_rows`, which passes them on)."""

    control: str
    reference: str
    required: tuple[str, ...]
    caller: str


def checked_rows(
    data: DataLike,
    columns: Columns,
    strategy: str,
    poles: Sequence[str],
    **checks: Unpack[PairingChecks],
) -> tuple[pl.LazyFrame, bool, str]:
    """Every check before pairing: ``(lazy frame with an id column, eager, id column)``;
    ``checks`` as for :func:`check_pairing`."""
    frame, eager = to_lazy(data)
    check_pairing(frame.collect_schema(), columns, strategy, poles, **checks)
    if frame.collect_schema()[columns.group_by].is_float():
        # NaN is no group: as null, it is reported (a NaN equals every NaN in a join)
        frame = frame.with_columns(pl.col(columns.group_by).fill_nan(None))
    frame, id_col = with_ids(_null_texts_as_strings(frame, columns), columns)
    return frame, eager, id_col


def _null_texts_as_strings(frame: pl.LazyFrame, columns: Columns) -> pl.LazyFrame:
    """Text columns of polars' Null type (only nulls: an all-null JSON field, a pandas column
    of None) as strings, so their pairs are kept with a ``skip_reason`` as any null text is."""
    schema = frame.collect_schema()
    texts = (columns.role, columns.dimension, columns.attribute, columns.input, columns.output)
    null = [name for name in dict.fromkeys(texts) if schema.get(name) == pl.Null]
    return frame.with_columns(pl.col(null).cast(pl.String)) if null else frame


def check_pairing(
    schema: pl.Schema,
    columns: Columns,
    strategy: str,
    poles: Sequence[str],
    *,
    control: str = CONTROL_ROLE,
    reference: str = "reference",
    required: tuple[str, ...] = PAIR_FIELDS,
    caller: str = "form_pairs",
) -> None:
    """The checks that need only the schema: columns, their types, the strategy, poles and the
    control role."""
    check_columns(schema, columns, required=required, caller=caller)
    _check_strategy(strategy, poles)
    _check_control(strategy, control, reference, poles)


def group_problems(
    frame: pl.LazyFrame,
    columns: Columns,
    id_col: str,
    strategy: Strategy,
    reference: str,
    poles: Sequence[str],
    control: str = CONTROL_ROLE,
    facts: KeyFacts | None = None,
) -> pl.LazyFrame:
    """The lazy problems frame of ``check_groups`` (keys only: cheap on large parquet runs).
    ``facts`` (of :func:`key_facts`) spare the per-group count of distinct ids when every id
    is distinct, and the judging of every row's role."""
    g, r = columns.group_by, pl.col(columns.role).cast(pl.String)
    keyed = pl.col(g).is_not_null()
    roles = r.drop_nulls().unique().sort().alias("roles")
    # Per strategy: the rows whose ids must be there and unique, its own counts, rules and
    # details; both strategies share the counts and rules of groups, roles and ids.
    if strategy == "group":
        own = _group_checks(r, id_col, keyed, reference, control)
    else:
        own = _contrastive_checks(frame, columns, r, id_col, keyed, poles, control)
    stats = frame.group_by(g).agg(
        n_rows=pl.len(),
        n_control=(r == control).sum(),
        n_null_role=r.is_null().sum(),
        n_ids=own.id_rows if facts and facts.ids_distinct else own.ids.n_unique(),
        n_null_ids=own.ids.is_null().sum(),
        n_id_rows=own.id_rows,
        **own.counts,
    )
    conditions = {
        "null_group": pl.col(g).is_null(),
        "null_role": keyed & (pl.col("n_null_role") > 0),
        **own.rules,
        "null_id": keyed & (pl.col("n_null_ids") > 0),
        "duplicate_ids": keyed & (pl.col("n_ids") < pl.col("n_id_rows")),
    }
    parts = []
    for name, cond in conditions.items():
        failing = stats.filter(cond)
        if name in _SEEN_ROLES:  # the role values, gathered only for the groups that fail
            seen = frame.join(failing.select(g), on=g, how="semi").group_by(g).agg(roles)
            failing = failing.join(seen, on=g, how="left")
        detail = own.details.get(name, pl.lit(None, pl.String))
        parts.append(
            failing.select(
                g, problem=pl.lit(name), n_rows=pl.col("n_rows").cast(pl.Int64), detail=detail
            )
        )
    values = facts.roles if facts else None
    parts.append(unknown_roles(frame, g, r, strategy, reference, poles, control, values))
    return pl.concat(parts, how="vertical").sort(
        "problem", g, DETAIL, nulls_last=True, maintain_order=True
    )


@dataclass(frozen=True)
class KeyFacts:
    """What one pass over the key columns tells: the number of groups (null counted as one),
    whether every id is known to be distinct, and the role values."""

    n_groups: int
    ids_distinct: bool
    roles: tuple[str | None, ...]


def key_facts(frame: pl.LazyFrame, columns: Columns, id_col: str, *, in_memory: bool) -> KeyFacts:
    """The :class:`KeyFacts` of a frame (with its id column): one small query. In memory,
    polars' in-memory engine runs it several times cheaper and counts the distinct ids (which
    spares counting them per group); streamed, that count costs what it spares: not made."""
    ids = pl.col(id_col)
    if id_col == ROW_INDEX:  # row positions are distinct by construction
        distinct = pl.lit(True)
    else:
        distinct = ids.n_unique() == pl.len() if in_memory else pl.lit(False)
    n_groups, ids_distinct, roles = (
        frame.select(
            pl.col(columns.group_by).n_unique(),
            distinct,
            pl.col(columns.role).cast(pl.String).unique().implode(),
        )
        .collect(engine="in-memory" if in_memory else "auto")
        .row(0)
    )
    return KeyFacts(n_groups, ids_distinct, tuple(roles))


@dataclass(frozen=True)
class _StrategyChecks:
    """What a strategy adds to the checks of groups, roles and ids: the ids that must be there
    and unique (``ids``, out of ``id_rows`` rows), its own counts per group, its problems'
    rules over the counts and their details."""

    ids: pl.Expr
    id_rows: pl.Expr
    counts: dict[str, pl.Expr]
    rules: dict[str, pl.Expr]
    details: dict[str, pl.Expr]


def _roles_seen() -> pl.Expr:
    """The detail of a group without its reference (or a pole): the role values it has."""
    quoted = pl.col("roles").list.eval(pl.lit("'") + pl.element() + pl.lit("'"))
    return (
        pl.when(pl.col("roles").list.len() > 0)
        .then(pl.lit("roles seen: ") + quoted.list.join(", "))
        .otherwise(pl.lit("roles seen: none (every role is null)"))
    )


def _lone_controls(control: str, partner: str, *, answers: str, add: str) -> pl.Expr:
    """The detail of a group with control rows and no ``partner`` row to pair them with: how
    many, what a control row ``answers`` and what to ``add``."""
    return pl.col("n_control").cast(pl.String) + pl.lit(
        f" {control!r} row(s) and no {partner!r} row: a control row is a second answer to "
        f"{answers}; add {add} or drop the control rows"
    )


def _group_checks(
    r: pl.Expr, id_col: str, keyed: pl.Expr, reference: str, control: str
) -> _StrategyChecks:
    """The ``group`` strategy's checks: one reference, some variants, controls beside it."""
    return _StrategyChecks(
        ids=pl.col(id_col),
        id_rows=pl.len(),
        counts={"n_ref": (r == reference).sum()},
        rules={
            "no_reference": keyed & (pl.col("n_ref") == 0),
            "multiple_references": keyed & (pl.col("n_ref") > 1),
            "no_variants": keyed
            & (pl.col("n_ref") == 1)
            & (
                pl.col("n_rows") - pl.col("n_ref") - pl.col("n_control") - pl.col("n_null_role")
                == 0
            ),
            "control_without_reference": keyed & (pl.col("n_control") > 0) & (pl.col("n_ref") == 0),
        },
        details={
            "no_reference": _roles_seen(),
            "control_without_reference": _lone_controls(
                control,
                reference,
                answers="the reference's input and pairs with the reference",
                add="the reference",
            ),
        },
    )


def _contrastive_checks(
    frame: pl.LazyFrame,
    columns: Columns,
    r: pl.Expr,
    id_col: str,
    keyed: pl.Expr,
    poles: Sequence[str],
    control: str,
) -> _StrategyChecks:
    """The ``contrastive`` strategy's checks: both poles, one dimension, controls beside the
    first pole; ids only of the rows that take part in pairs."""
    in_poles = r.is_in(list(poles))
    in_pairs = r.is_in([*poles, control])
    # Without a dimension column the group's dimension cannot disagree.
    n_dims = (
        pl.col(columns.dimension).filter(in_poles).n_unique()
        if has_dimension(frame.collect_schema(), columns)
        else pl.len().clip(upper_bound=1)
    )
    return _StrategyChecks(
        ids=pl.col(id_col).filter(in_pairs),
        id_rows=in_pairs.sum(),
        counts={"n_a": (r == poles[0]).sum(), "n_b": (r == poles[1]).sum(), "n_dims": n_dims},
        rules={
            "missing_pole": keyed & ((pl.col("n_a") == 0) | (pl.col("n_b") == 0)),
            "mixed_dimension": keyed & (pl.col("n_dims") > 1),
            "control_without_pole": keyed & (pl.col("n_control") > 0) & (pl.col("n_a") == 0),
        },
        details={
            "missing_pole": _roles_seen(),
            "control_without_pole": _lone_controls(
                control,
                poles[0],
                answers=f"a {poles[0]!r} row's input and pairs with it",
                add=f"the {poles[0]!r} row",
            ),
        },
    )


def enforce(
    problems: pl.DataFrame,
    columns: Columns,
    strategy: Strategy,
    on_invalid: str,
    n_groups: int,
) -> None:
    """Raise or warn about invalid groups, with counts per problem and example group ids."""
    if problems.is_empty():
        return
    g = columns.group_by
    n_bad = problems[g].n_unique()
    lines = []
    for (problem,), part in problems.group_by("problem", maintain_order=True):
        if problem == "unknown_role":
            for (detail,), same in part.group_by(DETAIL, maintain_order=True):
                examples = ", ".join(
                    repr(v) for v in same[g].unique(maintain_order=True).head(_EXAMPLES).to_list()
                )
                lines.append(
                    f"  unknown_role: {detail} ({same['n_rows'].sum()} row(s) in "
                    f"{same[g].n_unique()} group(s), e.g. {examples})"
                )
            continue
        examples = ", ".join(repr(v) for v in part[g].head(_EXAMPLES).to_list())
        first = part.row(0, named=True)
        detail = f"; in {first[g]!r}: {first[DETAIL]}" if first.get(DETAIL) else ""
        lines.append(f"  {problem}: {part.height} group(s), e.g. {examples}{detail}")
    detail = "\n".join(lines)
    if on_invalid == "raise":
        head = (
            f"{n_bad} of {n_groups} groups cannot form {strategy!r} pairs "
            f"(group column {g!r}, role column {columns.role!r}):\n{detail}"
        )
        raise InvalidGroupsError(
            f"{head}\nSee check_groups(data, ...) for the full list, fix the data, or pass "
            'on_invalid="skip" to leave these groups out.',
            detail=head,
            fixes=[Fix("skip_invalid", {"on_invalid": "skip"})],
        )
    head = f"Skipped {n_bad} of {n_groups} groups that cannot form {strategy!r} pairs:\n{detail}"
    warnings.warn(
        PairwiseWarning(
            f"{head}\ncheck_groups(data, ...) lists them all.",
            detail=head,
            fixes=[Fix("list_invalid")],
        ),
        stacklevel=3,
    )


def _check_control(strategy: str, control: str, reference: str, poles: Sequence[str]) -> None:
    if not isinstance(control, str) or not control:
        raise OptionError(f"control must be a non-empty role value, got {control!r}.")
    taken = [reference] if strategy == "group" else list(poles)
    if control in taken:
        what = "the reference role" if strategy == "group" else "a pole"
        raise OptionError(
            f"control={control!r} is also {what}: a control row needs a role of its own "
            '(default "control").'
        )


def _check_strategy(strategy: str, poles: Sequence[str]) -> None:
    if strategy not in STRATEGIES:
        raise OptionError(f"Unknown strategy {strategy!r}: use 'group' or 'contrastive'.")
    if strategy == "contrastive" and (len(poles) != 2 or poles[0] == poles[1]):
        raise OptionError(f"poles must be two different role values, got {tuple(poles)!r}.")
