"""What refusing an NDJSON record (or a JSON array's) that gives a key twice costs a read.

    python benchmarks/bench_ndjson_keys.py [--rows 1000000] [--repeats 3] [--format json]
        [--work DIR]

The bench's rows are written once as NDJSON, or as one JSON array with ``--format json`` (into
``--work``, default the bench's work folder); then, interleaved in one process,
``scan_data(path).collect()`` without the check (the check replaced by a no-op: the read as it
was before) and with it (the once-per-file memo cleared before each read), and the check alone.
Times are the median wall and CPU seconds of ``--repeats`` runs; read the ratios, as the machine
is shared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _data import dataset_path

from pairwise_polars.io import _readers, scan_data
from pairwise_polars.io._json_lines import check_json_array, check_json_lines


def _timed(work: Callable[[], object]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--format", choices=("ndjson", "json"), default="ndjson")
    parser.add_argument("--work", type=Path, default=Path(__file__).resolve().parent / "_work")
    args = parser.parse_args()
    path = args.work / f"runs_{args.rows}.{args.format}"
    if not path.exists():
        args.work.mkdir(parents=True, exist_ok=True)
        rows = pl.read_parquet(dataset_path(args.rows))
        (rows.write_ndjson if args.format == "ndjson" else rows.write_json)(path)
    name = "check_json_lines" if args.format == "ndjson" else "check_json_array"
    check = check_json_lines if args.format == "ndjson" else check_json_array

    def without() -> None:
        setattr(_readers, name, lambda *_: None)
        _readers._checked_text.cache_clear()
        try:
            scan_data(str(path)).collect()
        finally:
            setattr(_readers, name, check)

    def with_check() -> None:
        _readers._checked_text.cache_clear()
        scan_data(str(path)).collect()

    variants: dict[str, Callable[[], object]] = {
        "read without the check (before)": without,
        "read with the check (now)": with_check,
        "the check alone": lambda: check(str(path), args.format.upper()),
    }
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    for _ in range(args.repeats):  # interleaved: each repeat runs every variant once
        for name, work in variants.items():
            times[name].append(_timed(work))
    size = os.path.getsize(path) / 2**20
    load = os.getloadavg()[0]
    kind = "NDJSON" if args.format == "ndjson" else "a JSON array"
    print(f"{args.rows:,} rows, {size:,.0f} MiB of {kind}, 1-minute load {load:.1f} at the end\n")
    print("| variant | wall s | CPU s | wall vs before |")
    print("| --- | ---: | ---: | ---: |")
    base = statistics.median(w for w, _ in times["read without the check (before)"])
    for name, runs in times.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {wall / base:.2f}x |")


if __name__ == "__main__":
    main()
