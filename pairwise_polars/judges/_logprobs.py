"""Probability-weighted scores (G-Eval): the expectation of the rubric over the probabilities
the model gave the rubric's tokens where it wrote the score, a finer and steadier measure than
the one integer it wrote (the argmax of a sample).

The score's token is found in the reply's ``logprobs.content`` by position: the token covering
the first digit of the ``"score"`` value in the answer. Its ``top_logprobs`` that read as
integers on the rubric (``"2"``, ``" 2"``) are the distribution; their probabilities are
renormalised over the rubric. Anything else (no log-probabilities, a score not found, no rubric
token among the alternatives) is None: the caller falls back to the written answer and says so.

>>> content = '{"score": 2, "reason": "x"}'
>>> tokens = [{"token": '{"score": ', "top_logprobs": []},
...           {"token": "2", "top_logprobs": [{"token": "2", "logprob": -0.105},
...                                           {"token": "3", "logprob": -2.303}]}]
>>> round(expected_score({"content": tokens}, content, 4), 3)
2.1
"""

from __future__ import annotations

import math
import re
from typing import Any

_SCORE = re.compile(r'"score"\s*:\s*(\d+)')
TOP_LOGPROBS = 20
"""How many alternatives per token to ask for (OpenAI's maximum)."""


def expected_score(logprobs: Any, content: str | None, max_score: int) -> float | None:
    """The rubric's expectation at the score's position, or None when it cannot be read."""
    tokens = logprobs.get("content") if isinstance(logprobs, dict) else None
    found = _SCORE.search(content or "")
    if not isinstance(tokens, list) or found is None:
        return None
    at, offset = found.start(1), 0
    for token in tokens:
        text = token.get("token") if isinstance(token, dict) else None
        if not isinstance(text, str):
            return None
        if offset <= at < offset + len(text):
            return _expectation(token.get("top_logprobs"), max_score)
        offset += len(text)
    return None


def _expectation(alternatives: Any, max_score: int) -> float | None:
    if not isinstance(alternatives, list):
        return None
    mass = [0.0] * (max_score + 1)
    for alternative in alternatives:
        if not isinstance(alternative, dict):
            continue
        text, logprob = alternative.get("token"), alternative.get("logprob")
        if not isinstance(text, str) or not isinstance(logprob, (int, float)):
            continue
        word = text.strip()
        if word.isdigit() and int(word) <= max_score and math.isfinite(logprob):
            mass[int(word)] += math.exp(logprob)
    total = sum(mass)
    if total <= 0:
        return None
    return sum(score * p for score, p in enumerate(mass)) / total


def logprobs_of(response: Any) -> Any:
    """A chat completion's first choice's ``logprobs`` (None when it has none)."""
    choices = response.get("choices") if isinstance(response, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    return choice.get("logprobs") if isinstance(choice, dict) else None
