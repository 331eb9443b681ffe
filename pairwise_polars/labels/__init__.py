"""Human labels of pairs: read and checked against the scored pairs and the metric's rubric,
the judge's agreement with them, and which pairs to give people to label."""

from pairwise_polars.labels._labels import (
    LABEL,
    PAIR_KEYS,
    RAW_LABEL,
    attach_labels,
    check_labels,
    check_labels_for_pairs,
    join_labels,
    read_labels,
    rubric_maxima,
)
from pairwise_polars.labels._outcome_labels import OUTCOME_LABELS, check_outcome_labels
from pairwise_polars.labels._sample import sample_for_labelling

__all__ = [
    "LABEL",
    "OUTCOME_LABELS",
    "PAIR_KEYS",
    "RAW_LABEL",
    "attach_labels",
    "check_labels",
    "check_labels_for_pairs",
    "check_outcome_labels",
    "join_labels",
    "read_labels",
    "rubric_maxima",
    "sample_for_labelling",
]
