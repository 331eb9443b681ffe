"""Benchmark: the same parquet run scored into a local folder and into an S3-compatible store.

One generated run (``benchmarks/_data.py``), the offline heuristic judge (no network), the
default chunk size; ``score_parquet(path, destination)`` with the destination a local folder
(``local``) or ``s3://bucket/run`` on moto's S3 server on 127.0.0.1 (``s3``: parts, journal,
lock and summary uploaded through boto3, ``run.scored()`` read back by polars). Each run is a
fresh Python process watched by the shared harness (wall time, peak RSS of the child); the
repeats are interleaved, so a busy spell of the shared machine hits both paths. The S3 server
runs in a process of its own (moto keeps objects in its memory, not in the measured child's).

Usage (from the repository root)::

    python benchmarks/bench_object_store.py                          # 1M rows, 3 repeats
    python benchmarks/bench_object_store.py --rows 20000 --repeats 1 # smoke check
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import resource
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import date
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
if importlib.util.find_spec("pairwise_polars") is None:  # else: installed, or on PYTHONPATH
    sys.path.insert(1, str(ROOT))

import _data  # noqa: E402
from _harness import GIB, Outcome, report, run_child  # noqa: E402

OPTIONS = {
    "aws_access_key_id": "bench",
    "aws_secret_access_key": "bench-secret",
    "aws_region": "us-east-1",
    "aws_allow_http": "true",
}


def child(where: str, path: str, endpoint: str, chunk_size: int) -> None:
    import shutil

    from pairwise_polars import HeuristicJudge
    from pairwise_polars.runs import score_parquet

    work = Path(tempfile.mkdtemp(prefix="bench-object-store-"))
    options = {**OPTIONS, "aws_endpoint_url": endpoint}
    try:
        if where == "s3":
            bucket = f"bench-{uuid.uuid4().hex[:12]}"
            _client(endpoint).create_bucket(Bucket=bucket)
            destination: str | Path = f"s3://{bucket}/runs/run-01"
            extra = {"storage_options": options}
        else:
            destination, extra = work / "out", {}
        started = time.perf_counter()
        run = score_parquet(
            path,
            destination,
            "pairwise-bias",
            judge=HeuristicJudge(),
            cache=work / "cache.sqlite",
            chunk_size=chunk_size,
            progress=False,
            **extra,  # type: ignore[arg-type]
        )
        scored_s = time.perf_counter() - started
        rows = run.scored().select("pair_id", "score").collect()  # read back from where it is
        total = time.perf_counter() - started
        usage = resource.getrusage(resource.RUSAGE_SELF)  # every thread of this process
        report(
            {
                "total_s": total,
                "score_s": scored_s,
                "read_back_s": total - scored_s,
                "cpu_s": usage.ru_utime + usage.ru_stime,
                "n_pairs": run.n_pairs,
                "chunks": run.n_chunks,
                "rows": rows.height,
                "score_sum": round(float(rows["score"].sum()), 6),
            }
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _client(endpoint: str):
    import boto3

    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=OPTIONS["aws_access_key_id"],
        aws_secret_access_key=OPTIONS["aws_secret_access_key"],
        region_name=OPTIONS["aws_region"],
    )


def start_s3() -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("the S3 server did not start")


def bench(args: argparse.Namespace) -> dict[str, Outcome]:
    path = str(_data.dataset_path(args.rows, args.seed))
    server, endpoint = start_s3()
    outcomes = {where: Outcome(task=where) for where in ("local", "s3")}
    try:
        for _ in range(args.repeats):
            for where, outcome in outcomes.items():
                load = os.getloadavg()[0]
                cmd = [sys.executable, __file__, "--child", where, path, endpoint]
                run = run_child(
                    [*cmd, str(args.chunk_size)],
                    mem_limit=int(args.mem_limit_gb * GIB),
                    min_available=int(1.5 * GIB),
                    cwd=ROOT,
                )
                if "guarded" in run:
                    raise RuntimeError(f"{where}: {run['guarded']}")
                run["load"] = load
                outcome.runs.append(run)
                print(
                    f"  {where}: {run['total_s']:.1f} s, CPU {run['cpu_s']:.1f} s, "
                    f"{run['peak_rss'] / GIB:.2f} GiB "
                    f"(load {load:.1f})",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        server.kill()
        server.wait()
    return outcomes


def table(outcomes: dict[str, Outcome]) -> str:
    local = outcomes["local"]
    lines = [
        "| destination | runs | wall (s), each | wall median (s) | of which read back (s) "
        "| peak RSS (GiB) | wall vs local | peak vs local | client CPU median (s) "
        "| CPU vs local | load at starts |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for where, outcome in outcomes.items():
        wall, peak = outcome.median("total_s"), outcome.median("peak_rss")
        assert wall is not None and peak is not None
        base_wall, base_peak = local.median("total_s"), local.median("peak_rss")
        assert base_wall is not None and base_peak is not None
        cpu, base_cpu = outcome.median("cpu_s"), local.median("cpu_s")
        assert cpu is not None and base_cpu is not None
        each = ", ".join(f"{r['total_s']:.1f}" for r in outcome.runs)
        loads = ", ".join(f"{r['load']:.1f}" for r in outcome.runs)
        lines.append(
            f"| {where} | {len(outcome.runs)} | {each} | {wall:.1f} | "
            f"{outcome.median('read_back_s'):.1f} | {peak / GIB:.2f} | "
            f"{wall / base_wall:.2f}x | {peak / base_peak:.2f}x | {cpu:.1f} | "
            f"{cpu / base_cpu:.2f}x | {loads} |"
        )
    sums = {json.dumps([r["rows"], r["score_sum"]]) for o in outcomes.values() for r in o.runs}
    if len(sums) != 1:
        raise AssertionError(f"the destinations disagree on the scored rows: {sums}")
    first = local.runs[0]
    return (
        "\n".join(lines)
        + f"\n\n{first['n_pairs']:,} pairs in {first['chunks']} chunks; both destinations hold "
        "the same scored rows (row count and score sum)."
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--chunk-size", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mem-limit-gb", type=float, default=8.0)
    args = parser.parse_args(argv)
    import polars

    print(
        f"{date.today()} {platform.machine()} {os.cpu_count()} cores (shared with other work); "
        f"python {platform.python_version()}, polars {polars.__version__}; "
        f"{args.rows:,} rows, offline judge, chunk size {args.chunk_size:,}"
    )
    print(table(bench(args)))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
    else:
        main()
