"""A mistyped keyword of ``score``, ``plan`` or ``score_parquet`` is a TypeError that names the
function called (not ``form_pairs``, which they hand the pairing keywords to) and the nearest
of all its keywords, before anything is read or judged."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

import pairwise_polars as pp

ROWS = pl.DataFrame(
    {
        "group_id": [1, 1],
        "role": ["reference", "variant"],
        "dimension": "age",
        "input": "q",
        "output": ["a", "b"],
    }
)


def _calls(tmp_path: Path) -> dict[str, Callable[..., object]]:
    return {
        "score": lambda **kw: pp.score(ROWS, progress=False, cache=False, **kw),
        "plan": lambda **kw: pp.plan(ROWS, cache=False, **kw),
        "score_parquet": lambda **kw: pp.score_parquet(
            tmp_path / "missing.parquet", tmp_path / "out", progress=False, cache=False, **kw
        ),
    }


def test_a_typo_names_the_function_called_and_its_keyword(tmp_path: Path) -> None:
    for name, call in _calls(tmp_path).items():
        with pytest.raises(TypeError) as raised:
            call(both_order=True)
        message = str(raised.value)
        assert message.startswith(f"{name}() got an unexpected keyword argument 'both_order'")
        assert "did you mean 'both_orders'?" in message
        with pytest.raises(TypeError, match=rf"^{name}\(\) .* 'grup_by'; did you mean 'group_by'"):
            call(grup_by="group_id")
        no_match = rf"^{name}\(\) got an unexpected keyword argument 'xyz'\. Column keywords: "
        with pytest.raises(TypeError, match=no_match):
            call(xyz=1)
    assert not (tmp_path / "out").exists()  # refused before the run began
