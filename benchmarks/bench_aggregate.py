"""Benchmark: aggregate() after issue 10 (clustered Wilson intervals for all three figures,
two mergeable stages, error kinds, position sums) against the former one (the package at a
pinned commit: ``_frozen.PINNED``), side by side on the same seeded scored frame.

``--rows`` scored rows (default 1,000,000: 500,000 pairs in groups of 4, two metrics, each
group in one of 7 dimensions, 2% errors); ``by=["dimension"]`` and ``by=[]``, median of
``--repeats`` timed calls in this process after one warm-up (aggregation is in memory).

    python benchmarks/bench_aggregate.py
    python benchmarks/bench_aggregate.py --rows 200000 --repeats 3   # smoke check
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import polars as pl
from _frozen import frozen  # the former version, from git (this folder is on sys.path)

import pairwise_polars as pp


def scored_frame(rows: int, seed: int = 7) -> pl.DataFrame:
    """``rows`` scored rows: ``rows / 2`` pairs in groups of 4 pairs, each pair scored by two
    metrics, each group in one of 7 dimensions; 2% of rows failed."""
    rng = np.random.default_rng(seed)
    pairs = rows // 2
    groups = np.arange(pairs) // 4
    dimension = rng.choice(["gender", "race", "age", "religion", "a", "b", "c"], groups[-1] + 1)
    raw = rng.binomial(4, rng.beta(0.3, 3.0, size=groups[-1] + 1)[groups].repeat(2))
    failed = rng.random(2 * pairs) < 0.02
    return pl.DataFrame(
        {
            "metric": np.tile(["pairwise-bias", "pairwise-refusal-disparity"], pairs),
            "group_id": groups.repeat(2),
            "dimension": dimension[groups].repeat(2),
            "score": np.where(failed, np.nan, raw / 4.0),
            "failed": failed,
        }
    ).select(
        pl.exclude("failed", "score"),
        score=pl.col("score").fill_nan(None),
        error=pl.when(pl.col("failed")).then(pl.lit("timeout (gave up after 7 attempts)")),
    )


def timed(call, repeats: int) -> float:
    call()  # warm-up
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    frame = scored_frame(args.rows)
    print(
        f"{args.rows:,} scored rows; polars {pl.__version__}; 1-min load {os.getloadavg()[0]:.1f}"
    )
    print("| by | before (s) | after (s) | after / before |")
    print("| --- | --- | --- | --- |")
    former = frozen("aggregate_v1", "summary._aggregate")
    for by in (["dimension"], []):
        before = timed(lambda by=by: former.aggregate(frame, by=by), args.repeats)
        after = timed(lambda by=by: pp.aggregate(frame, by=by), args.repeats)
        label = ", ".join(by) or "(overall)"
        print(f"| {label} | {before:.3f} | {after:.3f} | {after / before:.2f}x |")


if __name__ == "__main__":
    main()
