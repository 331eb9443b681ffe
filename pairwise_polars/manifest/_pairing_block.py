"""The manifest keys that say how rows form pairs: strategy, reference, poles, control, columns."""

from __future__ import annotations

from typing import Any

from pairwise_polars.manifest._checks import Checker, at, join
from pairwise_polars.manifest._yaml import Mapping
from pairwise_polars.pairing._columns import Columns


def check_strategy(check: Checker, block: Mapping, path: str) -> dict[str, Any]:
    """The strategy and its roles, each checked against the strategy it belongs to."""
    spec: dict[str, Any] = {}
    strategy, line = at(block, "strategy")
    if "strategy" in block:
        strategies = ("group", "contrastive")
        expected = "group or contrastive"
        if not check.choice(strategy, line, join(path, "strategy"), strategies, expected):
            strategy = None
        spec["strategy"] = strategy
    else:
        strategy = "group"
    if "reference" in block:
        spec["reference"] = _reference(check, block, path, strategy)
    if "poles" in block:
        spec["poles"] = _poles(check, block, path, strategy)
    if "control" in block:
        spec["control"] = _control(check, block, path, strategy, spec)
    return spec


def _reference(check: Checker, block: Mapping, path: str, strategy: str | None) -> str | None:
    reference, line = _of_strategy(
        check,
        block,
        path,
        "reference",
        strategy == "contrastive",
        "reference applies to strategy group; a contrastive block names its two "
        "roles with poles: [pole_a, pole_b]",
    )
    return check.string(reference, line, join(path, "reference"))


def _poles(
    check: Checker, block: Mapping, path: str, strategy: str | None
) -> tuple[str, ...] | None:
    poles, line = _of_strategy(
        check,
        block,
        path,
        "poles",
        strategy == "group",
        "poles apply to strategy contrastive; a group block names its reference "
        "role with reference: NAME (or set strategy: contrastive)",
    )
    found = check.strings(poles, line, join(path, "poles"))
    if found is not None and len(found) != 2:
        check.add(
            line, join(path, "poles"), f"expected two different role values, got {len(found)}"
        )
    return tuple(found) if found else None


def _of_strategy(
    check: Checker, block: Mapping, path: str, key: str, misplaced: bool, problem: str
) -> tuple[Any, int]:
    """A key that belongs to one strategy: its value and line, and ``problem`` at the key when
    the block's strategy is the other (``misplaced``)."""
    value, line = at(block, key)
    if misplaced:
        check.add(block.key_lines[key], join(path, key), problem)
    return value, line


def _control(
    check: Checker, block: Mapping, path: str, strategy: str | None, spec: dict[str, Any]
) -> str | None:
    control, line = at(block, "control")
    role = check.string(control, line, join(path, "control"))
    taken = (
        [spec.get("reference") or "reference"]
        if strategy != "contrastive"
        else list(spec.get("poles") or ("pole_a", "pole_b"))
    )
    if role is not None and role in taken:
        check.add(
            line,
            join(path, "control"),
            f"{role!r} is also a role that forms pairs; a control row (a second answer to "
            "the reference's input) needs a role of its own, e.g. control: control",
        )
        return None
    return role


def check_columns(check: Checker, raw: Any, line: int, path: str) -> Columns | None:
    """``columns:``: the frame's column names where they differ from the defaults."""
    fields = list(Columns.__dataclass_fields__)
    found = check.mapping(raw, line, path, allowed=fields)
    if found is None:
        return None
    names = {}
    for key in found:
        if key in fields:
            value, where = at(found, key)
            names[key] = check.string(value, where, join(path, key))
    if any(v is None for v in names.values()):
        return None
    return Columns(**names)
