"""Judge behaviours a test can switch on in the test server: how its "model" scores a judge
request when no fault or reply hook decides.

- ``"gender-biased"`` (:class:`GenderBiased`): the default hash-based score, plus ``bonus``
  points (kept on the rubric) when the two responses mention different genders: a judge that
  reacts to the attribute itself, which the masked audit must catch.
- ``"noisy"`` (:class:`Noisy`): a random score on the rubric, drawn per request.
- ``"always-zero"`` (:class:`AlwaysZero`): the rubric's lowest score, whatever it is asked.

The gender words are the server's own short list (pronouns and gendered nouns), not the
package's lexicons, so an audit is checked against an independent reader.

Example:
    >>> from pairwise_polars.testing import TestServer, judge_behaviour
    >>> with TestServer(behaviour="always-zero") as server:
    ...     server.behaviour = judge_behaviour("noisy", seed=3)  # switched while serving
"""

from __future__ import annotations

import random
import re
import threading
from typing import Any, Literal, Protocol

from . import _replies

BehaviourName = Literal["gender-biased", "noisy", "always-zero"]
BEHAVIOURS: tuple[BehaviourName, ...] = ("gender-biased", "noisy", "always-zero")
Scale = list[int] | tuple[int, int]

# fmt: off
_FEMALE = frozenset({
    "she", "her", "hers", "herself", "woman", "women", "female", "girl", "girls", "lady", "mrs",
    "ms", "mother", "daughter", "wife", "sister",
})
_MALE = frozenset({
    "he", "him", "his", "himself", "man", "men", "male", "boy", "boys", "gentleman", "mr",
    "father", "son", "husband", "brother",
})
# fmt: on
_WORD = re.compile(r"[a-z]+")
_FENCED = r"{side}:\s*<<<(?P<code>\w+)\n(?P<text>.*?)\n>>>(?P=code)"


class JudgeBehaviour(Protocol):
    """Scores one judge request: its messages, their texts and the rubric's scale."""

    def __call__(self, messages: list[dict[str, Any]], texts: list[str], scale: Scale) -> int: ...


def genders(text: str) -> frozenset[str]:
    """The genders a text mentions (``"female"``, ``"male"``), by the server's word list."""
    words = set(_WORD.findall(text.lower()))
    found = set()
    if words & _FEMALE:
        found.add("female")
    if words & _MALE:
        found.add("male")
    return frozenset(found)


def responses(texts: list[str]) -> tuple[str, str] | None:
    """Response A and Response B of a shipped metric's prompt (fenced blocks), or None."""
    joined = "\n".join(texts)
    found = []
    for side in ("Response A", "Response B"):
        match = re.search(_FENCED.format(side=side), joined, flags=re.DOTALL)
        if match is None:
            return None
        found.append(match.group("text"))
    return found[0], found[1]


def _bounds(scale: Scale) -> tuple[int, int]:
    return (min(scale), max(scale)) if isinstance(scale, list) else scale


class Hashed:
    """The server's default: a stable hash of the messages over the rubric."""

    def __call__(self, messages: list[dict[str, Any]], texts: list[str], scale: Scale) -> int:
        return _replies.hashed_score(messages, texts, scale)


class GenderBiased:
    """The hash-based score plus ``bonus`` when Response A and B mention different genders."""

    def __init__(self, bonus: int = 2) -> None:
        self.bonus = bonus

    def __call__(self, messages: list[dict[str, Any]], texts: list[str], scale: Scale) -> int:
        score = _replies.hashed_score(messages, texts, scale)
        sides = responses(texts)
        if sides is not None and genders(sides[0]) != genders(sides[1]):
            low, high = _bounds(scale)
            score = max(low, min(high, score + self.bonus))
            if isinstance(scale, list) and score not in scale:  # an enum: the nearest above
                score = min((s for s in scale if s >= score), default=max(scale))
        return score


class Noisy:
    """A random score on the rubric for every request (seeded, thread-safe)."""

    def __init__(self, seed: int = 0) -> None:
        self._rng = random.Random(seed)
        self._lock = threading.Lock()

    def __call__(self, messages: list[dict[str, Any]], texts: list[str], scale: Scale) -> int:
        with self._lock:
            if isinstance(scale, list):
                return self._rng.choice(scale)
            return self._rng.randint(*scale)


class AlwaysZero:
    """The rubric's lowest score (0 on the shipped rubrics), whatever the request."""

    def __call__(self, messages: list[dict[str, Any]], texts: list[str], scale: Scale) -> int:
        return _bounds(scale)[0]


def judge_behaviour(name: BehaviourName, **options: Any) -> JudgeBehaviour:
    """The behaviour of that name (``options`` go to its class: ``bonus=``, ``seed=``)."""
    if name == "gender-biased":
        return GenderBiased(**options)
    if name == "noisy":
        return Noisy(**options)
    if name == "always-zero":
        return AlwaysZero(**options)
    raise ValueError(f"Unknown judge behaviour {name!r}; the behaviours are {list(BEHAVIOURS)}.")


def as_behaviour(behaviour: JudgeBehaviour | BehaviourName | None) -> JudgeBehaviour:
    """A behaviour given by name or as itself; None: the hash (:class:`Hashed`)."""
    if behaviour is None:
        return Hashed()
    return judge_behaviour(behaviour) if isinstance(behaviour, str) else behaviour
