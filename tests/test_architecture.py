"""The house rules: each room states the rooms it may import, nothing imports around them
(dynamic imports included), no circle of imports inside a room, and every room's public face is
exactly its ``__all__``."""

from __future__ import annotations

import ast
import importlib
import re
import shutil
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "pairwise_polars"

GROUND = frozenset({"_errors", "_former", "_schemas", "_version"})
"""The ground floor: imports nothing of the package."""

BASE = "_errors _schemas"


def _may(rooms: str) -> frozenset[str]:
    return frozenset(rooms.split())


ALLOWED: dict[str, frozenset[str]] = {
    **{room: frozenset() for room in GROUND},
    # an error's fixes said as flags or as a manifest's keys
    "_advice": _may("_errors"),
    # input kinds and parquet sources
    "io": _may("_errors"),
    # columns, group checks, self-joins
    "pairing": _may(f"{BASE} io"),
    # metric definitions and templates
    "metrics": _may(BASE),
    # human labels of pairs: read and checked against the rubric, which pairs to label
    "labels": _may(f"{BASE} io metrics"),
    # HTTP endpoints, limits, retries, caches, the cached map, progress: knows no metric
    "engine": _may(BASE),
    # the protocol, the OpenAI chat and batch judges, the heuristic judge
    "judges": _may(f"{BASE} _former io metrics engine"),
    # prepare once, the judge map, plan (whose power analysis is the summary's estimator's);
    # the masked audit finds attribute terms with the counterfactual lexicons
    "scoring": _may(f"{BASE} io pairing metrics labels engine judges summary counterfactual"),
    # aggregate, summarize, gate: from scored frames, never from a judge
    "summary": _may(f"{BASE} io pairing metrics labels"),
    # outcomes per response (read by a judge) and the disparities they give
    "outcome": _may(f"{BASE} io pairing metrics labels engine judges scoring summary"),
    # chunked parquet runs, local or on Ray
    "runs": _may(f"{BASE} io pairing metrics labels engine judges scoring summary outcome"),
    # release over release: two scored runs compared pair by pair, the regression gate
    "comparison": _may(f"{BASE} io pairing summary"),
    # prompts -> variants -> the system's responses
    "counterfactual": _may(f"{BASE} io pairing engine"),
    # the HTML report, JUnit XML and step summaries: from summaries, never from a manifest
    "report": _may(f"{BASE} io pairing metrics labels summary"),
    # the YAML manifest and running a target (which writes the report)
    "manifest": _may(
        f"{BASE} _advice _former io pairing metrics labels engine judges scoring summary "
        "outcome runs comparison counterfactual report"
    ),
    # the local OpenAI-compatible test server: stands alone
    "testing": _may("_errors"),
    # the command line: may use every room
    "cli": _may(
        f"{BASE} _advice _version io pairing metrics labels engine judges scoring summary "
        "outcome runs comparison counterfactual report manifest testing"
    ),
    # the public face
    "__init__": _may(
        f"{BASE} _former _version io pairing metrics labels engine judges scoring summary "
        "outcome runs comparison counterfactual report manifest _namespace"
    ),
    "__main__": _may("cli"),
    "_namespace": _may("_errors io pairing scoring summary"),
}
"""Each room and the other rooms it may import (its own room always)."""


def _room(parts: tuple[str, ...]) -> str:
    return parts[0] if parts else "__init__"


def _modules(package: Path = PACKAGE) -> list[tuple[tuple[str, ...], Path]]:
    found = []
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package).with_suffix("").parts
        found.append((parts, path))
    return found


def _name(parts: tuple[str, ...]) -> str:
    return ".".join(("pairwise_polars", *parts))


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The nodes under ``if TYPE_CHECKING:``: never run, so they close no circle."""
    hidden: set[int] = set()
    for node in ast.walk(tree):
        test = getattr(node, "test", None)
        if isinstance(node, ast.If) and ast.unparse(test or node).endswith("TYPE_CHECKING"):
            hidden |= {id(inner) for stmt in node.body for inner in ast.walk(stmt)}
    return hidden


def _dynamic_target(node: ast.Call) -> str | None:
    """The module name of ``importlib.import_module("...")`` or ``__import__("...")``; ``""``
    for one whose name is not a literal (which no rule can check)."""
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if called not in {"import_module", "__import__"}:
        return None
    first = node.args[0] if node.args else None
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    return ""


def _imports(
    parts: tuple[str, ...], path: Path, *, runtime: bool = False
) -> list[tuple[tuple[str, ...], int]]:
    """Every package module this module imports (at any depth: in functions too, and through
    importlib), with lines; ``runtime`` leaves out imports made only for type checking."""
    here = parts[:-1]  # the package the module is in (for a package's __init__: itself)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    hidden = _type_checking_only(tree) if runtime else set()
    out = []
    for node in ast.walk(tree):
        if id(node) in hidden:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                names = alias.name.split(".")
                if names[0] == "pairwise_polars":
                    out.append((tuple(names[1:]) or ("__init__",), node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)] if node.level > 1 else here
                target = (*base, *(node.module.split(".") if node.module else ()))
            elif node.module and node.module.split(".")[0] == "pairwise_polars":
                target = tuple(node.module.split(".")[1:])
            else:
                continue
            if not target:
                out.append((("__init__",), node.lineno))
            # `from pairwise_polars.x import _y` may import the module _y: both are recorded
            out += [((*target, alias.name), node.lineno) for alias in node.names if target]
        elif isinstance(node, ast.Call) and (name := _dynamic_target(node)):
            names = name.split(".")
            if names[0] == "pairwise_polars":
                out.append((tuple(names[1:]) or ("__init__",), node.lineno))
    return out


def test_architecture_md_states_the_same_rooms() -> None:
    """ARCHITECTURE.md's table of rooms is this one, room for room."""
    text = (PACKAGE.parent / "ARCHITECTURE.md").read_text(encoding="utf-8")
    stated = {}
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`"):
            rooms = re.findall(r"`([\w.]+)`", cells[2])
            stated[cells[0].strip("`")] = frozenset(rooms)
    assert stated == ALLOWED


def test_every_room_states_what_it_may_import() -> None:
    rooms = {_room(parts) for parts, _ in _modules()}
    missing = sorted(rooms - set(ALLOWED))
    assert not missing, f"rooms with no entry in ALLOWED (say what each may import): {missing}"


def wrong_imports(package: Path = PACKAGE) -> list[str]:
    """Every import of a room outside the importing room's ALLOWED, with file and line."""
    wrong = []
    for parts, path in _modules(package):
        room = _room(parts)
        for target, line in _imports(parts, path):
            other = _room(target)
            if other != room and other not in ALLOWED.get(room, ()):
                where = f"{path.relative_to(package.parent)}:{line}"
                wrong.append(f"{where} ({room}) imports {'.'.join(target)} ({other})")
    return wrong


def test_no_module_imports_a_room_it_may_not() -> None:
    wrong = wrong_imports()
    assert not wrong, "imports outside a room's allowed rooms:\n" + "\n".join(wrong)


def test_the_rooms_form_no_circle() -> None:
    """The allowed rooms themselves are layered: no room may import one that may import it."""
    order: list[str] = []
    remaining = {room: set(allowed) for room, allowed in ALLOWED.items()}
    while remaining:
        ready = sorted(room for room, needs in remaining.items() if not needs - set(order))
        assert ready, f"the allowed imports of these rooms form a circle: {sorted(remaining)}"
        order += ready
        for room in ready:
            del remaining[room]


def test_no_import_is_hidden_from_these_rules() -> None:
    """``importlib.import_module(name)`` with a computed name cannot be checked: not allowed."""
    hidden = []
    for _, path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and _dynamic_target(node) == "":
                hidden.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert not hidden, "imports by a computed name:\n" + "\n".join(hidden)


def circles_inside_rooms(package: Path = PACKAGE) -> list[str]:
    """Every circle of run-time imports among the modules of one room."""
    modules = dict(_modules(package))
    graph: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
    for parts, path in modules.items():
        targets = set()
        for target, _ in _imports(parts, path, runtime=True):
            if _room(target) != _room(parts):
                continue
            # `from pairwise_polars.x import _y` names a module; `import ... name` may not
            module = target if target in modules else target[:-1]
            if module in modules and module != parts:
                targets.add(module)
        graph[parts] = targets
    circles = []
    for start in graph:
        stack = [(start, (start,))]
        while stack:
            node, trail = stack.pop()
            for nxt in graph[node]:
                if nxt == start:
                    circles.append(" -> ".join(_name(p) for p in (*trail, start)))
                elif nxt not in trail and len(trail) < 12:
                    stack.append((nxt, (*trail, nxt)))
    return sorted(set(circles))


def test_no_circle_of_imports_inside_a_room() -> None:
    circles = circles_inside_rooms()
    assert not circles, "import circles inside a room:\n" + "\n".join(circles)


INJECTIONS = {
    "a dynamic upward import": (
        "io/_injected.py",
        'import importlib\n\nimportlib.import_module("pairwise_polars.cli")\n',
    ),
    "report importing manifest": (
        "report/_injected.py",
        "from pairwise_polars.manifest import load_manifest\n",
    ),
    "a circle inside a room": (
        "pairing/_circle_a.py",
        "from pairwise_polars.pairing import _circle_b\n",
    ),
}


@pytest.mark.parametrize("injection", sorted(INJECTIONS))
def test_the_rules_fail_on_an_injected_breach(injection: str, tmp_path: Path) -> None:
    """Each breach, written into a package of the rooms it touches, is found; the same rooms
    without it are clean."""
    package = tmp_path / "pairwise_polars"
    where, source = INJECTIONS[injection]
    room, name = where.split("/")[0], where.split("/")[1].removesuffix(".py")
    shutil.copytree(PACKAGE / room, package / room, ignore=shutil.ignore_patterns("__pycache__"))
    assert wrong_imports(package) == [] and circles_inside_rooms(package) == []
    (package / where).write_text(source, encoding="utf-8")
    if injection == "a circle inside a room":
        (package / room / "_circle_b.py").write_text(
            "from pairwise_polars.pairing._circle_a import *  # noqa: F403\n", encoding="utf-8"
        )
        assert circles_inside_rooms(package) == [
            "pairwise_polars.pairing._circle_a -> pairwise_polars.pairing._circle_b -> "
            "pairwise_polars.pairing._circle_a",
            "pairwise_polars.pairing._circle_b -> pairwise_polars.pairing._circle_a -> "
            "pairwise_polars.pairing._circle_b",
        ]
    else:
        found = wrong_imports(package)
        assert len(found) == 1 and found[0].startswith(f"pairwise_polars/{room}/{name}.py:")


def test_the_ground_floor_imports_nothing_of_the_package() -> None:
    for parts, path in _modules():
        if _room(parts) in GROUND:
            assert _imports(parts, path) == [], path.name


SUBPACKAGES = sorted(
    path.parent.name for path in PACKAGE.glob("*/__init__.py") if path.parent.name != "__pycache__"
)


@pytest.mark.parametrize("room", SUBPACKAGES)
def test_each_room_exports_exactly_its_all(room: str) -> None:
    module = importlib.import_module(f"pairwise_polars.{room}")
    submodules = {
        path.stem if path.name != "__init__.py" else path.parent.name
        for path in (PACKAGE / room).iterdir()
        if path.suffix == ".py" or (path / "__init__.py").exists()
    }
    public = {name for name in vars(module) if not name.startswith("_")} - submodules
    declared = getattr(module, "__all__", None)
    assert declared is not None, f"pairwise_polars.{room} has no __all__"
    assert len(declared) == len(set(declared)), f"pairwise_polars.{room}.__all__ repeats a name"
    assert set(declared) == public, (
        f"pairwise_polars.{room}: not in __all__ {sorted(public - set(declared))}, "
        f"in __all__ but not defined {sorted(set(declared) - public)}"
    )


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
