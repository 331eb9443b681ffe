"""Former public names still work, each warns alike and names what replaced it."""

from __future__ import annotations

import importlib

import pytest

FORMER = [
    ("pairwise_polars", "OfflineJudge", "HeuristicJudge"),
    ("pairwise_polars", "OfflineRun", "ParquetRun"),
    ("pairwise_polars", "offline_scores", "heuristic_scores"),
    ("pairwise_polars.judges", "OfflineJudge", "HeuristicJudge"),
    ("pairwise_polars.judges.heuristic", "OfflineJudge", "HeuristicJudge"),
    ("pairwise_polars.judges.heuristic", "offline_scores", "heuristic_scores"),
    ("pairwise_polars.manifest", "Target", "TargetSpec"),
]


@pytest.mark.parametrize(("module", "former", "new"), FORMER)
def test_a_former_name_warns_and_is_the_new_one(module: str, former: str, new: str) -> None:
    where = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=f"is now {new};") as caught:
        value = getattr(where, former)
    assert value is getattr(where, new)
    assert str(caught[0].message) == (
        f"{module}.{former} is now {new}; the former name goes in the next release."
    )
    assert former not in where.__all__ and new in where.__all__


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    import pairwise_polars

    with pytest.raises(AttributeError, match="has no attribute 'OfflineJudges'"):
        _ = pairwise_polars.OfflineJudges  # type: ignore[attr-defined]
