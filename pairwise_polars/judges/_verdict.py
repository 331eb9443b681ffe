"""A chat judge's reply turned into a result row, the same for every provider: the rubric's
answer parsed strictly, re-asked once when it is not valid, then an error row (never a score)."""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from pairwise_polars.engine._completion import Completion
from pairwise_polars.engine._failures import failure_row
from pairwise_polars.judges._parse import ReplyError, parse_judgement

REASK = (
    "Your previous reply was not a valid answer ({problem}). Reply again with a JSON object only: "
    '{{"score": <integer 0-{max_score}>, "reason": "<one or two sentences>"}}'
)


class JudgeRequest(NamedTuple):
    """A chat judge's request: its cache key, its chat (JSON as stored) and the rubric's
    maximum (the body's schema and the parse); ``encoded``: the chat's UTF-8 bytes when the
    caller had them (the fast transport's body is then built without encoding it again)."""

    key: str
    messages: str
    max_score: int
    encoded: bytes | None = None


def verdict_row(
    key: str,
    reply: Completion,
    chat: list[dict[str, str]] | str,
    max_score: int,
    attempt: int,
    *,
    model: str,
    reask: bool,
) -> dict[str, Any] | list[dict[str, str]]:
    """The result row of a reply, or the chat to send instead (a re-ask, once). ``chat`` may
    still be JSON-encoded: it is decoded only for a re-ask."""
    content = reply.content
    try:
        score, reason = parse_judgement(content, max_score)
    except ReplyError as problem:
        turns: list[dict[str, str]] = json.loads(chat) if isinstance(chat, str) else chat
        reasked = any(m["role"] == "assistant" for m in turns)
        if reask and not reasked:
            return [
                *turns,
                {"role": "assistant", "content": content or ""},
                {"role": "user", "content": REASK.format(problem=problem, max_score=max_score)},
            ]
        return failure_row(
            key, f"unparseable reply: {problem}", attempt, 0.0, raw_reply=content, judge_model=model
        )
    return {
        "key": key,
        "raw_score": score,
        "reason": reason,
        "error": None,
        "attempts": attempt,
        "input_tokens": reply.input_tokens,
        "output_tokens": reply.output_tokens,
        "cached_tokens": reply.cached_tokens,
        "raw_reply": content,
        "judge_model": model,
        "score_source": "answer",
    }


def score_schema(max_score: int) -> dict[str, Any]:
    """The JSON schema of a judgement on a 0..max_score rubric."""
    return {
        "type": "object",
        "properties": {
            "score": {"type": "integer", "enum": list(range(max_score + 1))},
            "reason": {"type": "string"},
        },
        "required": ["score", "reason"],
        "additionalProperties": False,
    }
