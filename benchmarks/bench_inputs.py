"""What reading inputs and rendering the report cost, side by side.

    python benchmarks/bench_inputs.py [--rows 200000] [--files 1 100 1000] [--repeats 3]
        [--old-commit REV]

1. Input checks: every parquet file's schema is read before a folder is scanned (so a truncated
   or mismatched file is named). Time of that check against ``pl.scan_parquet(files)`` alone
   (what was done before: one footer), for a folder of N files, and its share of pairing.
2. Formats: ``form_pairs(path)`` on the same rows as parquet, CSV and NDJSON (CSV and NDJSON
   infer their types from the whole file), and the file sizes.
3. The report: ``render_report`` of a scored frame, Jinja2 templates (now) against the hand-built
   strings of ``--old-commit`` (the report package at that commit, loaded from git).

Times are the median of ``--repeats`` runs in this process (wall and CPU seconds; the report's
first call, which compiles the templates, apart); the machine is shared, so read the ratios,
not the absolute figures.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _data import dataset_path

import pairwise_polars as pp
from pairwise_polars.io import scan_data
from pairwise_polars.report import render_report

ROOT = Path(__file__).resolve().parents[1]


def timed(work: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``work``."""
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        work()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def row(*cells: object) -> None:
    print("| " + " | ".join(str(c) for c in cells) + " |")


def input_checks(rows: pl.DataFrame, counts: list[int], repeats: int, work: Path) -> None:
    print("\n### Input checks: a folder of N parquet files\n")
    row("files", "rows", "scan_parquet alone, s", "with per-file checks, s", "ratio",
        "pairs (keys) with checks, s", "check share")  # fmt: skip
    row(*["---"] * 7)
    for n in counts:
        folder = work / f"files-{n}"
        folder.mkdir()
        groups = rows["group_id"].unique(maintain_order=True)
        buckets = pl.DataFrame({"group_id": groups, "__b": np.arange(groups.len()) % n})
        for (b,), part in rows.join(buckets, on="group_id").group_by("__b"):
            part.drop("__b").write_parquet(folder / f"part-{b:05d}.parquet")
        files = sorted(str(p) for p in folder.glob("*.parquet"))
        old, _ = timed(lambda files=files: pl.scan_parquet(files).collect_schema(), repeats)
        new, _ = timed(lambda folder=folder: scan_data(folder).collect_schema(), repeats)
        pairs, _ = timed(
            lambda folder=folder: pp.form_pairs(folder, keys_only=True).collect(), repeats
        )
        row(n, f"{rows.height:,}", f"{old:.3f}", f"{new:.3f}", f"{new / old:.1f}x",
            f"{pairs:.2f}", f"{(new - old) / pairs:.0%}")  # fmt: skip


def formats(rows: pl.DataFrame, repeats: int, work: Path) -> None:
    print(f"\n### Formats: form_pairs of {rows.height:,} rows\n")
    row("format", "file MB", "wall s", "CPU s", "wall vs parquet")
    row(*["---"] * 5)
    paths = {"parquet": work / "rows.parquet", "csv": work / "rows.csv",
             "ndjson": work / "rows.ndjson"}  # fmt: skip
    rows.write_parquet(paths["parquet"])
    rows.write_csv(paths["csv"])
    rows.write_ndjson(paths["ndjson"])
    base = None
    expected = pp.form_pairs(rows).height
    for name, path in paths.items():
        wall, cpu = timed(lambda path=path: pp.form_pairs(path).collect(), repeats)
        assert pp.form_pairs(path).collect().height == expected
        base = base or wall
        row(name, f"{path.stat().st_size / 1e6:.0f}", f"{wall:.2f}", f"{cpu:.2f}",
            f"{wall / base:.1f}x")  # fmt: skip


def old_report(commit: str, work: Path) -> Callable[..., str] | None:
    """``render_report`` of the report package at ``commit``, loaded as its own module."""
    package = work / "_old_report"
    package.mkdir()
    try:
        for name in ("_html.py", "_svg.py", "report.css"):
            text = subprocess.run(
                ["git", "show", f"{commit}:pairwise_polars/report/{name}"], cwd=ROOT,
                capture_output=True, text=True, check=True,
            ).stdout  # fmt: skip
            text = text.replace("pairwise_polars.report._svg", "_old_report._svg")
            text = text.replace('files("pairwise_polars.report")', 'files("_old_report")')
            (package / name).write_text(text)
    except subprocess.CalledProcessError:
        return None
    (package / "__init__.py").write_text("")
    sys.path.insert(0, str(work))
    return importlib.import_module("_old_report._html").render_report


def report(rows: pl.DataFrame, repeats: int, commit: str, work: Path) -> None:
    pairs = pp.form_pairs(rows)
    rng = np.random.default_rng(0)
    values, weights = [0.0, 0.25, 0.5, 0.75, 1.0], [0.5, 0.2, 0.15, 0.1, 0.05]
    scores = rng.choice(values, size=pairs.height, p=weights)
    scored = pairs.with_columns(
        metric=pl.lit("pairwise-bias"), score=pl.Series(scores), raw_score=pl.Series(scores * 4),
        reason=pl.lit("synthetic"), error=pl.lit(None, pl.String), judge_model=pl.lit("bench"),
    )  # fmt: skip
    summary = pp.summarize(scored)
    gates = pp.gate(summary, max_mean_divergence=0.3)
    print(f"\n### The report: render_report of {scored.height:,} scored pairs\n")
    row("renderer", "first call, wall s", "then, wall s", "then, CPU s", "page KB")
    row(*["---"] * 5)
    new_html: list[str] = []
    first, _ = timed(lambda: new_html.append(render_report(scored, summary, gates)), 1)
    wall, cpu = timed(lambda: new_html.append(render_report(scored, summary, gates)), repeats)
    row("Jinja2 templates (now)", f"{first:.3f}", f"{wall:.3f}", f"{cpu:.3f}",
        f"{len(new_html[-1]) / 1e3:.0f}")  # fmt: skip
    old = old_report(commit, work)
    if old is None:
        row(f"strings ({commit})", "not found", "", "")
        return
    old_html: list[str] = []
    ofirst, _ = timed(lambda: old_html.append(old(scored, summary, gates)), 1)
    owall, ocpu = timed(lambda: old_html.append(old(scored, summary, gates)), repeats)
    row(f"hand-built strings ({commit})", f"{ofirst:.3f}", f"{owall:.3f}", f"{ocpu:.3f}",
        f"{len(old_html[-1]) / 1e3:.0f}")  # fmt: skip
    print(f"\nratio now / before, after the first call: wall {wall / owall:.2f}x, "
          f"CPU {cpu / ocpu:.2f}x (the first call compiles the templates)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--files", type=int, nargs="+", default=[1, 100, 1000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--old-commit", default="e183d34")
    args = parser.parse_args()
    rows = pl.read_parquet(dataset_path(args.rows))
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        input_checks(rows, args.files, args.repeats, work)
        formats(rows, args.repeats, work)
        report(rows, args.repeats, args.old_commit, work)


if __name__ == "__main__":
    main()
