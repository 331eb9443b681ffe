"""Benchmark: aggregate() after issue 10 (clustered Wilson intervals for all three figures,
two mergeable stages, error kinds, position sums) against the former one (the package at a
pinned commit: ``_frozen.PINNED``), side by side on the same seeded scored frame; and (issue 28)
against the two-stage floor: per-group sums, then per-slice sums of them, written plainly in
polars (counts, rates, mean and each group's mean, no intervals).

``--rows`` scored rows (default 1,000,000: 500,000 pairs in groups of 4, two metrics, each
group in one of 7 dimensions, 2% errors); ``by=["dimension"]`` and ``by=[]``, median of
``--repeats`` timed calls in this process after one warm-up (aggregation is in memory).

    python benchmarks/bench_aggregate.py
    python benchmarks/bench_aggregate.py --rows 200000 --repeats 3   # smoke check

``--before DIR`` (a checkout of an older commit) runs this tree's package and that one's in
fresh processes, alternated, ``--repeats`` processes each: per process the CPU seconds of the
floor and of ``aggregate`` (median of 5 alternated calls after a warm-up) and the transient
memory of its first call (peak resident memory during the call minus before it: the peak is
reset through ``/proc/self/clear_refs``, Linux). The table gives the medians over processes and,
paired, the median and range of each process's own ratio (a process's floor moves by up to 40%
from one process to the next; its own ratio moves less).

    python benchmarks/bench_aggregate.py --rows 1000000 --repeats 3 --before DIR

``--groups N`` puts the pairs in ``N`` groups (more pairs per group as ``--rows`` grows)
instead of groups of 4 pairs: what the transient memory tracks, rows or groups.

    python benchmarks/bench_aggregate.py --rows 3000000 --groups 2500 --repeats 1 --before DIR

``--pair-ids`` adds a ``pair_id`` column, as a scored frame has: ``aggregate`` then also checks
that no judgement comes twice (the floor does not).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
if __name__ == "__main__" and "--child" in sys.argv:  # the package of the tree asked for
    sys.path.insert(0, sys.argv[sys.argv.index("--child") + 1])

import pairwise_polars as pp  # noqa: E402


def scored_frame(
    rows: int, seed: int = 7, group_size: int = 4, pair_ids: bool = False
) -> pl.DataFrame:
    """``rows`` scored rows: ``rows / 2`` pairs in groups of ``group_size`` pairs, each pair
    scored by two metrics, each group in one of 7 dimensions; 2% of rows failed. With
    ``pair_ids``, a ``pair_id`` column (as a scored frame has: ``aggregate`` then checks that
    no judgement comes twice)."""
    rng = np.random.default_rng(seed)
    pairs = rows // 2
    groups = np.arange(pairs) // group_size
    dimension = rng.choice(["gender", "race", "age", "religion", "a", "b", "c"], groups[-1] + 1)
    raw = rng.binomial(4, rng.beta(0.3, 3.0, size=groups[-1] + 1)[groups].repeat(2))
    failed = rng.random(2 * pairs) < 0.02
    frame = pl.DataFrame(
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
    return frame.with_columns(pair_id=pl.int_range(pl.len()) // 2) if pair_ids else frame


def two_stage_floor(frame: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """The floor of issue 28: per-(metric, slice, group) sums, then their sums per slice."""
    score = pl.col("score")
    sums = (
        frame.lazy()
        .group_by(["metric", *by, "group_id"])
        .agg(
            n_pairs=pl.len(),
            n_scored=score.is_not_null().sum(),
            n_errors=pl.col("error").is_not_null().sum(),
            n_equivalent=(score <= 0.0).sum(),
            n_divergent=(score >= 0.5).sum(),
            score_sum=score.sum(),
            score_sq_sum=(score * score).sum(),
        )
    )
    return (
        sums.group_by(["metric", *by])
        .agg(pl.exclude("group_id").sum(), n_groups=(pl.col("n_scored") > 0).sum())
        .with_columns(
            equivalence_rate=pl.col("n_equivalent") / pl.col("n_scored"),
            divergence_rate=pl.col("n_divergent") / pl.col("n_scored"),
            mean_divergence=pl.col("score_sum") / pl.col("n_scored"),
        )
        .sort(["metric", *by])
        .collect()
    )


def cpu_timed(call, repeats: int) -> float:
    """Median CPU seconds (all threads of this process) of ``repeats`` calls after a warm-up."""
    call()
    times = []
    for _ in range(repeats):
        started = time.process_time()
        call()
        times.append(time.process_time() - started)
    return statistics.median(times)


def timed(call, repeats: int) -> float:
    call()  # warm-up
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _status_mib(key: str) -> float:
    text = Path("/proc/self/status").read_text()
    return int(text.split(f"{key}:")[1].split()[0]) / 1024


def group_size(rows: int, groups: int | None) -> int:
    """Pairs per group: 4, or as many as put the pairs in ``groups`` groups."""
    return 4 if groups is None else max(1, rows // 2 // groups)


def child(
    rows: int, by: list[str], groups: int | None = None, pair_ids: bool = False
) -> dict[str, float]:
    """One fresh process's figures (see the module docstring)."""
    frame = scored_frame(rows, group_size=group_size(rows, groups), pair_ids=pair_ids)
    Path("/proc/self/clear_refs").write_text("5")  # the peak resident memory starts again here
    before = _status_mib("VmRSS")
    pp.aggregate(frame, by=by)
    transient = _status_mib("VmHWM") - before
    floor, mine = [], []
    for _ in range(5):  # alternated, after the warm-up above (and one of the floor)
        if not floor:
            two_stage_floor(frame, by)
        for times, call in ((floor, two_stage_floor), (mine, pp.aggregate)):
            started = time.process_time()
            call(frame, by)
            times.append(time.process_time() - started)
    return {
        "floor": statistics.median(floor),
        "aggregate": statistics.median(mine),
        "transient": transient,
        "package": pp.__file__,
    }


def stages(rows: int, repeats: int) -> None:
    """CPU seconds of aggregate's stages by dimension, this tree, in this process."""
    from pairwise_polars.summary._aggregate import _top_errors
    from pairwise_polars.summary._excess import with_excess
    from pairwise_polars.summary._intervals import with_intervals
    from pairwise_polars.summary._power import with_min_detectable_effect
    from pairwise_polars.summary._slice_sums import per_slice
    from pairwise_polars.summary._sums import error_sums, group_sums

    eager, keys = scored_frame(rows), ["metric", "dimension"]
    frame = eager.lazy()
    options = {"equivalence_threshold": 0.0, "divergence_threshold": 0.5}
    sums = group_sums(frame, keys, "group_id", **options).collect()
    slices = per_slice(sums, keys, False, one_row_per_group=True)
    bounded = with_intervals(slices, 0.95)
    calls = {
        "whole aggregate": lambda: pp.aggregate(eager),
        "group sums": lambda: group_sums(frame, keys, "group_id", **options).collect(),
        "per-slice sums": lambda: per_slice(sums, keys, False, one_row_per_group=True),
        "intervals (beta, t)": lambda: with_intervals(slices, 0.95),
        "excess, detectable": lambda: with_excess(with_min_detectable_effect(bounded, 0.95), 0.95),
        "error kinds": lambda: _top_errors(error_sums(frame, keys), keys),
        "floor": lambda: two_stage_floor(eager, ["dimension"]),
    }
    print(f"{rows:,} rows by dimension; 1-min load {os.getloadavg()[0]:.1f}")
    print("| stage | CPU s |")
    print("| --- | ---: |")
    for name, call in calls.items():
        print(f"| {name} | {cpu_timed(call, repeats):.3f} |")


def before_after(
    before: Path, rows: int, repeats: int, groups: int | None = None, pair_ids: bool = False
) -> None:
    """This tree's package against ``before``'s, fresh processes alternated."""
    trees = {"before": before.resolve(), "after": HERE.parent}
    size = group_size(rows, groups)
    print(
        f"{rows:,} scored rows, {size} pairs a group{', pair ids' if pair_ids else ''}; "
        f"polars {pl.__version__}; "
        f"1-min load {os.getloadavg()[0]:.1f}"
    )
    print(
        "| by | tree | floor CPU s | aggregate CPU s | aggregate / floor "
        "| paired: median [range] per process | transient MiB |"
    )
    print("| --- | --- | ---: | ---: | ---: | --- | ---: |")
    for by in ("dimension", ""):
        got: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
        for repeat in range(repeats):
            for name in list(trees)[:: 1 if repeat % 2 == 0 else -1]:
                command = [sys.executable, __file__, "--child", str(trees[name])]
                command += ["--rows", str(rows), "--by", by]
                command += [] if groups is None else ["--groups", str(groups)]
                command += ["--pair-ids"] if pair_ids else []
                done = subprocess.run(command, check=True, capture_output=True, text=True)
                figures = json.loads(done.stdout)
                assert figures["package"].startswith(str(trees[name])), figures["package"]
                got[name].append(figures)
        for name, runs in got.items():
            floor, mine, transient = (
                statistics.median(r[k] for r in runs) for k in ("floor", "aggregate", "transient")
            )
            paired = [r["aggregate"] / r["floor"] for r in runs]  # each process's own ratio
            print(
                f"| {by or '(overall)'} | {name} | {floor:.3f} | {mine:.3f} | {mine / floor:.2f}x "
                f"| {statistics.median(paired):.2f}x [{min(paired):.2f}-{max(paired):.2f}] "
                f"| {transient:.0f} |"
            )
    print(f"1-min load at the end {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--floor-only", action="store_true", help="skip the former version")
    parser.add_argument("--before", type=Path, help="an older checkout, run side by side")
    parser.add_argument("--stages", action="store_true", help="CPU by stage, this tree")
    parser.add_argument("--groups", type=int, help="pairs in this many groups (default: 4 a group)")
    parser.add_argument(
        "--pair-ids", action="store_true", help="a pair_id column: the duplicates check runs"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--by", default="dimension", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        by = [args.by] if args.by else []
        print(json.dumps(child(args.rows, by, args.groups, args.pair_ids)))
        return
    if args.before:
        before_after(args.before, args.rows, args.repeats, args.groups, args.pair_ids)
        return
    if args.stages:
        stages(args.rows, args.repeats)
        return
    frame = scored_frame(args.rows)
    print(
        f"{args.rows:,} scored rows; polars {pl.__version__}; 1-min load {os.getloadavg()[0]:.1f}"
    )
    print("| by | floor CPU s | aggregate CPU s | aggregate / floor | floor s | aggregate s |")
    print("| --- | --- | --- | --- | --- | --- |")
    for by in (["dimension"], []):
        floor_cpu = cpu_timed(lambda by=by: two_stage_floor(frame, by), args.repeats)
        mine_cpu = cpu_timed(lambda by=by: pp.aggregate(frame, by=by), args.repeats)
        floor = timed(lambda by=by: two_stage_floor(frame, by), args.repeats)
        mine = timed(lambda by=by: pp.aggregate(frame, by=by), args.repeats)
        label = ", ".join(by) or "(overall)"
        print(
            f"| {label} | {floor_cpu:.3f} | {mine_cpu:.3f} | {mine_cpu / floor_cpu:.2f}x "
            f"| {floor:.3f} | {mine:.3f} |"
        )
    if args.floor_only:
        return
    print()
    print("| by | before (s) | after (s) | after / before |")
    print("| --- | --- | --- | --- |")
    from _frozen import frozen  # the former version, from git (this folder is on sys.path)

    former = frozen("aggregate_v1", "summary._aggregate")
    for by in (["dimension"], []):
        before = timed(lambda by=by: former.aggregate(frame, by=by), args.repeats)
        after = timed(lambda by=by: pp.aggregate(frame, by=by), args.repeats)
        label = ", ".join(by) or "(overall)"
        print(f"| {label} | {before:.3f} | {after:.3f} | {after / before:.2f}x |")


if __name__ == "__main__":
    main()
