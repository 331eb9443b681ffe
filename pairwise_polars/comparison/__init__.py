"""Release over release: two scored runs of the same prompts compared pair by pair
(:func:`compare`), and the gate on what got worse (:func:`gate_compare`)."""

from pairwise_polars.comparison._compare import CHANGES, COMPARISON_COLUMNS, compare
from pairwise_polars.comparison._gate import REGRESSION_GATE, gate_compare, with_regression
from pairwise_polars.comparison._inputs import scan_run

__all__ = [
    "CHANGES",
    "COMPARISON_COLUMNS",
    "REGRESSION_GATE",
    "compare",
    "gate_compare",
    "scan_run",
    "with_regression",
]
