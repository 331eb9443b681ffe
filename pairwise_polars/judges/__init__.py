"""Judges: anything with one async batch method (see :class:`Judge`).

``OpenAIJudge`` talks to any OpenAI-compatible chat endpoint; ``OfflineJudge`` is the embedded,
key-free heuristic default.
"""

from pairwise_polars.judges._openai import OpenAIJudge
from pairwise_polars.judges._protocol import REQUEST_SCHEMA, RESULT_SCHEMA, Judge


def __getattr__(name: str) -> object:
    # The offline judge imports its pattern tables on first use only.
    if name == "OfflineJudge":
        from pairwise_polars.judges._offline import OfflineJudge

        return OfflineJudge
    raise AttributeError(name)


__all__ = ["REQUEST_SCHEMA", "RESULT_SCHEMA", "Judge", "OfflineJudge", "OpenAIJudge"]
