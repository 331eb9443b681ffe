"""Local vs Ray runner on the same generated run, against the test server (50 ms latency).

    python benchmarks/bench_ray.py [--copies 4] [--actors 4] [--concurrency 16] [--rate 40]

Each runner scores the same parquet run in a fresh process (the test server runs in this one,
so its CPU is not counted). Reported per runner: startup (``ray.init``; 0 for local), judge
stage (first to last request the server saw), total (the ``score_parquet`` call, plus startup),
CPU (user + system of the runner's whole process tree: the driver, and for Ray its raylet, GCS
and workers) and peak memory (the tree's summed RSS, sampled every 0.2 s). Then a Ray run with
a shared rate limit: the busiest one-second window of request arrivals against the limit.
Needs the ``[ray]`` extra. Linux only (reads /proc).
"""

from __future__ import annotations

import argparse
import json
import os
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
from bench_ray import tree_cpu, tree_rss
runner, source, destination, base_url, actors, concurrency, rate = sys.argv[2:9]
peak = [0]
done = threading.Event()
def sample():
    while not done.is_set():
        peak[0] = max(peak[0], tree_rss(os.getpid()))
        time.sleep(0.2)
threading.Thread(target=sample, daemon=True).start()
started = time.monotonic()
startup = 0.0
if runner == "ray":
    import ray
    ray.init(include_dashboard=False, logging_level="ERROR")
    startup = time.monotonic() - started
import pairwise_polars as pp
judge = pp.OpenAIJudge("judge", base_url=base_url, max_concurrency=int(concurrency),
                       requests_per_minute=float(rate) * 60 if float(rate) else None)
pool = int(actors) if runner == "ray" else None
run = pp.score_parquet(source, destination, judge=judge, cache=False, progress=False,
                       chunk_size=500, runner=runner, actors=pool)
total = time.monotonic() - started
peak[0] = max(peak[0], tree_rss(os.getpid()))
cpu = tree_cpu(os.getpid())
done.set()
print(json.dumps({"startup": startup, "total": total, "cpu": cpu, "peak_rss": peak[0],
                  "pairs": run.n_pairs, "chunks": run.n_chunks, "errors": run.errors}))
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
    server: TestServer,
    runner: str,
    source: Path,
    folder: Path,
    args: argparse.Namespace,
    rate: float,
) -> dict[str, Any]:
    arrivals: list[float] = []
    lock = threading.Lock()

    def record(body: dict[str, Any]) -> None:
        with lock:
            arrivals.append(time.monotonic())

    server.reset()
    server.reply = record
    destination = folder / f"out-{runner}-{rate}"
    command = [
        sys.executable,
        "-c",
        CHILD,
        str(Path(__file__).parent),
        runner,
        str(source),
        str(destination),
        server.base_url,
        str(args.actors),
        str(args.concurrency),
        str(rate),
    ]
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    out = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    arrivals.sort()
    busiest = max(
        (sum(1 for t in arrivals[i:] if t < start + 1.0) for i, start in enumerate(arrivals)),
        default=0,
    )
    result.update(
        runner=runner,
        requests=server.stats.requests,
        max_in_flight=server.stats.max_in_flight,
        judge_stage=(arrivals[-1] - arrivals[0] + server.latency) if arrivals else 0.0,
        busiest_second=busiest,
        rate=rate,
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=4, help="copies of the jobs sample")
    parser.add_argument("--actors", type=int, default=4)
    parser.add_argument("--concurrency", type=int, default=16, help="per actor; local: total")
    parser.add_argument("--rate", type=float, default=40.0, help="requests/s for the limit run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, TestServer(latency=0.05) as server:
        folder = Path(tmp)
        source = generate(folder, args.copies)
        results = []
        local_args = argparse.Namespace(
            **{**vars(args), "concurrency": args.concurrency * args.actors}
        )
        results.append(measure(server, "local", source, folder, local_args, 0.0))
        results.append(measure(server, "ray", source, folder, args, 0.0))
        results.append(measure(server, "ray", source, folder, args, args.rate))
    print(
        "| runner | rate limit | pairs | chunks | startup s | judge stage s | total s | CPU s | "
        "peak RSS MiB | requests | mean req/s in the judge stage | max in flight | "
        "busiest 1 s window |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        limit = f"{r['rate']:g}/s" if r["rate"] else "none"
        print(
            f"| {r['runner']} | {limit} | {r['pairs']:,} | {r['chunks']} | {r['startup']:.1f} | "
            f"{r['judge_stage']:.1f} | {r['total']:.1f} | {r['cpu']:.1f} | "
            f"{r['peak_rss'] / 2**20:,.0f} | {r['requests']:,} | "
            f"{r['requests'] / max(r['judge_stage'], 1e-9):,.1f} | {r['max_in_flight']} | "
            f"{r['busiest_second']} |"
        )


if __name__ == "__main__":
    main()
