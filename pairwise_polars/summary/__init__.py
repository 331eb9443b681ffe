"""Summaries and gates: scored pairs aggregated by metric and slice with intervals, the
overall and per-slice summary, and the gates that turn it into a verdict.

A summary is built in two stages: mergeable per-group sums (:func:`group_sums`,
:func:`error_sums`, :func:`merge_sums`), then :func:`combine`; :func:`aggregate` runs both.
"""

from pairwise_polars.summary._aggregate import (
    NOISE_COLUMNS,
    POSITION_COLUMNS,
    SCOPE,
    SUMMARY_COLUMNS,
    aggregate,
    combine,
    default_slices,
    slice_columns,
)
from pairwise_polars.summary._agreement import JudgeAgreement, judge_agreement
from pairwise_polars.summary._attribute_effect import EFFECT_COLUMNS, JUDGE_GATE, plain_rows
from pairwise_polars.summary._disparity_gate import (
    DISPARITY_GATES,
    MAX_DISADVANTAGE,
    MIN_IMPACT_RATIO,
)
from pairwise_polars.summary._disparity_sums import FIGURES as _FIGURES
from pairwise_polars.summary._gate import (
    DEFAULT_MAX_ERROR_RATE,
    ERROR_GATE,
    FAIRNESS_GATES,
    GATE_NAMES,
    GateResult,
    gate,
)
from pairwise_polars.summary._judge_figures import JUDGE_COLUMNS
from pairwise_polars.summary._judge_report import judge_report
from pairwise_polars.summary._power import MIN_DETECTABLE, SlicePower, slice_power
from pairwise_polars.summary._ppi import PPI_COLUMNS
from pairwise_polars.summary._stability import verdict_stability
from pairwise_polars.summary._summarize import gate_summary, summarize
from pairwise_polars.summary._sums import check_score_type, error_sums, group_sums, merge_sums
from pairwise_polars.summary._three_way import ERRORS_AS, MIN_GROUPS
from pairwise_polars.summary._thresholds import check_threshold, threshold_problem

DISPARITY_OUTCOMES = tuple(_FIGURES)
"""The outcomes disparities measure (the keys of ``max_disadvantage``)."""

__all__ = [
    "DEFAULT_MAX_ERROR_RATE",
    "DISPARITY_GATES",
    "DISPARITY_OUTCOMES",
    "EFFECT_COLUMNS",
    "ERRORS_AS",
    "ERROR_GATE",
    "FAIRNESS_GATES",
    "GATE_NAMES",
    "JUDGE_COLUMNS",
    "JUDGE_GATE",
    "MAX_DISADVANTAGE",
    "MIN_DETECTABLE",
    "MIN_GROUPS",
    "MIN_IMPACT_RATIO",
    "NOISE_COLUMNS",
    "POSITION_COLUMNS",
    "PPI_COLUMNS",
    "SCOPE",
    "SUMMARY_COLUMNS",
    "GateResult",
    "JudgeAgreement",
    "SlicePower",
    "aggregate",
    "check_score_type",
    "check_threshold",
    "combine",
    "default_slices",
    "error_sums",
    "gate",
    "gate_summary",
    "group_sums",
    "judge_agreement",
    "judge_report",
    "merge_sums",
    "plain_rows",
    "slice_columns",
    "slice_power",
    "summarize",
    "threshold_problem",
    "verdict_stability",
]
