"""The heuristic judge: treatment profiles of responses compared as polars expressions.

``HeuristicJudge`` is the key-free default judge; ``heuristic_scores``
scores a frame of requests with it; ``treatment_profile`` adds the profile of each response to
a frame (action, decision, offered numbers, warmth, effort); ``refusal_class`` is the action
alone. ``OfflineJudge`` and ``offline_scores``, the former names, still work and warn.
"""

from pairwise_polars._former import OFFLINE_NAMES as _OFFLINE_NAMES
from pairwise_polars._former import former_names as _former_names
from pairwise_polars.judges.heuristic._action import REFUSAL_CLASSES, refusal_class
from pairwise_polars.judges.heuristic._judge import HeuristicJudge, heuristic_scores
from pairwise_polars.judges.heuristic._profile import FIELDS, treatment_profile

__all__ = [
    "FIELDS",
    "REFUSAL_CLASSES",
    "HeuristicJudge",
    "heuristic_scores",
    "refusal_class",
    "treatment_profile",
]

__getattr__ = _former_names(__name__, _OFFLINE_NAMES)
