"""What the test server's model says: a judge verdict or a plain text answer, deterministically."""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

DEFAULT_MAX_SCORE = 4

# The truncated answer of the `malformed` fault: it starts like a verdict so a parser that only
# sniffs the first bytes is caught out.
MALFORMED_CONTENT = '{"score": 2, "reason": "trunc'


def message_text(message: dict[str, Any]) -> str:
    """The text of a chat message whose content is a string, a list of parts, or null."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def wants_verdict(body: dict[str, Any], texts: list[str]) -> bool:
    """A judge request asks for JSON: by response_format, or a prompt that names a "score" key."""
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") in (
        "json_schema",
        "json_object",
    ):
        return True
    return any('"score"' in text for text in texts)


def score_scale(body: dict[str, Any]) -> list[int] | tuple[int, int]:
    """The allowed scores: the json_schema's ``score`` enum, or its (minimum, maximum), or 0..4."""
    try:
        score = body["response_format"]["json_schema"]["schema"]["properties"]["score"]
    except (KeyError, TypeError):
        return (0, DEFAULT_MAX_SCORE)
    if not isinstance(score, dict):
        return (0, DEFAULT_MAX_SCORE)
    enum = score.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(v, int) for v in enum):
        return enum
    low, high = score.get("minimum", 0), score.get("maximum", DEFAULT_MAX_SCORE)
    if isinstance(low, (int, float)) and isinstance(high, (int, float)) and low <= high:
        return (int(low), int(high))
    return (0, DEFAULT_MAX_SCORE)


def hashed_score(
    messages: list[dict[str, Any]], texts: list[str], scale: list[int] | tuple[int, int]
) -> int:
    """A score that depends only on the messages (roles and text), stable across processes."""
    digest = hashlib.blake2b(digest_size=8)
    for message, text in zip(messages, texts, strict=True):
        digest.update(str(message.get("role", "")).encode())
        digest.update(b"\x1e")
        digest.update(text.encode())
        digest.update(b"\x1f")
    value = int.from_bytes(digest.digest(), "big")
    if isinstance(scale, list):
        return scale[value % len(scale)]
    low, high = scale
    return low + value % (high - low + 1)


def verdict(score: int, scale: list[int] | tuple[int, int]) -> str:
    return json.dumps(
        {"score": score, "reason": f"Test judge: hash-based score {score} (max {max(scale)})."}
    )


def off_rubric(scale: list[int] | tuple[int, int], nth: int) -> str:
    """Valid JSON off the rubric; alternates so both failure shapes get exercised."""
    if nth % 2 == 0:
        high = max(scale) + 3
        return json.dumps({"score": high, "reason": "Test judge: a score above the rubric."})
    return json.dumps({"verdict": "equivalent", "reason": "Test judge: no score key."})


def plain_answer(messages: list[dict[str, Any]], texts: list[str]) -> str:
    last_user = next(
        (
            text
            for message, text in zip(reversed(messages), reversed(texts), strict=True)
            if message.get("role") == "user"
        ),
        "",
    )
    return f"Here is my answer to: {last_user[:60]}"


def token_estimate(chars: int) -> int:
    """Roughly four characters a token, at least one: enough to exercise token accounting."""
    return max(1, chars // 4)


def with_logprobs(
    scale: list[int] | tuple[int, int], distribution: list[float]
) -> tuple[str, dict[str, Any]]:
    """A verdict written at the distribution's most likely score, and its ``logprobs`` (OpenAI's
    shape): the score's token has every score of the distribution among its ``top_logprobs``,
    so the expectation a client computes is the distribution's own."""
    scores = list(scale) if isinstance(scale, list) else list(range(scale[0], scale[1] + 1))
    pairs = [(s, p) for s, p in zip(scores, distribution, strict=False) if p > 0]
    best = max(pairs, key=lambda pair: pair[1])[0]
    content = verdict(best, scale)
    head = '{"score": '
    rest = content[len(head) + len(str(best)) :]
    top = sorted(pairs, key=lambda pair: -pair[1])[:20]
    alternatives = [{"token": str(s), "logprob": math.log(p), "bytes": None} for s, p in top]
    tokens = [
        {"token": head, "logprob": 0.0, "bytes": None, "top_logprobs": []},
        {"token": str(best), "logprob": math.log(dict(pairs)[best]), "bytes": None,
         "top_logprobs": alternatives},
        {"token": rest, "logprob": 0.0, "bytes": None, "top_logprobs": []},
    ]  # fmt: skip
    return content, {"content": tokens, "refusal": None}
