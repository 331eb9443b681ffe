"""What the cheaper pairing expressions must keep: the skip reasons of blank and very long texts,
and the in-memory row order when invalid groups are skipped (issue 28)."""

from __future__ import annotations

import warnings

import polars as pl

import pairwise_polars as pp
from pairwise_polars.pairing._pairs import MAX_PAIR_CHARS


def test_blank_outputs_are_unicode_whitespace_as_strip_chars() -> None:
    outputs = ["", " ", "\u00a0", "\u3000\t\n", "\u0085", "\u2028", "\u200b", "\ufeff", "x", None]
    rows = pl.DataFrame({"group_id": list(range(len(outputs))) * 2})
    rows = rows.with_columns(
        role=pl.when(pl.int_range(pl.len()) < len(outputs))
        .then(pl.lit("reference"))
        .otherwise(pl.lit("variant")),
        input=pl.lit("q"),
        output=pl.Series(["ok"] * len(outputs) + outputs),
    )
    reasons = pp.form_pairs(rows).sort("group_id")["skip_reason"].to_list()
    stripped = [None if o is None else o.strip() for o in outputs]
    expected = [
        "null output_b" if o is None else ("empty output_b" if s == "" else None)
        for o, s in zip(outputs, stripped, strict=True)
    ]
    # Python's str.strip and polars' strip_chars agree on these: U+200B and U+FEFF are text
    expected[outputs.index("\u200b")] = None
    expected[outputs.index("\ufeff")] = None
    assert reasons == expected


def test_texts_too_long_count_characters_not_bytes() -> None:
    wide = "é" * (MAX_PAIR_CHARS // 2)  # 2 bytes each: over the limit in bytes, not characters
    long = "a" * (MAX_PAIR_CHARS + 1)
    rows = pl.DataFrame(
        {
            "group_id": [1, 1, 2, 2],
            "role": ["reference", "variant"] * 2,
            "input": "q",
            "output": ["ok", wide, "ok", long],
        }
    )
    reasons = pp.form_pairs(rows)["skip_reason"].to_list()
    assert reasons[0] is None
    assert reasons[1] == (
        f"texts too long to judge ({MAX_PAIR_CHARS + 1 + 4} characters; at most "
        f"{MAX_PAIR_CHARS} fit a prompt)"
    )


def test_skipping_invalid_groups_keeps_the_input_order() -> None:
    n = 3_000
    rows = pl.DataFrame(
        {
            "group_id": [g for g in range(n) for _ in range(3)],
            "role": ["reference", "variant", "variant"] * n,
            "input": "q",
            "output": "a",
        }
    ).with_columns(  # every 7th group loses its reference: invalid, skipped
        role=pl.when((pl.col("group_id") % 7 == 0) & (pl.col("role") == "reference"))
        .then(pl.lit("variant"))
        .otherwise(pl.col("role"))
    )
    rows = pl.concat([rows, rows.head(2).with_columns(group_id=None)])  # a null group too
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        skipped = pp.form_pairs(rows, on_invalid="skip")
    valid = pp.form_pairs(
        rows.with_row_index("id").filter(pl.col("group_id") % 7 != 0)
    )  # nulls out
    assert skipped["id_b"].to_list() == valid["id_b"].to_list()
    assert skipped["id_b"].is_sorted()
