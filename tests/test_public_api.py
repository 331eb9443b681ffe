"""The package's public surface is exactly what __all__ says."""

from __future__ import annotations

import pairwise_polars as pp

PUBLIC = {name for name in dir(pp) if not name.startswith("_")} - {
    # sub-packages are reached as modules, not names of the API
    "cli", "comparison", "counterfactual", "engine", "io", "judges", "labels", "manifest",
    "metrics", "outcome", "pairing", "report", "runs", "scoring", "summary", "testing",
}  # fmt: skip


def test_all_is_sorted_and_exact() -> None:
    assert pp.__all__ == sorted(pp.__all__)
    assert set(pp.__all__) - {"__version__"} == PUBLIC
