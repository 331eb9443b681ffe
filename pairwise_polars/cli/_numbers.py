"""The CLI's numbers, checked when parsed: a bad flag is a usage error naming it (exit 2)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any


def whole(minimum: int, maximum: int | None = None) -> Any:
    """An argparse type: an integer of at least ``minimum`` (and at most ``maximum``)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"must be at most {maximum}, got {value}")
        return value

    return parse


def positive(text: str) -> float:
    """An argparse type: a finite number above 0."""
    return _number(text, lambda v: math.isfinite(v) and v > 0, "a number above 0")


def non_negative(text: str) -> float:
    """An argparse type: a finite number of at least 0."""
    return _number(text, lambda v: math.isfinite(v) and v >= 0, "a number of at least 0")


def share(text: str) -> float:
    """An argparse type: a number strictly between 0 and 1 (a confidence)."""
    return _number(text, lambda v: 0 < v < 1, "between 0 and 1")


def _number(text: str, fits: Callable[[float], bool], what: str) -> float:
    """``text`` as a number that ``fits``, or the usage error that says it must be ``what``."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not fits(value):
        raise argparse.ArgumentTypeError(f"must be {what}, got {text}")
    return value
