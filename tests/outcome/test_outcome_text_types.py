"""outcomes reads responses as text: an output column of numbers or a struct was read anyway (a
struct as its JSON, so {"a": "I approve"} was an approval; numbers a neutral 0.5). Now it is a
ColumnError naming the column, its type and the cast, as form_pairs says it."""

from __future__ import annotations

import re

import polars as pl
import pytest

import pairwise_polars as pp


@pytest.mark.parametrize(
    "output",
    [pl.Series([1, 2]), pl.Series([{"a": "I approve"}, {"a": "No."}]), pl.Series([[1]] * 2)],
)
def test_an_output_that_is_not_text_is_named(output: pl.Series) -> None:
    rows = pl.DataFrame({"input": ["Offer a salary."] * 2}).with_columns(output.alias("output"))
    message = f"Column 'output' has type {rows.schema['output']}, expected a string column"
    with pytest.raises(pp.ColumnError, match=re.escape(message)):
        pp.outcomes(rows)


def test_text_and_all_null_outputs_still_read() -> None:
    text = pp.outcomes(pl.DataFrame({"output": ["I approve the loan.", None]}))
    assert text["decision"].to_list()[0] == 1.0
    unread = pp.outcomes(pl.DataFrame({"output": [None, None]}))
    assert unread.height == 2
