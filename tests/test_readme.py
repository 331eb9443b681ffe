"""What README.md shows a new user is what the package does: its copy of the shipped example
manifest, and the outputs its examples print."""

from __future__ import annotations

import ast
import contextlib
import importlib
import inspect
import io
import re
import warnings
from pathlib import Path

import polars as pl
import yaml

import pairwise_polars as pp

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def _section(title: str) -> str:
    """The text of the README section under the heading ``title`` (up to the next heading)."""
    text = README.read_text(encoding="utf-8")
    return re.split(r"\n##+ ", text.split(f"\n{title}\n", 1)[1], maxsplit=1)[0]


def _python_blocks(section: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", section, re.DOTALL)


def test_the_shipped_example_shown_is_data_example_yaml() -> None:
    text = README.read_text(encoding="utf-8")
    shown = text.split("The shipped example, `data/example.yaml`:\n\n```yaml\n", 1)[1]
    shown = shown.split("```", 1)[0]
    shipped = (ROOT / "data" / "example.yaml").read_text(encoding="utf-8")
    assert yaml.safe_load(shown) == yaml.safe_load(shipped)


def test_the_noise_floor_example_prints_what_it_says() -> None:
    (block,) = _python_blocks(_section("## The noise floor"))
    comments = [line[2:] for line in block.splitlines() if line.startswith("# ")]
    figures = ast.literal_eval(comments[0].split(":", 1)[0])
    namespace: dict[str, object] = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(f"import polars as pl\nimport pairwise_polars as pp\n{block}", namespace)
    summary = namespace["summary"]
    assert isinstance(summary, pl.DataFrame)
    row = summary.select(
        "mean_divergence",
        "control_mean_divergence",
        "excess_divergence",
        "excess_divergence_low",
        "excess_divergence_high",
    ).row(0)
    assert tuple(round(value, 2) for value in row) == tuple(round(f, 2) for f in figures)
    verdict = out.getvalue()
    shown_verdict = " ".join(c.strip() for c in comments[2:])
    assert verdict.split(":", 1)[0] == shown_verdict.split(":", 1)[0]
    assert "observed 0.5833" in verdict
    assert "[-0.2099, 0.9419]" in verdict and "[-0.2099, 0.9419]" in shown_verdict


def _documented_signature(call: str) -> dict[str, object]:
    """The keywords and defaults of ``call(...)`` as README.md spells it in bold."""
    text = README.read_text(encoding="utf-8")
    match = re.search(rf"`{re.escape(call)}\((.*?)\)`", text, re.DOTALL)
    assert match is not None, call
    tree = ast.parse(f"def f({match.group(1)}): pass")
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    arguments = function.args
    return {
        a.arg: ast.literal_eval(d) if d is not None else inspect.Parameter.empty
        for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
    }


def test_the_judges_signatures_shown_are_theirs() -> None:
    # AnthropicJudge takes organization, project and transport only to refuse them (the README
    # says so), so its signature there leaves them out.
    for judge, left_out in (
        (pp.OpenAIJudge, set()),
        (pp.AnthropicJudge, {"organization", "project", "transport"}),
    ):
        shown = _documented_signature(judge.__name__)
        actual = {
            name: p.default
            for name, p in inspect.signature(judge).parameters.items()
            if p.kind is inspect.Parameter.KEYWORD_ONLY
        }
        assert set(actual) - set(shown) == left_out, judge.__name__
        assert {name: actual[name] for name in shown} == shown, judge.__name__


def test_every_name_the_readme_calls_exists() -> None:
    """``pp.NAME`` and ``pairwise_polars.module.NAME`` in README.md are names a user can reach
    (former names among them: they warn, which is not what this checks)."""
    warnings.simplefilter("ignore", DeprecationWarning)
    text = README.read_text(encoding="utf-8")
    missing = [n for n in sorted(set(re.findall(r"\bpp\.(\w+)", text))) if not hasattr(pp, n)]
    for dotted in sorted(set(re.findall(r"\bpairwise_polars((?:\.\w+)+)", text))):
        parts = dotted.strip(".").split(".")
        found: object = pp
        for part in parts:
            try:
                found = getattr(found, part)
            except AttributeError:
                module = getattr(found, "__name__", "")
                try:
                    found = importlib.import_module(f"{module}.{part}")
                except ImportError:
                    missing.append(f"pairwise_polars{dotted}")
                    break
    assert missing == []
