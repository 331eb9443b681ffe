"""Judges: anything with one async batch method (see :class:`Judge`).

``OpenAIJudge`` talks to any OpenAI-compatible chat endpoint, ``OpenAIBatchJudge`` to the OpenAI
Batch API, ``AnthropicJudge`` and ``AnthropicBatchJudge`` to Anthropic's Messages API and
Message Batches; ``HeuristicJudge`` (``OfflineJudge``, its former name, warns) is the
embedded, key-free default: a heuristic that compares treatment profiles (see
:mod:`pairwise_polars.judges.heuristic`). A :class:`Panel` is several judges whose scores are
combined. ``build_judge`` makes the judge a configuration names (the manifest and the CLI use
it).
"""

from pairwise_polars._former import former_names as _former_names
from pairwise_polars._schemas import REQUEST_SCHEMA, RESULT_SCHEMA
from pairwise_polars.judges._anthropic import AnthropicJudge
from pairwise_polars.judges._anthropic_batch import AnthropicBatchJudge
from pairwise_polars.judges._batch import OpenAIBatchJudge
from pairwise_polars.judges._factory import build_judge
from pairwise_polars.judges._openai import OpenAIJudge
from pairwise_polars.judges._panel import Panel
from pairwise_polars.judges._protocol import BatchJudge, Judge, JudgeTraits, traits_of
from pairwise_polars.judges.heuristic import HeuristicJudge

__all__ = [
    "REQUEST_SCHEMA",
    "RESULT_SCHEMA",
    "AnthropicBatchJudge",
    "AnthropicJudge",
    "BatchJudge",
    "HeuristicJudge",
    "Judge",
    "JudgeTraits",
    "OpenAIBatchJudge",
    "OpenAIJudge",
    "Panel",
    "build_judge",
    "traits_of",
]

__getattr__ = _former_names(__name__, {"OfflineJudge": "HeuristicJudge"})
