"""Former public names: each still works, warns once per use, and says what replaced it.

One helper for every renamed name, so they all read and warn alike::

    __getattr__ = former_names(__name__, {"OfflineJudge": "HeuristicJudge"})
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Mapping

OFFLINE_NAMES = {"OfflineJudge": "HeuristicJudge", "offline_scores": "heuristic_scores"}
"""The heuristic judge's former names ("offline" named it and the parquet runs alike), for each
module that serves both new names."""


def former_names(module: str, renamed: Mapping[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` serving each former name of ``renamed`` (former -> new name) as
    the module's object of the new name, with a ``DeprecationWarning`` that names it."""

    def __getattr__(name: str) -> object:
        if name not in renamed:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        new = renamed[name]
        warnings.warn(
            f"{module}.{name} is now {new}; the former name goes in the next release.",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(sys.modules[module], new)

    return __getattr__
