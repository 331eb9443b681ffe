"""The views a pair is judged in: each is a row of the keyed request frame (its ``view``
column), and each kind of view has a combine rule that folds its results back into the pair's
row.

Adding a way of judging means a view here, its rows in :func:`view_exprs` and its combine rule
in :mod:`pairwise_polars.scoring._results`; the spec (:class:`ScoringSpec`) says which views a
call asks for, and everything between (preparation, the cache, the plan, runs, Ray) carries
the rows without knowing what they mean.
"""

from __future__ import annotations

import polars as pl

from pairwise_polars.pairing._pair_id import mm3

VIEW = "view"
"""The keyed request frame's view column."""
AB, BA = "a-b", "b-a"
"""The order views: the pair shown as (a, b), or with its sides swapped."""
PLAIN, MASKED = "plain", "masked"
"""The audit views (``audit="mask"``): the pair as it is, and with the attribute's terms
masked in both requests and both responses. A masked request row's view is its order view
behind ``"masked "`` (``"masked a-b"``); the scored frame's ``view`` column says
``"plain"`` or ``"masked"``."""
AUDIT = "__pairwise_audit"
"""Helper column of the join back: a request row's audit view."""


def shown_b_first() -> pl.Expr:
    """Whether a pair is shown to the judge as (b, a): one bit of the MurmurHash3 of its
    ``pair_id`` (as text), the published function ``pair_id`` itself is built from. So the
    draw is the same on every run, polars version and input kind, and the cache holds."""
    return (mm3("pair_id") & 1) == 1


def order_views(both_orders: bool, *, shuffle: bool) -> list[pl.Expr]:
    """One expression per request row a pair gets, each the row's order view: both views
    with ``both_orders``; otherwise one, drawn by :func:`shown_b_first` with ``shuffle``,
    else ``"a-b"``."""
    if both_orders:
        return [pl.lit(AB), pl.lit(BA)]
    if shuffle:
        return [pl.when(shown_b_first()).then(pl.lit(BA)).otherwise(pl.lit(AB))]
    return [pl.lit(AB)]


def is_swapped(view: pl.Expr) -> pl.Expr:
    """Whether a view shows the pair's sides swapped (the judge's "first" is side b)."""
    return view.str.ends_with(BA)


def masked_view(view: pl.Expr) -> pl.Expr:
    """The masked counterpart of an order view."""
    return pl.lit(f"{MASKED} ") + view


def audit_view(view: pl.Expr) -> pl.Expr:
    """``"masked"`` for a masked request row, else ``"plain"``."""
    return pl.when(view.str.starts_with(f"{MASKED} ")).then(pl.lit(MASKED)).otherwise(pl.lit(PLAIN))


def order_of(view: pl.Expr) -> pl.Expr:
    """The order view of a request row, whatever its audit view."""
    return pl.when(is_swapped(view)).then(pl.lit(BA)).otherwise(pl.lit(AB))
