"""Benchmark: a large parquet run scored end to end, chunked (score_parquet) vs in one piece.

Both paths produce the same artifact: the scored frame without the texts, as parquet, plus the
summary by dimension. Each task runs in a fresh Python process, watched by the shared harness
(peak RSS from the child's own VmHWM; killed above ``--mem-limit-gb`` or when the machine runs
low on memory, and then reported as over the guard).

- ``chunked``: ``score_parquet(path, ...)``: keys-only planning, chunks of ``chunk_size`` pairs,
  text read per chunk from the lazily scanned file, parts written as they finish.
- ``in-memory``: ``pl.read_parquet(path)``, then ``score(frame)`` in one piece and one
  ``write_parquet`` of the scored frame.

Judges: the offline heuristic (``--judge offline``, CPU-bound: the judge is most of the cost),
or the test server's chat endpoint at low latency in its own process (``--judge server``), on a
smaller slice.

Usage (from the repository root)::

    python benchmarks/bench_offline_run.py                                 # 1M and 5M rows
    python benchmarks/bench_offline_run.py --sizes 20000 --repeats 1       # smoke check
    python benchmarks/bench_offline_run.py --judge server --sizes 20000    # HTTP judge
    python benchmarks/bench_offline_run.py --sizes 1000000 --chunk-sizes 25000 100000 250000
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
if importlib.util.find_spec("pairwise_polars") is None:  # else: installed, or on PYTHONPATH
    sys.path.insert(1, str(ROOT))

import _data  # noqa: E402
from _harness import GIB, Outcome, report, run_child  # noqa: E402

METRIC = "pairwise-bias"
TEXT = ["input_a", "input_b", "output_a", "output_b"]


# -- children ---------------------------------------------------------------------------------


def _judge(kind: str, base_url: str | None):
    import pairwise_polars as pp

    if kind == "offline":
        return pp.HeuristicJudge()
    return pp.OpenAIJudge("judge-model", base_url=base_url, api_key="k", max_concurrency=64)


def child(task: str, path: str, judge_kind: str, chunk_size: int, base_url: str | None) -> None:
    import polars as pl

    import pairwise_polars as pp

    work = Path(tempfile.mkdtemp(prefix="bench-offline-"))
    try:
        judge = _judge(judge_kind, base_url)
        cache = work / "cache.sqlite"  # fresh: every judgement is paid for
        started = time.perf_counter()
        if task == "chunked":
            from pairwise_polars.runs import score_parquet

            run = score_parquet(
                path,
                work / "out",
                METRIC,
                judge=judge,
                cache=cache,
                chunk_size=chunk_size,
                progress=False,
            )
            n_pairs, summary, chunks = run.n_pairs, run.summary, run.n_chunks
            out_bytes = sum(p.stat().st_size for p in (work / "out" / "scored").iterdir())
        else:
            frame = pl.read_parquet(path)
            read_s = time.perf_counter() - started
            scored = pp.score(frame, METRIC, judge=judge, cache=cache, progress=False)
            scored.drop(TEXT).write_parquet(work / "scored.parquet")
            summary = pp.aggregate(scored)
            summary.write_parquet(work / "summary.parquet")
            n_pairs, chunks = scored.height, 1
            out_bytes = (work / "scored.parquet").stat().st_size
        total = time.perf_counter() - started
        result = {
            "total_s": total,
            "n_pairs": n_pairs,
            "pairs_per_s": n_pairs / total,
            "chunks": chunks,
            "out_bytes": out_bytes,
            "summary": [
                [v if not isinstance(v, float) else round(v, 9) for v in row]
                for row in summary.select("dimension", "n_pairs", "mean_divergence").rows()
            ],
        }
        if task == "in-memory":
            result["read_s"] = read_s
        report(result)
    finally:
        shutil.rmtree(work, ignore_errors=True)


# -- parent -----------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pairwise_polars.testing",
            "--port",
            str(port),
            "--latency",
            str(latency),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, f"http://127.0.0.1:{port}/v1"
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the test server did not start")


def bench(args: argparse.Namespace) -> list[tuple[str, int, int, Outcome]]:
    server, base_url = (None, "-")
    if args.judge == "server":
        server, base_url = start_server(args.latency)
    results = []
    try:
        for n_rows in args.sizes:
            path = str(_data.dataset_path(n_rows, args.seed))
            tasks = [("chunked", c) for c in args.chunk_sizes]
            if not args.no_in_memory:
                tasks.append(("in-memory", 0))
            outcomes = {t: Outcome(task=t) for t in tasks}
            for _ in range(args.repeats):  # repeats interleaved: a busy spell hits every path
                for task, chunk in tasks:
                    outcome = outcomes[(task, chunk)]
                    if outcome.guarded:
                        continue
                    cmd = [
                        sys.executable,
                        __file__,
                        "--child",
                        task,
                        path,
                        args.judge,
                        str(chunk),
                        base_url,
                    ]
                    run = run_child(
                        cmd,
                        mem_limit=int(args.mem_limit_gb * GIB),
                        min_available=int(args.min_available_gb * GIB),
                        cwd=ROOT,
                    )
                    if "guarded" in run:
                        outcome.guarded = (
                            f"{run['guarded']} after {run['wall_s']:.0f} s "
                            f"(peak {run['peak_rss'] / GIB:.1f} GiB)"
                        )
                        continue
                    outcome.runs.append(run)
                    print(
                        f"  {n_rows:,} rows {task} {chunk or ''}: {run['total_s']:.1f} s, "
                        f"{run['peak_rss'] / GIB:.2f} GiB",
                        file=sys.stderr,
                        flush=True,
                    )
            results += [(task, chunk, n_rows, outcomes[(task, chunk)]) for task, chunk in tasks]
    finally:
        if server is not None:
            server.kill()
            server.wait()
    return results


def table(results: list[tuple[str, int, int, Outcome]], judge: str) -> str:
    lines = [
        "| rows | pairs | path | chunk size | runs | wall (s) | pairs/s | peak RSS (GiB) "
        "| vs in-memory |",
        "| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for task, chunk, n_rows, outcome in results:
        base = next((o for t, _, n, o in results if t == "in-memory" and n == n_rows), None)
        base_rate = base.median("pairs_per_s") if base and base.runs else None
        if outcome.guarded:
            lines.append(f"| {n_rows:,} | | {task} | | | | | | {outcome.guarded} |")
            continue
        rate = outcome.median("pairs_per_s")
        ratio = f"{rate / base_rate:.2f}x" if base_rate and task != "in-memory" else ""
        lines.append(
            f"| {n_rows:,} | {int(outcome.median('n_pairs')):,} | {task} | "
            f"{f'{chunk:,}' if chunk else ''} | {len(outcome.runs)} | "
            f"{outcome.median('total_s'):.1f} | {rate:,.0f} | "
            f"{outcome.median('peak_rss') / GIB:.2f} | {ratio} |"
        )
    agree = _agreement(results)
    return f"judge: {judge}\n\n" + "\n".join(lines) + f"\n\n{agree}"


def _agreement(results: list[tuple[str, int, int, Outcome]]) -> str:
    by_size: dict[int, set[str]] = {}
    for _, _, n_rows, outcome in results:
        for run in outcome.runs:
            by_size.setdefault(n_rows, set()).add(json.dumps(run["summary"]))
    if any(len(s) > 1 for s in by_size.values()):
        raise AssertionError(f"paths disagree on the summary: {by_size}")
    return "every path gives the same summary (n_pairs and mean divergence by dimension)"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 5_000_000])
    parser.add_argument("--chunk-sizes", type=int, nargs="+", default=[50_000])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--judge", choices=["offline", "server"], default="offline")
    parser.add_argument("--latency", type=float, default=0.005, help="test server latency (s)")
    parser.add_argument("--no-in-memory", action="store_true", help="skip the in-memory path")
    parser.add_argument("--mem-limit-gb", type=float, default=12.0, help="kill a child above")
    parser.add_argument("--min-available-gb", type=float, default=1.5)
    args = parser.parse_args(argv)
    import polars

    print(
        f"{date.today()} {platform.machine()} {os.cpu_count()} cores, "
        f"{os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE') / GIB:.0f} GiB "
        f"(shared with other work); python {platform.python_version()}, "
        f"polars {polars.__version__}; load average at start {os.getloadavg()[0]:.1f}"
    )
    print(table(bench(args), args.judge))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        url = sys.argv[6] if sys.argv[6] != "-" else None
        child(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), url)
    else:
        main()
