"""Typed reads of YAML values that record a problem (file, line, key) instead of raising."""

from __future__ import annotations

import difflib
import math
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pairwise_polars.manifest._model import Problem
from pairwise_polars.manifest._yaml import Mapping, Sequence


def describe(value: Any) -> str:
    """A YAML value as a user would name it: ``a string ('abc')``, ``a list``, ``nothing``."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"a boolean ({'true' if value else 'false'})"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"a string ({shown!r})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"


def suggest(word: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` when a choice is close, else ``""``."""
    close = difflib.get_close_matches(str(word), list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def join(path: str, key: Any) -> str:
    return f"{path}.{key}" if path else str(key)


class Checker:
    """Collects every problem of one file; the read methods return None when a value is bad."""

    def __init__(self, file: str, *, allow_key_env: Iterable[str] = ()) -> None:
        self.file = file
        self.problems: list[Problem] = []
        self.allow_key_env = frozenset(allow_key_env)

    def add(self, line: int, key: str, message: str) -> None:
        self.problems.append(Problem(self.file, line, key, message))

    def mapping(
        self,
        value: Any,
        line: int,
        path: str,
        *,
        allowed: Iterable[str],
        required: dict[str, str] | None = None,
        hints: dict[str, str] | None = None,
    ) -> Mapping | None:
        """Check a mapping's keys: unknown ones (with a suggestion), missing required ones
        (``required``: key -> what it is for), duplicates. ``hints``: unknown key -> the message
        to give instead of the generic one."""
        if not isinstance(value, Mapping):
            self.add(line, path, f"expected a mapping of keys, got {describe(value)}")
            return None
        allowed = list(allowed)
        for key, dup_line, previous in value.duplicates:
            self.add(
                dup_line,
                join(path, key),
                f"duplicate key {key!r} (also on line {previous}); YAML would keep only the "
                "last value: remove one",
            )
        for key in value:
            if key in allowed:
                continue
            where = value.key_lines.get(key, value.line)
            if key in (hints or {}):
                self.add(where, join(path, key), hints[key])  # type: ignore[index]
                continue
            hint = suggest(str(key), allowed) or f"; expected one of: {', '.join(allowed)}"
            self.add(where, join(path, key), f"unknown key {key!r}{hint}")
        for key, purpose in (required or {}).items():
            if key not in value:
                self.add(value.line, join(path, key), f"missing required key {key!r} ({purpose})")
        return value

    def string(self, value: Any, line: int, path: str) -> str | None:
        if isinstance(value, str) and value.strip():
            return value
        self.add(line, path, f"expected a non-empty string, got {describe(value)}")
        return None

    def boolean(self, value: Any, line: int, path: str) -> bool | None:
        if isinstance(value, bool):
            return value
        self.add(line, path, f"expected true or false, got {describe(value)}")
        return None

    def number(
        self,
        value: Any,
        line: int,
        path: str,
        *,
        low: float | None = None,
        high: float | None = None,
        open_low: bool = False,
        open_high: bool = False,
        integer: bool = False,
    ) -> float | None:
        """A number (an integer when ``integer``) within ``[low, high]`` (ends open on request)."""
        ok_type = isinstance(value, int) if integer else isinstance(value, (int, float))
        in_range = ok_type and not isinstance(value, bool) and math.isfinite(value)
        if in_range:
            in_range = not (low is not None and (value <= low if open_low else value < low))
            in_range = in_range and not (
                high is not None and (value >= high if open_high else value > high)
            )
        if in_range:
            return value
        kind = "an integer" if integer else "a number"
        if low is not None and high is not None:
            start = "above" if open_low else "from"
            bounds = f" {start} {low} {'and below' if open_high else 'to'} {high}"
        elif low is not None:
            bounds = f" {'above' if open_low else 'of at least'} {low}"
        else:
            bounds = ""
        # A number of the right kind out of range is named by its value alone ("got 0").
        got = value if ok_type and not isinstance(value, bool) else describe(value)
        self.add(line, path, f"expected {kind}{bounds}, got {got}")
        return None

    def choice(
        self,
        value: Any,
        line: int,
        path: str,
        choices: tuple[str, ...],
        expected: str,
        why: str = "",
    ) -> bool:
        """Whether ``value`` is one of ``choices``; else a problem ``expected <expected>, got
        ...`` with a did-you-mean and ``why`` after it."""
        if value in choices:
            return True
        hint = suggest(str(value), choices) if isinstance(value, str) else ""
        self.add(line, path, f"expected {expected}, got {describe(value)}{hint}{why}")
        return False

    def relative_path(
        self,
        base: str,
        name: str,
        line: int,
        path: str,
        problem: Callable[[str], str],
        *,
        folder: bool = False,
    ) -> tuple[str, bool]:
        """``name`` joined to the manifest's folder ``base``, and whether it is there: a file
        (with ``folder``, a folder too); else ``problem`` of the full path is recorded."""
        full = os.path.join(base, name)
        there = Path(full).exists() if folder else Path(full).is_file()
        if not there:
            self.add(line, path, problem(full))
        return full, there

    def strings(
        self, value: Any, line: int, path: str, *, allow_empty: bool = False
    ) -> list[str] | None:
        """A list of distinct non-empty strings (a single string is accepted as a list of one)."""
        if isinstance(value, str) and value.strip():
            return [value]
        if not isinstance(value, Sequence) or (not value and not allow_empty):
            self.add(line, path, f"expected a list of strings, got {describe(value)}")
            return None
        out: list[str] = []
        for i, (item, item_line) in enumerate(zip(value, value.lines, strict=True)):
            text = self.string(item, item_line, f"{path}[{i}]")
            if text is None:
                continue
            if text in out:
                self.add(item_line, f"{path}[{i}]", f"{text!r} is listed twice")
                continue
            out.append(text)
        return out if len(out) == len(value) else None


def at(mapping: Mapping, key: str) -> tuple[Any, int]:
    """A mapping's value and the line it is on (the mapping's line when the key is absent)."""
    return mapping.get(key), mapping.value_lines.get(key, mapping.line)
