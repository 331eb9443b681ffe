"""Former public names: each still works, warns once per use, and says what replaced it.

One helper for every renamed name, so they all read and warn alike::

    __getattr__ = former_names(__name__, {"OfflineJudge": ("HeuristicJudge", HeuristicJudge)})
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping


def former_names(module: str, renamed: Mapping[str, tuple[str, object]]) -> Callable[[str], object]:
    """A module ``__getattr__`` serving each former name of ``renamed`` (former -> (new name,
    object)) with a ``DeprecationWarning`` that names the new one."""

    def __getattr__(name: str) -> object:
        if name not in renamed:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        new, value = renamed[name]
        warnings.warn(
            f"{module}.{name} is now {new}; the former name goes in the next release.",
            DeprecationWarning,
            stacklevel=2,
        )
        return value

    return __getattr__
