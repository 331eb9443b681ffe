"""What a judge is: anything with one async batch method over a frame of requests, and the
traits that tell the scoring map how to treat it.

The scoring map sends a *requests frame* (one row per unique judge request) and reads back
*result frames* as they arrive; results are joined to pairs by ``key``, never by position.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, runtime_checkable

import polars as pl

from pairwise_polars._schemas import REQUEST_SCHEMA, RESULT_SCHEMA, result_frame

__all__ = [
    "REQUEST_SCHEMA",
    "RESULT_SCHEMA",
    "BatchJudge",
    "Judge",
    "JudgeTraits",
    "result_frame",
    "traits_of",
]


@runtime_checkable
class Judge(Protocol):
    """A judge scores a frame of requests and yields result frames as answers arrive.

    That is all a judge must have. A judge may also describe itself with a ``traits`` property
    (a :class:`JudgeTraits`): how answers come, what identifies its answers in the cache,
    whether it reads the rendered messages. Without it the defaults hold: a chat judge that
    reads messages, is cached, and is identified by its ``name``.
    """

    @property
    def name(self) -> str:
        """The label written to ``judge_model``."""
        ...

    def judge(self, requests: pl.DataFrame) -> AsyncIterator[pl.DataFrame]:
        """Yield frames with RESULT_SCHEMA columns covering every request key exactly once."""
        ...


@runtime_checkable
class BatchJudge(Judge, Protocol):
    """A judge whose answers come later (``traits.kind == "batch"``): ``submitting()`` is a judge
    with the same identity that only submits its requests, so ``score_parquet`` can submit
    every chunk before it collects any."""

    def submitting(self) -> Judge: ...


@dataclass(frozen=True, kw_only=True)
class JudgeTraits:
    """How the scoring map treats a judge.

    >>> JudgeTraits(identity={"model": "gpt-4o-mini", "temperature": 0.0}, max_concurrency=32)
    JudgeTraits(kind='chat', identity={'model': 'gpt-4o-mini', 'temperature': 0.0}, uses_messages=True, cacheable=True, max_concurrency=32)
    """  # noqa: E501

    kind: Literal["chat", "batch", "local"] = "chat"
    """``chat``: answers arrive over live calls; ``batch``: submitted now, collected later (see
    :class:`BatchJudge`); ``local``: computed in this process (no network, no key)."""
    identity: Mapping[str, Any] = field(default_factory=dict)
    """The endpoint, model and parameters that change answers: part of every cache key. Never
    a key or a header. Empty: the judge's ``name``."""
    uses_messages: bool = True
    """Render the metric templates into ``messages``; False for judges that read the texts."""
    cacheable: bool = True
    """Store successful results in the cache (False when recomputing is cheaper)."""
    max_concurrency: int | None = None
    """Requests in flight at once, when the judge bounds them."""


def traits_of(judge: Judge) -> JudgeTraits:
    """A judge's traits: its ``traits`` property, else the defaults. Judges written before
    traits existed declare ``uses_messages``, ``cacheable`` and ``identity`` as attributes:
    those are still read."""
    traits = getattr(judge, "traits", None)
    if not isinstance(traits, JudgeTraits):
        traits = JudgeTraits(
            identity=getattr(judge, "identity", None) or {},
            uses_messages=getattr(judge, "uses_messages", True),
            cacheable=getattr(judge, "cacheable", True),
        )
    if not traits.identity:
        traits = replace(traits, identity={"name": judge.name})
    return traits


class Acting:
    """A judge that acts for another: the other's name and traits (a subclass may change
    them), so the same cache keys; what it does with requests is the subclass's."""

    def __init__(self, inner: Judge) -> None:
        self._inner = inner

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def traits(self) -> JudgeTraits:
        return traits_of(self._inner)
