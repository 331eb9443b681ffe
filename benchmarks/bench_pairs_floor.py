"""Benchmark: ``form_pairs`` against its floor, a plain polars self-join (issue 28).

The floor joins the reference rows to the variant rows on ``group_id`` and renames the sides'
columns as ``form_pairs`` does (``id_a`` ... ``output_b``, ``dimension``, the carried columns
twice), computing nothing else: no group checks, no ``pair_id``, ``pair_kind`` or
``skip_reason``. It keeps the same row order promise as the package (in memory: the input's
order; lazy: none), so both produce the same pairs. The benchmark data has one reference and 3-4
variants per group and no control or pole rows, so there is no pole-vs-pole case to time.

Tasks, each in a fresh Python process per repeat, interleaved, median of the repeats:

- ``package eager``: ``pl.read_parquet`` then ``form_pairs(df)``;
- ``floor eager``: ``pl.read_parquet`` then the self-join, collected;
- ``package lazy``: ``form_pairs(path).collect()``, as users call it on a parquet path;
- ``floor lazy``: the self-join over ``pl.scan_parquet(path)``, collected;
- with ``--before DIR`` (a checkout of an older commit), ``before eager`` and ``before lazy``:
  the package tasks run with ``DIR`` first on ``PYTHONPATH``, interleaved with the rest.

CPU is user + system seconds of all the process's threads (robust to a shared machine), for the
pairing alone (eager: after the read; lazy: the scan is part of it); peak RSS is the process's
high-water mark. The parent checks that the package and the floor give the same pair set (count
and a hash of the id pairs) at every size, and the same frame (the floor's columns, row for row)
on a small run before timing.

Usage (from the repository root)::

    python benchmarks/bench_pairs_floor.py                             # 1M and 5M rows, 3 repeats
    python benchmarks/bench_pairs_floor.py --sizes 20000 --repeats 1   # smoke check, seconds
    python benchmarks/bench_pairs_floor.py --sizes 1000000 --before DIR  # before/after, one run
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
if importlib.util.find_spec("pairwise_polars") is None:  # else: installed, or on PYTHONPATH
    sys.path.insert(1, str(ROOT))

from _harness import GIB, report, run_child  # noqa: E402

TASKS = ["package eager", "floor eager", "package lazy", "floor lazy"]
BEFORE_TASKS = ["before eager", "before lazy"]


def floor_pairs(frame, *, ordered: bool):
    """The plain self-join: references on the left, every other row on the right."""
    import polars as pl

    names = [c for c in frame.collect_schema().names() if c not in ("group_id", "dimension")]
    role = pl.col("role")

    def side(keep, suffix: str, extra: list):
        return frame.filter(keep).select(
            "group_id", *extra, *(pl.col(c).alias(f"{c}_{suffix}") for c in names)
        )

    left = side(role == "reference", "a", [])
    right = side((role != "reference") & role.is_not_null(), "b", ["dimension"])
    order = "left_right" if ordered else "none"
    return left.join(right, on="group_id", how="inner", maintain_order=order)


def pair_set(pairs) -> list:
    """The pair count and an order-free hash of the (id_a, id_b) pairs."""
    import polars as pl

    key = pl.col("id_a") * 10_000_019 + pl.col("id_b")
    return list(pairs.select(pl.len(), key.hash(seed=7).sum()).row(0))


def child_main(task: str, path: str) -> None:
    import polars as pl

    from pairwise_polars import form_pairs

    cpu0, t0 = time.process_time(), time.perf_counter()
    engine, mode = task.split()
    if mode == "eager":
        data = pl.read_parquet(path)
        cpu1, t1 = time.process_time(), time.perf_counter()
        pairs = form_pairs(data) if engine != "floor" else floor_pairs(data.lazy(), ordered=True)
    else:
        cpu1, t1 = cpu0, t0
        lazy = (
            form_pairs(path)
            if engine != "floor"
            else floor_pairs(pl.scan_parquet(path), ordered=False)
        )
        pairs = lazy
    if isinstance(pairs, pl.LazyFrame):
        pairs = pairs.collect()
    cpu2, t2 = time.process_time(), time.perf_counter()
    report(
        {
            "read_cpu_s": cpu1 - cpu0,
            "pair_cpu_s": cpu2 - cpu1,
            "pair_s": t2 - t1,
            "n_columns": pairs.width,
            "pair_set": pair_set(pairs),
            "load": os.getloadavg()[0],
        }
    )


def check_same_frame(path: Path) -> None:
    """The floor's columns of ``form_pairs``, row for row, equal the floor (in memory)."""
    import polars as pl
    from polars.testing import assert_frame_equal

    from pairwise_polars import form_pairs

    data = pl.read_parquet(path)
    package = form_pairs(data)
    floor = floor_pairs(data.lazy(), ordered=True).collect()
    assert_frame_equal(package.select(floor.columns), floor)
    extra = sorted(set(package.columns) - set(floor.columns))
    print(f"same frame on {path.name}: {floor.width} floor columns; the package adds {extra}")


def bench_size(
    n_rows: int, repeats: int, mem_limit: int, before: Path | None = None
) -> dict[str, list[dict]]:
    generate = [sys.executable, str(HERE / "_data.py"), str(n_rows), "0"]
    path = Path(subprocess.run(generate, check=True, capture_output=True, text=True).stdout.strip())
    print(f"\n{n_rows:,} rows: {path.name}, {path.stat().st_size / 1e6:,.0f} MB", flush=True)
    if n_rows <= 200_000:
        check_same_frame(path)
    tasks = TASKS + (BEFORE_TASKS if before else [])
    runs: dict[str, list[dict]] = {t: [] for t in tasks}
    for repeat in range(repeats):
        for task in tasks:  # interleaved: drift on a shared machine spreads over every task
            cmd = [sys.executable, __file__, "--child", task, str(path)]
            if task.startswith("before"):  # env execs python: the same process is measured
                cmd = ["env", f"PYTHONPATH={before}", *cmd]
            result = run_child(cmd, mem_limit=mem_limit, min_available=GIB, cwd=ROOT)
            if "guarded" in result:
                raise RuntimeError(f"{task}: {result['guarded']}")
            runs[task].append(result)
            print(
                f"  [{repeat + 1}/{repeats}] {task:<14} CPU {result['pair_cpu_s']:6.2f} s, "
                f"wall {result['pair_s']:6.2f} s, peak RSS {result['peak_rss'] / GIB:.2f} GiB, "
                f"load {result['load']:.1f}",
                flush=True,
            )
    sets = {task: {tuple(r["pair_set"]) for r in rs} for task, rs in runs.items()}
    if len(set().union(*sets.values())) != 1:
        raise AssertionError(f"the package and the floor disagree on the pairs: {sets}")
    return runs


def table(n_rows: int, runs: dict[str, list[dict]]) -> str:
    def med(task: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[task])

    loads = [r["load"] for rs in runs.values() for r in rs]
    n_pairs = runs[TASKS[0]][0]["pair_set"][0]
    lines = [
        f"**{n_rows:,} rows, {n_pairs:,} pairs** (median of {len(runs[TASKS[0]])} fresh "
        f"processes; 1-minute load {min(loads):.1f}-{max(loads):.1f}; same pair set: yes)",
        "",
        "| task | columns | pairing CPU s | pairing wall s | read CPU s | peak RSS GiB "
        "| CPU / floor | wall / floor | RSS / floor |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for task in runs:
        floor = "floor " + task.split()[1]
        cells = [
            task,
            str(runs[task][0]["n_columns"]),
            f"{med(task, 'pair_cpu_s'):.2f}",
            f"{med(task, 'pair_s'):.2f}",
            f"{med(task, 'read_cpu_s'):.2f}",
            f"{med(task, 'peak_rss') / GIB:.2f}",
            *(
                f"{med(task, key) / med(floor, key):.2f}x"
                for key in ("pair_cpu_s", "pair_s", "peak_rss")
            ),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 5_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--mem-limit-gb", type=float, default=12.0, help="kill a child above")
    parser.add_argument("--before", type=Path, help="an older checkout, timed beside this one")
    args = parser.parse_args(argv)
    import polars

    print(
        f"{platform.machine()} {os.cpu_count()} cores; python {platform.python_version()}, "
        f"polars {polars.__version__}"
    )
    tables = []
    for n_rows in args.sizes:
        runs = bench_size(n_rows, args.repeats, int(args.mem_limit_gb * GIB), args.before)
        tables.append(table(n_rows, runs))
    print("\n" + "\n\n".join(tables))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child_main(sys.argv[2], sys.argv[3])
    else:
        main()
