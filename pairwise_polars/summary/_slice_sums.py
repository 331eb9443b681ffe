"""Stage two's first half: each slice's sums over its groups' per-group sums.

Three passes over the per-group rows (one row per slice and group, far fewer than pairs),
sorted so that each slice's rows sit together
(:class:`~pairwise_polars.summary._slice_rows.SliceRows`):

1. the slice totals (``N``, ``S``, the hit counts, the control sums), once per slice;
2. each group's terms (residuals, their squares and fourth powers, the design's weights) from
   its own sums and its slice's totals, set on its row: a total is computed once, not once per
   expression that reads it;
3. the terms added up per slice (and, with labels, the prediction-powered sums, in passes of
   their own: :func:`~pairwise_polars.summary._ppi.ppi_sums`).

The same summary to the last bit from any path (in memory, chunked parts, Ray blocks, rows in
any order): the per-group sums of a group's rows are exact
(:func:`~pairwise_polars.summary._sums.group_sums`), the per-group rows are sorted into one
order (by the slice and the group when they name one row each, else by every column), and
each slice's sums are numpy's over its rows in that order, which do not depend on where polars
places the rows or on its threads.
"""

from __future__ import annotations

import polars as pl
import polars.selectors as cs

from pairwise_polars.summary._excess import attach_controls
from pairwise_polars.summary._intervals import DESIGN_DF, MEAN, SIZE_SQ
from pairwise_polars.summary._ppi import LABEL_SUM_COLUMNS, attach_control_labels, ppi_sums
from pairwise_polars.summary._slice_rows import SliceRows
from pairwise_polars.summary._sums import CODE, CONTROL_SUMS, SCORED_SUMS, SUM_COLUMNS

ENGINE = "in-memory"
"""The engine of the collects before the sums: the in-memory one (the streaming engine adds
partial sums in whatever order its threads finish)."""
_T, _TERM, _P = "__pairwise_total_", "__pairwise_term_", "__pairwise_part_"
_RATE_PARTS = ("x2", "nx", "u2")  # what the rates' bounds read (see ``with_intervals``)
_RESIDUALS = (
    ("equivalence_rate", "n_equivalent", _RATE_PARTS),
    ("divergence_rate", "n_divergent", _RATE_PARTS),
    (MEAN, "score_sum", (*_RATE_PARTS, "u4", "r2")),  # Satterthwaite's df, the power
)
_POWERS = ("r2", "u2", "u4")  # the excess's: its bounds (u) and its power (r2)


def per_slice(
    collected: pl.DataFrame, keys: list[str], labelled: bool, *, one_row_per_group: bool
) -> pl.DataFrame:
    """The per-group sums added up per slice of ``keys`` (the control pairs' sums attached to
    their groups first): what the intervals, PPI and excess figures are computed from.
    ``one_row_per_group``: the sums are known to hold one row per slice and group."""
    known = {*keys, *SUM_COLUMNS, *LABEL_SUM_COLUMNS}
    groups = [c for c in collected.columns if c not in known and not c.startswith(CODE)]
    rows = collected
    # The group column: controls are the noise of their group (nothing to attach without any:
    # the join would only copy zeros).
    if len(groups) == 1 and collected["n_control"].sum() > 0:
        attached = rows.lazy().select(~cs.starts_with(CODE))  # the keys are coded again
        if labelled:  # before the judge's: it drops slice rows of control pairs alone
            attached = attach_control_labels(attached, keys, groups[0])
        rows = attach_controls(attached, keys, groups[0]).collect(engine=ENGINE)
    on = SliceRows.sort(rows, keys, groups, unique=one_row_per_group and len(groups) == 1)
    rows = on.rows
    totals = pl.concat(
        [
            on.slices,
            on.added(rows.select("n_pairs", "n_scored", "n_errors")),
            on.added(rows.select((pl.col("n_scored") > 0).cast(pl.Int64).alias("n_groups"))),
            on.added(rows.select(*SCORED_SUMS, *CONTROL_SUMS)),
        ],
        how="horizontal",
    )
    controls = totals["n_control_scored"].sum() > 0
    terms = _terms(controls)
    needed = ["n_scored", "n_equivalent", "n_divergent", "score_sum"]
    needed += ["n_control_scored", "control_score_sum"] if controls else []
    on_totals = rows.with_columns(
        pl.Series(_T + c, on.broadcast(totals[c].to_numpy())) for c in needed
    )
    staged = on_totals.lazy()
    for parts in _parts(controls):
        staged = staged.with_columns(parts)
    summed = [
        on.added(staged.select(e.alias(_TERM + n) for n, e in terms.items()).collect(engine=ENGINE))
    ]
    if labelled:  # the prediction-powered sums, over the same rows in the same order
        summed.append(pl.DataFrame(ppi_sums(on)))
    frame = pl.concat([totals, *summed], how="horizontal")
    return frame.with_columns(_finish(controls)).drop(_TERM + name for name in terms)


def _parts(controls: bool) -> list[list[pl.Expr]]:
    """What several terms read, each computed once per group, in passes (a pass reads the one
    before): each residual (the group's sum less its share of the slice's) and ``1 - n_g / N``,
    then the residual's square over it and the design's weight (with controls, the same of
    the control pairs and :func:`_excess_parts`). Inlined in every term that reads them,
    polars computed them again in each: most of the terms' time."""
    n, big_n = _n(), _big_n()
    first = [
        (pl.col(total) - pl.col(_T + total) / big_n * n).alias(f"{_P}r_{name}")
        for name, total, _ in _RESIDUALS
    ]
    # 1 - n_g / N is 0 only when one group holds every pair: no interval then (G = 1).
    first.append((1 - n / big_n).alias(_P + "rest"))
    rest = pl.col(_P + "rest")
    second = [
        (_part(f"r_{name}") * _part(f"r_{name}") / rest).alias(f"{_P}u2_{name}")
        for name, _, _ in _RESIDUALS
    ]
    second.append((n / rest).alias(_P + "d"))
    if not controls:
        return [first, second]
    excess = _excess_parts(n, big_n)
    return [first + excess[0], second + excess[1], excess[2]]


def _excess_parts(n: pl.Expr, big_n: pl.Expr) -> list[list[pl.Expr]]:
    """The parts of the excess divergence's terms, in three passes: the control pairs'
    residual and ``1 - q_g / Q``; the weights ``a`` and ``b`` and the control residual's
    square over its share; the excess residuals and the design's sums from them."""
    c, q, big_q = pl.col("control_score_sum"), _q(), _big_q()
    k = pl.col(_T + "control_score_sum") / big_q
    first = [(c - k * q).alias(_P + "control_r"), (1 - q / big_q).alias(_P + "q_rest")]
    control_r, q_rest = _part("control_r"), _part("q_rest")
    second = [
        (1 / _part("rest").sqrt()).alias(_P + "a"),
        (1 / q_rest.sqrt()).alias(_P + "b"),
        (control_r * control_r / q_rest).alias(_P + "control_u2"),
        (q / q_rest).alias(_P + "q_d"),
    ]
    a, b, r = _part("a"), _part("b"), _part(f"r_{MEAN}")  # r: s - m * n
    third = [
        (r / big_n - control_r / big_q).alias(_P + "excess_r"),
        (r * a / big_n - control_r * b / big_q).alias(_P + "excess_u"),
        (a * a * n / (big_n * big_n) + b * b * q / (big_q * big_q)).alias(_P + "excess_d"),
        (a * a * n * n / (big_n * big_n * big_n)).alias(_P + "excess_x2"),
        (b * b * q * q / (big_q * big_q * big_q)).alias(_P + "excess_y2"),
    ]
    return [first, second, third]


def _terms(controls: bool) -> dict[str, pl.Expr]:
    """Each group's terms, from its sums, its slice's totals (columns ``_T + name``) and the
    :func:`_parts` they share."""
    n, big_n = _n(), _big_n()
    out: dict[str, pl.Expr] = {}
    for name, total, parts in _RESIDUALS:
        x, r, u2 = pl.col(total), _part(f"r_{name}"), _part(f"u2_{name}")
        every = {"x2": x * x, "nx": x * pl.col("n_scored"), "r2": r * r, "u2": u2, "u4": u2 * u2}
        out |= {f"{name}_{part}": every[part] for part in parts}
    out |= _design_terms(n, big_n, _part("d"), "n")
    if controls:
        out |= _excess_terms(n, big_n)
    return out


def _n() -> pl.Expr:
    return pl.col("n_scored").cast(pl.Float64)


def _big_n() -> pl.Expr:
    return pl.col(_T + "n_scored").cast(pl.Float64)


def _q() -> pl.Expr:
    return pl.col("n_control_scored").cast(pl.Float64)


def _big_q() -> pl.Expr:
    return pl.col(_T + "n_control_scored").cast(pl.Float64)


def _part(name: str) -> pl.Expr:
    return pl.col(_P + name)


def _design_terms(n: pl.Expr, big_n: pl.Expr, d: pl.Expr, name: str) -> dict[str, pl.Expr]:
    """The terms of Bell and McCaffrey's degrees of freedom of a mean's CR2 variance (``d``:
    the group's weight, ``n / (1 - n / big_n)``)."""
    return {
        f"{name}_dd": d * d,
        f"{name}_ddn": d * d * n,
        f"{name}_dn": d * n,
        f"{name}_nn": n * n,
        f"{name}_whole": (n / big_n >= 1).cast(pl.Int64),
    }


def _excess_terms(n: pl.Expr, big_n: pl.Expr) -> dict[str, pl.Expr]:
    """The terms of the excess divergence's sums (see
    :mod:`pairwise_polars.summary._excess`), from :func:`_excess_parts`."""
    q, big_q = _q(), _big_q()
    a, b, r, u = _part("a"), _part("b"), _part("excess_r"), _part("excess_u")
    d, x2, y2 = _part("excess_d"), _part("excess_x2"), _part("excess_y2")
    control_u2 = _part("control_u2")
    return {
        "excess_r2": r * r,
        "excess_u2": u * u,
        "excess_u4": u * u * u * u,
        "excess_d": d,
        "excess_x2": x2,
        "excess_y2": y2,
        "excess_xy": a * b * n * q / (big_n * big_q).pow(1.5),
        "excess_dd": d * d,
        "excess_dx2": d * x2,
        "excess_dy2": d * y2,
        "control_u2": control_u2,
        "control_u4": control_u2 * control_u2,
        "excess_groups": ((n > 0) | (q > 0)).cast(pl.Int64),
        "control_groups": (q > 0).cast(pl.Int64),
        **_design_terms(q, big_q, _part("q_d"), "q"),
    }


def _finish(controls: bool) -> list[pl.Expr]:
    """The slice's sums from its terms' sums and totals: the columns ``with_intervals`` and
    ``with_excess`` read."""

    t = _term
    big_n = pl.col("n_scored").cast(pl.Float64)
    scored = big_n > 0
    out = [
        pl.when(scored).then(t(f"{name}_{part}")).alias(f"{name}_{part}")
        for name, _, parts in _RESIDUALS
        for part in parts
    ]
    out += [
        pl.when(scored & (t("n_whole") == 0)).then(_design_df(big_n, "n")).alias(DESIGN_DF),
        t("n_nn").alias(SIZE_SQ),
    ]
    return out + (_excess_finish(big_n) if controls else _no_excess())


def _design_df(big_n: pl.Expr, name: str) -> pl.Expr:
    dd, ddn, dn = (pl.col(f"{_TERM}{name}_{part}") for part in ("dd", "ddn", "dn"))
    f = dd - 2 / big_n * ddn + dn**2 / (big_n * big_n)
    return big_n * big_n / f


def _term(name: str) -> pl.Expr:
    return pl.col(_TERM + name)


def _excess_finish(big_n: pl.Expr) -> list[pl.Expr]:
    t = _term
    big_q = pl.col("n_control_scored").cast(pl.Float64)
    both = (big_n > 0) & (big_q > 0)
    whole = (t("n_whole") == 0) & (t("q_whole") == 0)
    trace = t("excess_d") - t("excess_x2") - t("excess_y2")
    frobenius = (
        t("excess_dd")
        - 2 * t("excess_dx2")
        - 2 * t("excess_dy2")
        + t("excess_x2") ** 2
        + t("excess_y2") ** 2
        + 2 * t("excess_xy") ** 2
    )
    has_q = big_q > 0
    return [
        *(pl.when(both).then(t(f"excess_{p}")).alias(f"__excess_{p}") for p in _POWERS),
        pl.when(both & whole).then(trace * trace / frobenius).alias("__excess_bm"),
        pl.when(has_q).then(t("control_u2")).alias("__control_u2"),
        pl.when(has_q).then(t("control_u4")).alias("__control_u4"),
        t("q_nn").alias("__control_n_sq"),
        pl.when(has_q & (t("q_whole") == 0)).then(_design_df(big_q, "q")).alias("__control_bm"),
        t("excess_groups").alias("__excess_groups"),
        t("control_groups").alias("__control_groups"),
    ]


def _no_excess() -> list[pl.Expr]:
    """What :func:`_excess_finish` gives when no slice has a scored control pair, without
    computing a term: nulls, no control sizes, and the groups with scored pairs."""
    null = pl.lit(None, pl.Float64)
    return [
        *(null.alias(f"__excess_{p}") for p in (*_POWERS, "bm")),
        null.alias("__control_u2"),
        null.alias("__control_u4"),
        pl.lit(0.0).alias("__control_n_sq"),
        null.alias("__control_bm"),
        pl.col("n_groups").alias("__excess_groups"),
        pl.lit(0, pl.Int64).alias("__control_groups"),
    ]
