"""What a new user read against what they got: the scored frame's kind for a LazyFrame input
(the Inputs table says it), and ``shown_first`` with both orders."""

from __future__ import annotations

from pathlib import Path

import polars as pl

import pairwise_polars as pp

README = Path(__file__).resolve().parents[2] / "README.md"


def rows() -> pl.DataFrame:
    return pl.DataFrame(
        {"group_id": [1, 1, 2, 2], "role": ["reference", "variant"] * 2, "dimension": "gender",
         "input": "Describe Sam.", "output": ["Kind.", "Rude.", "Kind.", "Kind."]}
    )  # fmt: skip


def test_a_lazy_input_pairs_lazily_and_scores_to_a_dataframe_as_the_inputs_table_says() -> None:
    assert isinstance(pp.form_pairs(rows().lazy()), pl.LazyFrame)
    scored = pp.score(rows().lazy(), progress=False, cache=False)
    assert isinstance(scored, pl.DataFrame)
    lines = README.read_text().splitlines()
    table = next(line for line in lines if "| a polars LazyFrame |" in line)
    assert "`score_parquet` run the judge and return a DataFrame" in table


def test_shown_first_is_there_with_both_orders() -> None:
    one = pp.score(rows(), progress=False, cache=False)
    assert set(one["shown_first"]) <= {"a", "b"}
    both = pp.score(rows(), progress=False, cache=False, both_orders=True)
    assert both["shown_first"].to_list() == ["both", "both"]
    assert {"score_ab", "score_ba", "position_gap"} <= set(both.columns)
