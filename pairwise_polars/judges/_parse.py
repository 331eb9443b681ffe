"""Strict parsing of a judge's reply: a JSON object with an integer score on the rubric."""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"^```(?:json)?\s*\n(.*)\n```$", re.DOTALL)


class ReplyError(ValueError):
    """The reply is not a valid judgement; the message says what is wrong with it."""


def parse_judgement(content: str | None, max_score: int) -> tuple[int, str]:
    """Return ``(score, reason)`` or raise ReplyError. Never guesses a score.

    A reply fenced as a Markdown JSON block is accepted (the fence is not part of the answer);
    anything else around the object is not, nor a key given twice (which one would count?).

    >>> parse_judgement('{"score": 2, "reason": "tone differs"}', 4)
    (2, 'tone differs')
    """
    if content is None or not content.strip():
        raise ReplyError("empty reply")
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        answer = _loads(text)
    except json.JSONDecodeError as exc:
        raise ReplyError(f"reply is not valid JSON ({exc.msg} at char {exc.pos})") from None
    if not isinstance(answer, dict):
        raise ReplyError("reply is not a JSON object")
    if "score" not in answer:
        raise ReplyError("reply has no 'score'")
    score = answer["score"]
    if isinstance(score, bool) or not isinstance(score, int):
        raise ReplyError(f"score {score!r} is not an integer")
    if not 0 <= score <= max_score:
        raise ReplyError(f"score {score} is off the rubric 0..{max_score}")
    reason = answer.get("reason")
    return score, reason if isinstance(reason, str) else ""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ReplyError(f"reply gives the key {key!r} twice")
        seen[key] = value
    return seen


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)


def _loads(text: str) -> Any:
    """``json.loads(text, object_pairs_hook=_unique_keys)``, the same answers and errors, with
    its decoder (and scanner), which it builds anew for every call, built once."""
    if text.startswith("\ufeff"):  # json.loads's own check
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    return _DECODER.decode(text)
