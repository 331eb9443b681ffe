"""Local vs Ray runner on the same generated run: start-up, time, CPU, memory, processes.

    python benchmarks/bench_ray.py [--copies 4] [--actors 4] [--concurrency 16] [--rate 40]
    python benchmarks/bench_ray.py --rows 1000000 --judge heuristic --rate 0 --repeats 3 \
        --variants local ray ray-before --before <a checkout of the code before>

Each variant scores the same parquet run in a fresh process (the test server, when it judges,
runs in this one, so its CPU is not counted); the variants are interleaved and repeated, and
the median of each figure is printed. Variants: ``local``; ``ray`` (Ray started as the package
starts it when no Ray is running: ``_ray_sizing.local_ray_options`` for this machine);
``ray-before`` (Ray started as the code before the sizing did, ``ray.init(include_dashboard=
False)``, and the run scored by the code at ``--before``, a checkout outside this repository).
Reported per variant: start-up (``ray.init``; 0 for local), the judge stage (first to last
request the server saw; server judge only), total (the ``score_parquet`` call plus start-up),
CPU (user + system of the runner's whole process tree: the driver, and for Ray its raylet, GCS
and workers, reaped children included), peak memory (the tree's summed RSS, and its summed
PSS, which counts a shared page such as the object store's once; sampled every 0.2 s), and the
most processes the tree held at once. Inputs: ``--copies`` of the jobs sample
(the test server judges, 50 ms latency), or ``--rows`` synthetic rows (``_data.dataset_path``,
groups of 4-5). Needs the ``[ray]`` extra. Linux only (reads /proc).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import polars as pl

from pairwise_polars.testing import TestServer

ROOT = Path(__file__).resolve().parents[1]
CHILD = r"""
import json, os, sys, threading, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from bench_ray import tree_cpu, tree_rss, tree_pss, _descendants
variant, source, destination, base_url, actors, concurrency, rate, chunk, stats = sys.argv[2:11]
peak = [0, 0, 0]
done = threading.Event()
def sample():
    while not done.is_set():
        peak[0] = max(peak[0], tree_rss(os.getpid()))
        peak[1] = max(peak[1], len(_descendants(os.getpid())))
        peak[2] = max(peak[2], tree_pss(os.getpid()))
        time.sleep(0.2)
threading.Thread(target=sample, daemon=True).start()
started = time.monotonic()
startup = 0.0
if variant == "ray":
    import ray
    from pairwise_polars.runs import _ray_sizing
    ray.init(**_ray_sizing.local_ray_options(_ray_sizing.machine_cpus(),
                                             _ray_sizing.available_memory()))
    startup = time.monotonic() - started
elif variant == "ray-before":
    import ray
    ray.init(include_dashboard=False, logging_level="WARNING")
    startup = time.monotonic() - started
datasets = []
if variant != "local" and stats == "1":  # keep the run's dataset, for Ray Data's own stats
    import ray.data
    iter_batches = ray.data.Dataset.iter_batches
    def keep(self, *args, **kwargs):
        datasets.append(self)
        return iter_batches(self, *args, **kwargs)
    ray.data.Dataset.iter_batches = keep
import pairwise_polars as pp
if base_url == "heuristic":
    judge = pp.HeuristicJudge()
else:
    judge = pp.OpenAIJudge("judge", base_url=base_url, max_concurrency=int(concurrency),
                           requests_per_minute=float(rate) * 60 if float(rate) else None)
options = {"chunk_size": int(chunk)} if int(chunk) else {}
run = pp.score_parquet(source, destination, judge=judge, cache=False, progress=False,
                       runner="local" if variant == "local" else "ray",
                       actors=int(actors) if variant != "local" and int(actors) else None,
                       **options)
total = time.monotonic() - started
peak[0] = max(peak[0], tree_rss(os.getpid()))
cpu = tree_cpu(os.getpid())
done.set()
for dataset in datasets:
    print(dataset.stats(), file=sys.stderr)
print(json.dumps({"startup": startup, "total": total, "cpu": cpu, "peak_rss": peak[0],
                  "peak_pss": peak[2], "processes": peak[1], "pairs": run.n_pairs,
                  "chunks": run.n_chunks, "errors": run.errors}))
"""


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        todo += children.get(current, [])
    return out


def tree_cpu(pid: int) -> float:
    """User + system seconds of a process and all its living descendants (and their reaped
    children)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for p in _descendants(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
    return total / tick


def tree_rss(pid: int) -> int:
    page = os.sysconf("SC_PAGE_SIZE")
    total = 0
    for p in _descendants(pid):
        try:
            total += int(Path(f"/proc/{p}/statm").read_text().split()[1]) * page
        except OSError:
            continue
    return total


def tree_pss(pid: int) -> int:
    """The tree's summed proportional set size: a shared page (the object store) counted once
    in all, split between the processes that map it."""
    total = 0
    for p in _descendants(pid):
        try:
            for line in Path(f"/proc/{p}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1]) * 1024
                    break
        except OSError:
            continue
    return total


def generate(folder: Path, copies: int) -> Path:
    jobs = pl.read_parquet(ROOT / "data" / "jobs_group.parquet")
    frame = pl.concat(
        [
            jobs.with_columns(pl.col("group_id") + f"-{i}", pl.col("id") + i * 1_000_000)
            for i in range(copies)
        ]
    ).sort("group_id")
    source = folder / "source"
    source.mkdir()
    for i, part in enumerate(frame.iter_slices(n_rows=max(1, frame.height // 4))):
        part.write_parquet(source / f"part-{i}.parquet")
    return source


def measure(
    server: TestServer | None,
    variant: str,
    source: Path,
    folder: Path,
    args: argparse.Namespace,
    rate: float,
    run: int,
) -> dict[str, Any]:
    arrivals: list[float] = []
    lock = threading.Lock()

    def record(body: dict[str, Any]) -> None:
        with lock:
            arrivals.append(time.monotonic())

    if server is not None:
        server.reset()
        server.reply = record
    destination = folder / f"out-{variant}-{rate}-{run}"
    concurrency = args.concurrency * max(args.actors, 1) if variant == "local" else args.concurrency
    command = [
        sys.executable,
        "-c",
        CHILD,
        str(Path(__file__).parent),
        variant,
        str(source),
        str(destination),
        server.base_url if server is not None else "heuristic",
        str(args.actors),
        str(concurrency),
        str(rate),
        str(args.chunk_size),
        "1" if args.stats else "0",
    ]
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    tree = args.before if variant == "ray-before" else str(ROOT)
    env["PYTHONPATH"] = os.pathsep.join([tree, *filter(None, [env.get("PYTHONPATH")])])
    out = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if out.returncode:
        raise SystemExit(f"{variant} failed:\n{out.stderr[-3000:]}")
    if args.stats:
        print(out.stderr, file=sys.stderr)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    arrivals.sort()
    busiest = max(
        (sum(1 for t in arrivals[i:] if t < start + 1.0) for i, start in enumerate(arrivals)),
        default=0,
    )
    result.update(
        variant=variant,
        requests=server.stats.requests if server is not None else 0,
        max_in_flight=server.stats.max_in_flight if server is not None else 0,
        judge_stage=(arrivals[-1] - arrivals[0] + 0.05) if arrivals else 0.0,
        busiest_second=busiest,
        rate=rate,
    )
    shutil.rmtree(destination, ignore_errors=True)
    return result


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each figure's median over the repeats (the counts are the same in every run)."""
    out = dict(runs[0])
    for key in ("startup", "total", "cpu", "peak_rss", "peak_pss", "processes", "judge_stage"):
        out[key] = statistics.median(r[key] for r in runs)
    out["totals"] = [r["total"] for r in runs]
    return out


def table(results: list[dict[str, Any]]) -> str:
    local = next((r for r in results if r["variant"] == "local"), None)
    lines = [
        "| variant | rate limit | pairs | chunks | start-up s | judge stage s | total s (runs) | "
        "vs local | CPU s | peak RSS MiB | peak PSS MiB | processes | requests | max in flight | "
        "busiest 1 s window |",
        "| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: "
        "| ---: | ---: |",
    ]
    for r in results:
        limit = f"{r['rate']:g}/s" if r["rate"] else "none"
        ratio = f"{r['total'] / local['total']:.2f}x" if local else ""
        runs = ", ".join(f"{t:.1f}" for t in r["totals"])
        lines.append(
            f"| {r['variant']} | {limit} | {r['pairs']:,} | {r['chunks']} | {r['startup']:.1f} | "
            f"{r['judge_stage']:.1f} | {r['total']:.1f} ({runs}) | {ratio} | {r['cpu']:.1f} | "
            f"{r['peak_rss'] / 2**20:,.0f} | {r['peak_pss'] / 2**20:,.0f} | {r['processes']:.0f} | "
            f"{r['requests']:,} | "
            f"{r['max_in_flight']} | {r['busiest_second']} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=4, help="copies of the jobs sample")
    parser.add_argument("--rows", type=int, default=0, help="synthetic rows instead of copies")
    parser.add_argument("--judge", choices=["server", "heuristic"], default="server")
    parser.add_argument("--actors", type=int, default=4, help="0: the package's default")
    parser.add_argument("--concurrency", type=int, default=16, help="per actor; local: total")
    parser.add_argument("--chunk-size", type=int, default=500, help="0: the package's default")
    parser.add_argument("--rate", type=float, default=40.0, help="requests/s; 0: no limit run")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--variants", nargs="+", default=["local", "ray"])
    parser.add_argument("--before", default="", help="the code before, for ray-before")
    parser.add_argument("--stats", action="store_true", help="print Ray Data's stats")
    args = parser.parse_args()
    if "ray-before" in args.variants and not args.before:
        parser.error("ray-before needs --before (a checkout of the code before)")
    with contextlib.ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        server = None
        if args.judge == "server":
            server = stack.enter_context(TestServer(latency=0.05))
        if args.rows:
            sys.path.insert(0, str(Path(__file__).parent))
            from _data import dataset_path

            source = dataset_path(args.rows)
        else:
            source = generate(folder, args.copies)
        cells = [(v, 0.0) for v in args.variants]
        if args.rate and server is not None:
            cells.append(("ray", args.rate))
        runs: dict[tuple[str, float], list[dict[str, Any]]] = {cell: [] for cell in cells}
        for repeat in range(args.repeats):  # interleaved: every cell once per round
            for variant, rate in cells:
                result = measure(server, variant, source, folder, args, rate, repeat)
                runs[variant, rate].append(result)
                print(json.dumps(result), file=sys.stderr, flush=True)
    print(f"1-minute load at the end: {os.getloadavg()[0]:.1f}")
    print(table([median_of(r) for r in runs.values()]))


if __name__ == "__main__":
    main()
