"""A panel of judges, and a judge asked again: the members a request is judged by.

A panel sends every request to every judge; ``repeats=k`` asks each judge k times. Each
(judge, repeat) is a *member*: a judge of its own, with its own cache identity (the repeat index
is part of it, and a judge that takes a ``seed`` gets a distinct one per repeat), so members
never share a cached answer. The scoring map judges every member and combines their scores.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Literal

import polars as pl

from pairwise_polars._errors import OptionError
from pairwise_polars.judges._protocol import Acting, Judge, JudgeTraits

Combine = Literal["mean", "median", "majority"]
"""How members' scores become the combined score."""
COMBINES = ("mean", "median", "majority")
PANEL_NAME = "panel"
"""The ``judge_model`` of a panel's combined rows."""


@dataclass(frozen=True)
class Panel:
    """Several judges scoring the same requests, combined by ``combine``: ``"mean"``,
    ``"median"``, or ``"majority"`` (the commonest answer; a tie goes to the larger score, so a
    split panel never reads fairer than its members).

    >>> from pairwise_polars.judges import HeuristicJudge
    >>> Panel([HeuristicJudge()], combine="median").combine
    'median'
    """

    judges: Sequence[Judge]
    combine: Combine = "mean"

    def __post_init__(self) -> None:
        judges = tuple(self.judges)
        object.__setattr__(self, "judges", judges)
        if not judges:
            raise OptionError("A panel needs at least one judge: Panel([judge_a, judge_b]).")
        if self.combine not in COMBINES:
            raise OptionError(
                f"combine must be one of {', '.join(map(repr, COMBINES))}, got {self.combine!r}."
            )
        bad = [j for j in judges if not isinstance(j, Judge)]
        if bad:
            raise OptionError(
                f"Every panel member must be a judge (with .name and .judge); got {bad[0]!r}."
            )
        names = [j.name for j in judges]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise OptionError(
                f"The panel has two judges named {twice[0]!r}: judge_model must tell them apart. "
                "Use judges of different models (the same model at two endpoints cannot be told "
                "apart in the scored frame)."
            )
        if PANEL_NAME in names:
            raise OptionError(
                f"A panel member cannot be named {PANEL_NAME!r}: that names the combined rows."
            )

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(j.name for j in self.judges)


JudgeLike = Judge | Panel | Sequence[Judge] | str | None
"""A judge, a panel, a list of judges (a panel combined by mean), ``"heuristic"`` or None (the
default judge)."""


def as_panel(judge: object) -> Panel | None:
    """The panel a ``judge=`` argument names (a :class:`Panel` or a list), else None."""
    if isinstance(judge, Panel):
        return judge
    if isinstance(judge, (list, tuple)):
        return Panel(list(judge))
    return None


def check_repeats(repeats: int) -> int:
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise OptionError(
            f"repeats must be a whole number of at least 1 (how many times each request is "
            f"asked), got {repeats!r}."
        )
    return repeats


def repeated(judge: Judge, repeat: int) -> Judge:
    """The judge asked for the ``repeat``-th time: itself for repeat 0 (so a plain run's cache
    serves it), else a member whose cache identity carries the repeat index and, when the judge
    takes a ``seed``, a distinct seed (its own plus the index)."""
    if repeat == 0:
        return judge
    if dataclasses.is_dataclass(judge) and any(f.name == "seed" for f in dataclasses.fields(judge)):
        seed = getattr(judge, "seed", None)
        judge = dataclasses.replace(judge, seed=(seed or 0) + repeat)
    return _Repeat(judge, repeat)


class _Repeat(Acting):
    """A judge with the repeat index in its cache identity; answers as the judge it wraps."""

    def __init__(self, inner: Judge, repeat: int) -> None:
        super().__init__(inner)
        self._repeat = repeat

    @property
    def traits(self) -> JudgeTraits:
        traits = super().traits
        return dataclasses.replace(traits, identity={**traits.identity, "repeat": self._repeat})

    def judge(self, requests: pl.DataFrame) -> AsyncIterator[pl.DataFrame]:
        return self._inner.judge(requests)

    def __repr__(self) -> str:
        return f"{self._inner!r} (repeat {self._repeat})"
