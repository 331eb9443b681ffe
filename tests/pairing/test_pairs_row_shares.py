"""What pairing works out once per row before the self-join (issue 28) gives what the pair
formulas give: ``pair_id`` as published, ``skip_reason`` as :func:`skip_reason` on the pair,
and the group checks of an in-memory frame as those of the same frame lazy."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import pairwise_polars as pp
from pairwise_polars.pairing import skip_reason
from pairwise_polars.pairing._pair_id import murmur3_32
from pairwise_polars.pairing._skip import MAX_PAIR_CHARS

_MIX_1, _MIX_2, _U64 = 0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 2**64

# Outputs that start with printable ASCII are text without a search; these are the others.
OUTPUTS = ["ok", "", " ", "\u00a0\t", "\u3000", " x", "\u00e9t\u00e9", "\u200b", "\n\n", None]
INPUTS = ["q", None]


def _rows(strategy: str) -> pl.DataFrame:
    """One group per (output, input) of the first row, against every second row's (output,
    input): every flag on both sides, and one pair too long to judge."""
    first, second = ("reference", "variant") if strategy == "group" else ("pole_a", "pole_b")
    texts = [(o, i) for o in OUTPUTS for i in INPUTS]
    rows = []
    for g, (out_a, in_a) in enumerate(texts):
        rows.append((f"g{g}", first, in_a, out_a))
        rows += [(f"g{g}", second, in_b, out_b) for out_b, in_b in texts]
        rows.append((f"g{g}", "control", "q", "a" * (MAX_PAIR_CHARS if g == 0 else 3)))
    return pl.DataFrame(rows, schema=["group_id", "role", "input", "output"], orient="row")


def _published_pair_id(group: str, id_a: object, id_b: object) -> int:
    h_g, h_a, h_b = (murmur3_32(str(v).encode()) for v in (group, id_a, id_b))
    return (((h_g * _MIX_1 + h_a) % _U64) * _MIX_2 + h_b) % _U64


@pytest.mark.parametrize("strategy", ["group", "contrastive"])
@pytest.mark.parametrize("lazy", [False, True])
def test_skip_reasons_and_pair_ids_are_the_pair_formulas(strategy: str, lazy: bool) -> None:
    rows = _rows(strategy)
    pairs = pp.form_pairs(rows.lazy() if lazy else rows, strategy)
    pairs = pairs.collect() if isinstance(pairs, pl.LazyFrame) else pairs
    assert pairs.height == len(OUTPUTS) * len(INPUTS) * (len(OUTPUTS) * len(INPUTS) + 1)
    expected = pairs.select(skip_reason().alias("skip_reason"))
    assert_frame_equal(pairs.select("skip_reason"), expected)
    reasons = set(pairs["skip_reason"].drop_nulls().to_list())
    assert "empty output_a; null output_b; null input_a" in reasons
    assert any(r.startswith("texts too long") for r in reasons)
    keys = pairs.select("group_id", "id_a", "id_b").rows()
    assert pairs["pair_id"].to_list() == [_published_pair_id(*row) for row in keys]


def test_form_pairs_pair_ids_are_published_ones_with_the_datas_own_ids() -> None:
    rows = pl.DataFrame(
        {
            "group_id": [7, 7, 7, 9, 9],
            "role": ["reference", "variant", "control", "reference", "variant"],
            "id": ["r7", "v7", "c7", "r9", "v9"],
            "input": "q",
            "output": ["a", "b", "c", "d", "e"],
        }
    )
    pairs = pp.form_pairs(rows)
    expected = [_published_pair_id(*row) for row in pairs.select("group_id", "id_a", "id_b").rows()]
    assert pairs["pair_id"].to_list() == expected
    assert pairs.select("id_a", "id_b").rows() == [("r7", "v7"), ("r7", "c7"), ("r9", "v9")]


@pytest.mark.parametrize("ids", ["distinct", "shared across groups", "twice in a group", None])
def test_in_memory_group_checks_are_the_lazy_ones(ids: str | None) -> None:
    rows = pl.DataFrame(
        {
            "group_id": [1, 1, 1, 2, 2, 3, 3, None, 4, 4],
            "role": ["reference", "variant", "refrence", "reference", None]
            + ["variant"] * 3
            + ["Reference ", "variant"],
            "input": "q",
            "output": "o",
        }
    )
    if ids is not None:
        values = {
            "distinct": list(range(10)),
            "shared across groups": [0, 1, 2, 0, 1, 0, 1, 5, 0, 1],
            "twice in a group": [0, 1, 1, 3, 4, 5, 6, 7, 8, 9],
        }[ids]
        rows = rows.with_columns(id=pl.Series(values))
    eager = pp.check_groups(rows)
    assert_frame_equal(eager, pp.check_groups(rows.lazy()).collect())
    problems = set(eager["problem"].to_list())
    assert ("duplicate_ids" in problems) == (ids == "twice in a group")
    assert {"unknown_role", "no_reference", "null_group", "null_role"} <= problems
