"""compare on two score_parquet run folders without loading either whole: peak memory of
``pp.compare(before_dir, after_dir)`` against reading one run's parts whole.

Each run is a folder ``scored/part-*.parquet`` as ``score_parquet(keep_text=True)`` writes it:
``rows`` pair judgements with both texts (``text`` characters each), key, slice and score
columns. Each measurement runs in a fresh process (peak resident memory: ``VmHWM`` of
``/proc/self/status``, Linux; ``ru_maxrss`` would carry the parent's peak across exec), beside
a process that only imports the package.

    python benchmarks/bench_compare_memory.py               # 1,000,000 rows per run
    python benchmarks/bench_compare_memory.py --rows 200000 # quicker
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

PARTS = 10
_MEASURE = """
import sys, time
import polars as pl
import pairwise_polars as pp
before, after, what = sys.argv[1], sys.argv[2], sys.argv[3]
start = time.perf_counter()
if what == "compare":
    out = pp.compare(before, after)
    rows = out.height
elif what == "read":
    rows = pl.read_parquet(before + "/scored/*.parquet").height
else:
    rows = 0
took = time.perf_counter() - start
status = open("/proc/self/status").read().split("VmHWM:")[1].split()[0]
print(rows, took, int(status) / 1024)
"""


def write_run(folder: Path, rows: int, text: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    (folder / "scored").mkdir(parents=True)
    per = rows // PARTS
    words = np.array(["offer", "salary", "approve", "decline", "candidate", "role", "the"])
    for part in range(PARTS):
        ids = np.arange(part * per, (part + 1) * per)
        filler = " ".join(rng.choice(words, text // 6))[:text]
        pl.DataFrame(
            {
                "pair_id": ids,
                "group_id": ids // 4,
                "dimension": np.array(["gender", "race", "age", "religion"])[ids % 4],
                "pair_kind": np.where(ids % 4 == 3, "control", "counterfactual"),
                "attribute_a": "reference",
                "attribute_b": "variant",
                "metric": "pairwise-bias",
                "score": np.round(rng.uniform(0, 1, per) * 4) / 4,
                "error": pl.Series([None] * per, dtype=pl.String),
                # texts differ per row (a suffix), so the column is as large as a real one
                "output_a": pl.Series(ids.astype(str)).str.pad_start(12) + filler,
                "output_b": pl.Series((ids + 7).astype(str)).str.pad_start(12) + filler,
            }
        ).write_parquet(folder / "scored" / f"part-{part:06d}.parquet")


def measure(before: Path, after: Path, what: str) -> tuple[int, float, float]:
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(before), str(after), what],
        check=True,
        capture_output=True,
        text=True,
    )
    rows, took, peak = done.stdout.split()
    return int(rows), float(took), float(peak)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--text", type=int, default=400, help="characters per text")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        before, after = Path(tmp) / "before", Path(tmp) / "after"
        started = time.perf_counter()
        write_run(before, args.rows, args.text, seed=1)
        write_run(after, args.rows, args.text, seed=2)
        size = sum(f.stat().st_size for f in before.rglob("*.parquet")) / 2**20
        took = time.perf_counter() - started
        print(f"{args.rows:,} pair judgements per run, two {args.text}-character texts each; "
              f"one run on disk {size:.0f} MiB ({took:.0f} s to write)")  # fmt: skip
        print("| what | result rows | seconds | peak resident memory, MiB |")
        print("| --- | --- | --- | --- |")
        for what in ("import only", "read one run whole", "compare the two runs"):
            key = {"import only": "import", "read one run whole": "read"}.get(what, "compare")
            rows, took, peak = measure(before, after, key)
            print(f"| {what} | {rows:,} | {took:.2f} | {peak:,.0f} |")


if __name__ == "__main__":
    main()
