"""The generator's exactness on the tuning split of the labelled sets in benchmarks/validity
(a regression guard; the held-out figures are measured by the script, see RESULTS.md)."""

from __future__ import annotations

import runpy
from pathlib import Path

import polars as pl
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "validity_counterfactuals.py"


@pytest.fixture(scope="module")
def dev() -> pl.DataFrame:
    harness = runpy.run_path(str(SCRIPT))
    cases = [c for c in harness["all_cases"]() if c.split == "dev"]
    return harness["summary"](harness["run"](cases))


@pytest.mark.parametrize(
    ("name", "dimension", "at_least"),
    [
        ("winobias-type1", "gender", 0.99),
        ("winobias-type2", "gender", 0.99),
        ("discrim-eval", "gender", 1.0),
        ("discrim-eval", "race", 1.0),
        ("templated-decisions", "gender", 0.97),
        ("templated-decisions", "race", 0.99),
        ("her-object-or-possessive", "gender", 0.95),
        ("scope", "gender", 0.95),
        ("countries", "nationality", 1.0),
        # the sets added after issue 13 (dev parts; the held-out parts are in RESULTS.md)
        ("winobias-type1-test", "gender", 0.99),
        ("winogender", "gender", 1.0),
        ("discrim-eval-templates", "gender", 0.99),
        ("discrim-eval-templates", "race", 1.0),
        ("templated-objects", "gender", 0.99),
        ("templated-objects", "race", 1.0),
        ("her-object-or-possessive-2", "gender", 0.98),
        # the decision-subject sets and the fourth "her" set (issue 13 follow-up on the subject)
        ("templated-subjects", "gender", 0.96),
        ("templated-subjects", "race", 1.0),
        ("subject-pairs", "gender", 0.8),
        ("her-object-or-possessive-4", "gender", 1.0),
        # everyday prompts (issue 29): names of several origins, clergy and places, relations
        ("everyday", "gender", 0.97),
        ("everyday", "race", 0.97),
        ("everyday", "religion", 0.97),
    ],
)
def test_dev_exact_rate(dev: pl.DataFrame, name: str, dimension: str, at_least: float) -> None:
    row = dev.filter(set=name, dimension=dimension)
    assert row.height == 1
    assert row["rate"][0] >= at_least, row.to_dicts()


def test_no_everyday_subject_is_half_changed(dev: pl.DataFrame) -> None:
    assert dev.filter(set="everyday")["half_changed"].sum() == 0
