"""Pair formation: column names and checks, group diagnostics, and the self-joins."""

from pairwise_polars.pairing._columns import ColumnNames, Columns, OnInvalid, PairingOptions
from pairwise_polars.pairing._groups import CONTROL_ROLE, Strategy, check_groups
from pairwise_polars.pairing._pair_id import pair_id
from pairwise_polars.pairing._pairs import PAIR_KIND, PAIR_KINDS, form_pairs
from pairwise_polars.pairing._skip import SKIP_REASON, skip_reason

__all__ = [
    "CONTROL_ROLE",
    "PAIR_KIND",
    "PAIR_KINDS",
    "SKIP_REASON",
    "ColumnNames",
    "Columns",
    "OnInvalid",
    "PairingOptions",
    "Strategy",
    "check_groups",
    "form_pairs",
    "pair_id",
    "skip_reason",
]
