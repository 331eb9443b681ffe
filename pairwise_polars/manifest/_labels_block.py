"""The pairwise block's files of human labels, checked with file and line.

``labels:`` is people's scores of pairs (they correct the summary and its gates);
``outcome_labels:`` is people's reading of each response's outcome (they correct the
disparities and the ``max_disadvantage`` gate). Each is a file (CSV, parquet, ...) relative
to the manifest. Its header is read here, so a missing column, or a sheet of one kind under
the other kind's key, is a problem on the key's line; the rows are checked against the pairs
when the target runs, before the first judge call.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from pairwise_polars._errors import PairwiseError
from pairwise_polars.io._frames import to_lazy
from pairwise_polars.manifest._checks import Checker, at, describe, join
from pairwise_polars.manifest._yaml import Mapping

LABEL_KEYS = ("labels", "outcome_labels")
"""The block's keys naming a file of labels."""
_COLUMNS = {"labels": ("metric", "label"), "outcome_labels": ("metric", "label_a", "label_b")}
_WHAT = {
    "labels": "people's scores of pairs: pair_id (or group_id, id_a, id_b), metric and label "
    "on the metric's rubric",
    "outcome_labels": "people's reading of each side's outcome: pair_id (or group_id, id_a, "
    "id_b), metric (decision, amount or refused), label_a and label_b",
}


def check_label_files(check: Checker, base: str, block: Mapping, path: str) -> dict[str, Any]:
    """The block's label files (full paths) by key, each checked: it exists and its header has
    the columns of its kind."""
    spec: dict[str, Any] = {}
    for key in LABEL_KEYS:
        if key in block:
            raw, line = at(block, key)
            spec[key] = _label_file(check, base, raw, line, join(path, key), key)
    return spec


def _label_file(check: Checker, base: str, raw: Any, line: int, path: str, key: str) -> str | None:
    if not isinstance(raw, str) or not raw:
        check.add(line, path, f"expected the path of a file of labels, got {describe(raw)}")
        return None
    full, there = check.relative_path(
        base,
        raw,
        line,
        path,
        lambda full: (
            f"labels file {full!r} does not exist (paths are relative to the manifest's "
            "folder; sample_for_labelling writes one to fill in)"
        ),
    )
    if not there:
        return full
    try:
        have = list(to_lazy(full)[0].collect_schema().names())
    except (PairwiseError, pl.exceptions.PolarsError, OSError) as exc:
        check.add(line, path, f"cannot read the labels file {full!r}: {exc}")
        return full
    problem = _columns_problem(key, have)
    if problem:
        check.add(line, path, f"the labels file {full!r} {problem}")
    return full


def _columns_problem(key: str, have: list[str]) -> str:
    """What is wrong with a label file's columns for ``key`` ("" when nothing)."""
    keyed = "pair_id" in have or all(k in have for k in ("group_id", "id_a", "id_b"))
    missing = [c for c in _COLUMNS[key] if c not in have]
    if keyed and not missing:
        return ""
    other = next(k for k in LABEL_KEYS if k != key)
    if keyed and all(c in have for c in _COLUMNS[other]):
        return f"holds {_WHAT[other].split(':')[0]}: name it under {other}: instead"
    need = missing + ([] if keyed else ["pair_id (or group_id, id_a, id_b)"])
    return f"lacks the columns {', '.join(need)} (it has {have}); {key}: is {_WHAT[key]}"
