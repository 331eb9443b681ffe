"""The release-over-release keys of a pairwise block: ``baseline`` (a previous run to compare
with), ``max_regression`` (how much worse a slice may get) and ``familywise`` (the gates judged
as a family over the slices)."""

from __future__ import annotations

from typing import Any

from pairwise_polars.manifest._checks import Checker, at, join
from pairwise_polars.manifest._yaml import Mapping

RELEASE_KEYS = ("baseline", "max_regression", "familywise")
FAMILYWISE = ("none", "holm", "bh")


def check_release(check: Checker, base: str, block: Mapping, path: str) -> dict[str, Any]:
    """The validated values of the release keys present in ``block``."""
    spec: dict[str, Any] = {}
    if "baseline" in block:
        got, where = at(block, "baseline")
        key = join(path, "baseline")
        text = check.string(got, where, key)
        if text is not None:
            spec["baseline"], _ = check.relative_path(
                base,
                text,
                where,
                key,
                lambda full: (
                    f"{full!r} does not exist: name a previous run's output folder (run -o "
                    "OUTPUT writes OUTPUT/<target>/), a score_parquet folder or a scored "
                    "file, relative to the manifest"
                ),
                folder=True,
            )
    if "max_regression" in block:
        got, where = at(block, "max_regression")
        spec["max_regression"] = check.number(
            got, where, join(path, "max_regression"), low=0, high=1
        )
        if "baseline" not in block:
            check.add(
                where,
                join(path, "max_regression"),
                "max_regression needs a baseline: (the previous run to compare with)",
            )
    if "familywise" in block:
        got, where = at(block, "familywise")
        check.choice(got, where, join(path, "familywise"), FAMILYWISE, "none, holm or bh")
        spec["familywise"] = got
    return spec
