"""The house rule: rooms in pipeline order, and no module imports one from a room above it."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "pairwise_polars"

FLOORS: tuple[tuple[str, ...], ...] = (
    ("_errors", "_schemas", "_version"),  # the ground floor: imports nothing of the package
    ("io",),  # input kinds and parquet sources
    ("pairing",),  # columns, group checks, self-joins
    ("metrics",),  # metric definitions and templates
    ("labels",),  # human labels of pairs, the judge's agreement with them, what to label
    ("engine",),  # HTTP endpoint, limits, retries, caches, the cached map, progress
    ("judges",),  # the protocol, OpenAI chat and batch judges, the heuristic judge
    ("scoring",),  # prepare once, the judge map, plan
    ("summary",),  # aggregate, summarize, gate
    ("runs",),  # chunked parquet runs
    ("counterfactual",),  # prompts -> variants -> the system's responses
    ("manifest",),  # the YAML manifest and running a target
    ("report",),  # the HTML report
    ("testing",),  # the local OpenAI-compatible test server
    ("cli",),  # the command line
    ("__init__", "__main__", "_namespace"),  # the public face
)
"""Each room may import from its own room and the rooms listed before it, never after."""


def _room(parts: tuple[str, ...]) -> str:
    return parts[0] if parts else "__init__"


def _floor(room: str) -> int:
    for index, rooms in enumerate(FLOORS):
        if room in rooms:
            return index
    raise AssertionError(f"room {room!r} is on no floor: add it to FLOORS in pipeline order")


def _modules() -> list[tuple[tuple[str, ...], Path]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        found.append((parts, path))
    return found


def _imports(parts: tuple[str, ...], path: Path) -> list[tuple[tuple[str, ...], int]]:
    """Every package module this module imports (at any depth: in functions too), with lines."""
    here = parts[:-1]  # the package the module is in (for a package's __init__: itself)
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names = alias.name.split(".")
                if names[0] == "pairwise_polars":
                    out.append((tuple(names[1:]), node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)] if node.level > 1 else here
                target = (*base, *(node.module.split(".") if node.module else ()))
            elif node.module and node.module.split(".")[0] == "pairwise_polars":
                target = tuple(node.module.split(".")[1:])
            else:
                continue
            if not target:  # `from pairwise_polars import x`: the public face
                out.append((("__init__",), node.lineno))
            else:
                out.append((target, node.lineno))
    return out


def test_every_room_is_on_a_floor() -> None:
    rooms = {_room(parts) for parts, _ in _modules()}
    for room in rooms:
        _floor(room)


def test_no_module_imports_from_a_room_above_it() -> None:
    upward = []
    for parts, path in _modules():
        room = _room(parts)
        for target, line in _imports(parts, path):
            other = _room(target)
            if _floor(other) > _floor(room):
                where = f"{path.relative_to(PACKAGE.parent)}:{line}"
                upward.append(f"{where} ({room}) imports {'.'.join(target)} ({other})")
    assert not upward, "imports that run upward:\n" + "\n".join(upward)


def test_the_ground_floor_imports_nothing_of_the_package() -> None:
    for parts, path in _modules():
        if _floor(_room(parts)) == 0:
            assert _imports(parts, path) == [], path.name


RAY_MODULES = {("runs", "_ray_run")}
"""The only modules that import Ray: the Ray runner, which score_parquet imports lazily."""


def _third_party(path: Path) -> list[tuple[str, int, bool]]:
    """Top-level names of third-party imports, with their line and whether at module level."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name.split(".")[0], node.lineno, id(node) in top) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append((node.module.split(".")[0], node.lineno, id(node) in top))
    return out


def test_no_core_module_imports_ray() -> None:
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for parts, path in _modules()
        if parts not in RAY_MODULES
        for name, line, _ in _third_party(path)
        if name == "ray"
    ]
    assert not found, "Ray imported outside the Ray runner:\n" + "\n".join(found)


def test_the_ray_runner_is_imported_only_when_asked_for() -> None:
    """Nothing imports the Ray runner at module level: ``import pairwise_polars`` (and every
    room) works without the extra."""
    eager = [
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for parts, path in _modules()
        for target, line in _imports(parts, path)
        if target[-1:] == ("_ray_run",) or target[-2:] == ("runs", "_ray_run")
        if any(
            isinstance(n, ast.ImportFrom) and n.lineno == line
            for n in ast.parse(path.read_text(encoding="utf-8")).body
        )
    ]
    assert not eager, "the Ray runner imported at module level:\n" + "\n".join(eager)
