"""pairwise_polars: counterfactual fairness testing of LLM systems, dataframe-native."""

from pairwise_polars._aggregate import aggregate
from pairwise_polars._columns import Columns
from pairwise_polars._errors import (
    ColumnError,
    DataSourceError,
    InvalidGroupsError,
    JudgeError,
    LexiconError,
    ManifestError,
    MetricError,
    PairwiseError,
    PairwiseWarning,
    RunStateError,
    TemplateError,
)
from pairwise_polars._gate import GateResult, gate
from pairwise_polars._groups import check_groups
from pairwise_polars._pairs import form_pairs

__version__ = "0.1.0"

__all__ = [
    "ColumnError",
    "Columns",
    "DataSourceError",
    "GateResult",
    "InvalidGroupsError",
    "JudgeError",
    "LexiconError",
    "ManifestError",
    "MetricError",
    "PairwiseError",
    "PairwiseWarning",
    "RunStateError",
    "TemplateError",
    "__version__",
    "aggregate",
    "check_groups",
    "form_pairs",
    "gate",
]
