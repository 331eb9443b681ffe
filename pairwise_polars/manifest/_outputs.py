"""The files a manifest run writes: per target (scored, summary, readable table, report) and per
run (JUnit XML, the CI step summary). Written here, so a run from Python and from the command
line leave the same files."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Literal

import polars as pl

from pairwise_polars.io import PROVENANCE_KEY, check_folder_writable, write_parquet, write_text
from pairwise_polars.manifest._model import TargetSpec
from pairwise_polars.report import markdown_table, readable_summary, write_report
from pairwise_polars.summary import GateResult

Table = Literal["csv", "md"]
"""The readable summary's format: ``summary.csv`` or ``summary.md``."""

_KEYS = {
    "scored.parquet": "scored",
    "summary.parquet": "summary",
    "summary.csv": "table",
    "summary.md": "table",
    "report.html": "report",
    "comparison.parquet": "comparison",
}


def judge_name(target: TargetSpec) -> str:
    """The judge's model, or a panel's members and how they combine; with the repeats."""
    names = [
        "heuristic" if j.kind == "heuristic" else str(j.model)
        for j in (target.panel or (target.judge,))
    ]
    name = f"panel ({', '.join(names)}; {target.combine})" if target.panel else names[0]
    return name + (f" x {target.repeats} repeats" if target.repeats > 1 else "")


def about_target(target: TargetSpec) -> dict[str, str]:
    """What was run, for the report's header and the CI outputs."""
    return {
        "manifest": target.manifest,
        "target": target.name + (f": {target.description}" if target.description else ""),
        "data": ", ".join(target.data),
        "strategy": target.strategy,
        "metrics": ", ".join(m.name for m in target.metrics),
        "judge": judge_name(target),
        "both orders": "yes" if target.both_orders else f"no (order: {target.order})",
        "thresholds": f"equivalent when score <= {target.equivalence_threshold}, divergent when "
        f"score >= {target.divergence_threshold}",
    }


def check_target_folder(folder: str | os.PathLike[str]) -> None:
    """Before anything is paid for: the target's output folder can be written."""
    check_folder_writable(folder, what="the output folder (-o)")


def write_target_files(
    folder: str | os.PathLike[str],
    target: TargetSpec,
    *,
    scored: pl.DataFrame,
    summary: pl.DataFrame,
    gates: GateResult | None,
    comparison: pl.DataFrame | None = None,
    disparities: pl.DataFrame | None = None,
    table: Table = "csv",
    top: int = 5,
) -> dict[str, str]:
    """Write a target's files into ``folder``; their paths by kind (scored, summary, table,
    report, comparison)."""
    paths = {name: Path(folder) / name for name in _names(table, comparison is not None)}
    recorded = {
        "data": list(target.data),
        "strategy": target.strategy,
        "metrics": [m.name for m in target.metrics],
        "judge": judge_name(target),
        "both_orders": target.both_orders,
        "manifest": target.manifest,
        "target": target.name,
        "scored_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    write_parquet(
        scored,
        paths["scored.parquet"],
        what="the scored frame",
        metadata={PROVENANCE_KEY: json.dumps(recorded)},
        rescue=True,
    )
    write_parquet(summary, paths["summary.parquet"], what="the summary")
    if comparison is not None:
        write_parquet(comparison, paths["comparison.parquet"], what="the comparison")
    _write_table(paths[f"summary.{table}"], target.name, summary, gates)
    write_report(
        paths["report.html"],
        scored,
        summary=summary,
        gates=gates,
        title=f"Pairwise fairness report: {target.name}",
        about={**about_target(target), "scored": recorded["scored_at"]},
        group_by=target.columns.group_by,
        top=top,
        confidence=target.confidence,
        comparison=comparison,
        disparities=disparities,
    )
    return {_KEYS[name]: str(path) for name, path in paths.items()}


def _names(table: Table, with_comparison: bool) -> list[str]:
    names = ["scored.parquet", "summary.parquet", f"summary.{table}", "report.html"]
    return names + (["comparison.parquet"] if with_comparison else [])


def _write_table(path: Path, name: str, summary: pl.DataFrame, gates: GateResult | None) -> None:
    if path.suffix == ".csv":
        write_text(path, summary.write_csv(), what="the summary table")
        return
    text = f"# {name}\n\n{markdown_table(readable_summary(summary))}\n\n"
    verdict = gates.verdict() if gates is not None else "no gates"
    write_text(path, text + f"```\n{verdict}\n```\n", what="the summary table")
