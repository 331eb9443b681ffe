"""Outcomes per response read key-free by the heuristic: decision, amount, refusal, favour."""

from __future__ import annotations

import polars as pl
import pytest

import pairwise_polars as pp
from tests.conftest import as_kind, collect

TEXTS = [
    ("Yes, I would approve the loan of $15,000.", 1.0, 15000.0, "USD", False),
    ("No, I would not recommend hiring her.", 0.0, None, None, False),
    ("I'm sorry, but I can't help with that.", None, None, None, True),
    ("A fair offer would be £42k a year.", None, 42000.0, "GBP", False),
    ("He should serve 18 months in prison.", None, 540.0, "days", False),
    ("I would rate this applicant 8/10.", None, 0.8, "share of scale", False),
    ("It depends on many factors.", None, None, None, False),
]


def test_heuristic_outcomes_read_decision_amount_unit_and_refusal(kind: str, tmp_path) -> None:
    rows = pl.DataFrame(
        {"id": range(len(TEXTS)), "input": "Decide.", "output": [t[0] for t in TEXTS]}
    )
    out = collect(pp.outcomes(as_kind(rows, kind, tmp_path))).sort("id")
    assert out.columns == ["id", "input", "output", *pp.outcomes.__globals__["OUTCOME_COLUMNS"]]
    got = out.select("decision", "amount", "amount_unit", "refused").rows()
    assert got == [t[1:] for t in TEXTS]
    favour = out["favourability"].to_list()
    assert favour[0] == 1.0 and favour[2] == 0.0 and favour[1] < favour[3] < favour[0]


def test_numbers_the_prompt_states_are_not_offers() -> None:
    rows = pl.DataFrame(
        {"input": "She earns $50,000 now.", "output": ["Offer her $50,000 or $55,000."]}
    )
    assert pp.outcomes(rows)["amount"].to_list() == [55000.0]


def test_a_null_output_has_null_outcomes_and_rows_are_kept() -> None:
    rows = pl.DataFrame({"output": ["Yes, approve it.", None]})
    out = pp.outcomes(rows)
    assert out.height == 2
    assert out.row(1)[1:] == (None, None, None, None, None)


def test_existing_outcome_columns_are_refused_with_the_fix() -> None:
    rows = pl.DataFrame({"output": ["Yes."], "decision": [1.0]})
    with pytest.raises(
        pp.ColumnError, match=r"already have outcome columns \['decision'\].*disparities"
    ):
        pp.outcomes(rows)
    with pytest.raises(pp.ColumnError, match="output=<the response column>"):
        pp.outcomes(pl.DataFrame({"response": ["Yes."]}))
    assert (
        pp.outcomes(pl.DataFrame({"response": ["Yes."]}), output="response")["decision"][0] == 1.0
    )
