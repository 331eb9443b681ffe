"""The examples in the package's docstrings run and give what they show: they are the first
code a user copies from ``help(pp.score)``."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from types import ModuleType

import pytest

import pairwise_polars

OPTIONAL = ("ray",)
"""Extras a module may need; its examples run only where the extra is installed."""


def modules() -> list[str]:
    return sorted(
        m.name
        for m in pkgutil.walk_packages(pairwise_polars.__path__, "pairwise_polars.")
        if ".__main__" not in m.name
    )


def load(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:  # pragma: no cover - an optional extra
        if exc.name and exc.name.split(".")[0] in OPTIONAL:
            pytest.skip(f"{name} needs the {exc.name} extra")
        raise


@pytest.mark.parametrize("name", modules())
def test_docstring_examples(name: str) -> None:
    module = load(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(module, name):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
