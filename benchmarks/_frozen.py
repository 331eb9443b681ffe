"""Former versions of the package, for side-by-side benchmarks: read from git at a pinned
commit, never copied into the tree.

``package_at(commit)`` extracts the package as it was at ``commit`` (``git archive``) into
``benchmarks/_work/frozen/``, renamed ``pairwise_polars_<commit>`` so that it imports beside the
current package, and returns it. The benchmarks name their commits in ``PINNED`` and
RESULTS.md names them again.
"""

from __future__ import annotations

import importlib
import io
import re
import subprocess
import sys
import tarfile
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
WORK = HERE / "_work" / "frozen"

PINNED = {
    # the word-overlap heuristic judge (v1): the tree just before the treatment profiles
    "heuristic_v1": "1b99e6ae8e1e32b96fe078956d4e661ce050c800",
    # the treatment-profile judge before the XSTest follow-up (v2): its action patterns
    "heuristic_v2": "81ff2e80d8dc4a35c1dcba8d36346d45f14c355e",
    # aggregate() before the clustered intervals of issue 10
    "aggregate_v1": "e3f1d7541a2565bc3a639b1646f773984f2d22de",
}


def package_at(commit: str) -> str:
    """The importable name of the package as it was at ``commit`` (extracted once)."""
    name = f"pairwise_polars_{commit[:10]}"
    target = WORK / name
    if not (target / "__init__.py").exists():
        archive = subprocess.run(
            ["git", "archive", "--format=tar", commit, "pairwise_polars"],
            cwd=HERE.parent,
            check=True,
            capture_output=True,
        ).stdout
        staging = WORK / f".{name}.partial"
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(staging, filter="data")
        word = re.compile(r"\bpairwise_polars\b")
        for path in (staging / "pairwise_polars").rglob("*.py"):
            text = word.sub(name, path.read_text(encoding="utf-8"))
            # the frame namespace stays the current package's: the old one registers under its name
            text = text.replace('_namespace("pairwise")', f'_namespace("{name}")')
            path.write_text(text, encoding="utf-8")
        (staging / "pairwise_polars").rename(target)
        staging.rmdir()
    if str(WORK) not in sys.path:
        sys.path.insert(0, str(WORK))
    return name


def frozen(version: str, module: str) -> ModuleType:
    """``module`` (a dotted path inside the package) of the pinned ``version``."""
    return importlib.import_module(f"{package_at(PINNED[version])}.{module}")
