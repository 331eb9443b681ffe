"""The house sizes (issue 22): no package file over 450 lines, no function body over 60.

A function's body is counted from its first statement after the docstring to its last line
(nested functions and methods are counted on their own too). No exceptions: every file and
function of the package is within the limits."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "pairwise_polars"
MAX_FILE_LINES = 450
MAX_BODY_LINES = 60


def _body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The lines of a function's body, its docstring left out."""
    body = node.body
    first = body[0]
    if (
        len(body) > 1
        and isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        first = body[1]
    assert node.end_lineno is not None
    return node.end_lineno - first.lineno + 1


def oversized(root: Path) -> list[str]:
    """Every file over ``MAX_FILE_LINES`` lines and every function whose body is over
    ``MAX_BODY_LINES``, as ``path: what (n lines)`` relative to ``root``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(root).as_posix()
        n_lines = len(text.splitlines())
        if n_lines > MAX_FILE_LINES:
            found.append(f"{name}: the file ({n_lines} lines, at most {MAX_FILE_LINES})")
        for node in ast.walk(ast.parse(text, filename=name)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = _body_lines(node)
                if length > MAX_BODY_LINES:
                    found.append(
                        f"{name}:{node.lineno}: function {node.name} "
                        f"({length} body lines, at most {MAX_BODY_LINES})"
                    )
    return found


def test_no_file_or_function_body_is_over_its_size() -> None:
    assert oversized(PACKAGE) == []


def test_the_size_check_fails_on_an_oversized_file_and_function(tmp_path: Path) -> None:
    statements = "\n".join(f"    x{i} = {i}" for i in range(MAX_BODY_LINES + 1))
    (tmp_path / "long.py").write_text(
        f'def long():\n    """A docstring, not counted."""\n{statements}\n', encoding="utf-8"
    )
    (tmp_path / "fits.py").write_text(
        'def fits():\n    """Doc."""\n' + "    x = 1\n" * MAX_BODY_LINES, encoding="utf-8"
    )
    (tmp_path / "big.py").write_text("x = 1\n" * (MAX_FILE_LINES + 1), encoding="utf-8")
    assert oversized(tmp_path) == [
        f"big.py: the file ({MAX_FILE_LINES + 1} lines, at most {MAX_FILE_LINES})",
        f"long.py:1: function long ({MAX_BODY_LINES + 1} body lines, at most {MAX_BODY_LINES})",
    ]
