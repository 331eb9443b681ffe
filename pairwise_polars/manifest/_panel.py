"""A panel of judges and repeats in a pairwise block: ``judge:`` as a list, ``combine:`` and
``repeats:``.

    judge:
      - {model: gpt-4o-mini}
      - {model: claude-haiku, provider: anthropic}
    combine: median      # mean (the default), median or majority
    repeats: 3           # ask every judge three times per request

Each item of the list is read like a single ``judge:`` block; every problem is reported with
its key (``judge[1].model``) and the fix.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pairwise_polars.judges._panel import COMBINES, PANEL_NAME
from pairwise_polars.manifest._checks import Checker, at, join
from pairwise_polars.manifest._model import JudgeSpec
from pairwise_polars.manifest._yaml import Mapping, Sequence

PANEL_KEYS = ("combine", "repeats")
"""Block keys of a panel and of repeats (``judge:`` itself is read here too)."""
ReadJudge = Callable[[Checker, Any, int, str], "JudgeSpec | None"]


def check_judges(check: Checker, block: Mapping, path: str, read: ReadJudge) -> dict[str, Any]:
    """The block's ``judge`` (one, or a panel: ``panel`` holds the members and ``judge`` the
    first), ``combine`` and ``repeats``, as :class:`TargetSpec` fields. ``read`` reads one
    judge mapping (the schema's)."""
    spec: dict[str, Any] = {}
    raw, line = at(block, "judge")
    key = join(path, "judge")
    if isinstance(raw, list):
        members = _members(check, raw, line, key, read)
        if members:
            spec["judge"], spec["panel"] = members[0], tuple(members)
    elif "judge" in block:
        spec["judge"] = read(check, raw, line, key)
    if "combine" in block:
        got, where = at(block, "combine")
        expected = f"one of {', '.join(COMBINES)}"
        if check.choice(got, where, join(path, "combine"), COMBINES, expected) and not (
            isinstance(raw, list)
        ):
            check.add(
                where,
                join(path, "combine"),
                "combine says how a panel's judges are combined, and judge is one judge: make "
                "judge a list (judge: [{model: a}, {model: b}]) or remove combine",
            )
        spec["combine"] = got
    if "repeats" in block:
        got, where = at(block, "repeats")
        spec["repeats"] = check.number(got, where, join(path, "repeats"), low=1, integer=True)
    ray = block.get("runner") == "ray"
    if ray and (isinstance(raw, list) or spec.get("repeats", 1) != 1):
        check.add(
            block.value_lines.get("runner", block.line),
            join(path, "runner"),
            "a panel (judge: [...]) or repeats run with runner: local; the Ray runner judges "
            "one judge once per request: remove runner: ray, or the panel and repeats",
        )
    return spec


def _members(
    check: Checker, raw: list[Any], line: int, path: str, read: ReadJudge
) -> list[JudgeSpec]:
    """Each item of a panel's list read as a judge; names must tell the members apart."""
    if not raw:
        check.add(
            line,
            path,
            "expected at least one judge in the list (a panel: judge: [{model: a}, {model: "
            "b}]), got an empty list",
        )
        return []
    lines = raw.lines if isinstance(raw, Sequence) else [line] * len(raw)
    n_before = len(check.problems)
    members = [read(check, item, lines[i], f"{path}[{i}]") for i, item in enumerate(raw)]
    seen: dict[str, int] = {}
    for i, member in enumerate(members):
        if member is None:
            continue
        name = "heuristic" if member.kind == "heuristic" else str(member.model)
        where = f"{path}[{i}]"
        if name == PANEL_NAME:
            check.add(lines[i], where, f"a judge cannot be named {PANEL_NAME!r}: that names "
                      "the panel's combined rows; use the model's own name")  # fmt: skip
        elif name in seen:
            check.add(
                lines[i],
                where,
                f"{name!r} is already {path}[{seen[name]}]: every judge of a panel needs its "
                "own model (judge_model tells them apart in the scored frame); remove one",
            )
        seen.setdefault(name, i)
    if len(check.problems) > n_before:
        return []
    return [m for m in members if m is not None]
