"""Response collection throughput against the test server in its own process.

    python benchmarks/bench_responses.py [--rows 3000] [--latency 0.05] [--concurrency 32 128]

Prints, per concurrency, responses/s (median of --repeats runs) and the client's CPU
milliseconds per response. The server runs in a separate process so that its CPU does not
count as the client's (on a small machine they still share the cores).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import polars as pl

from pairwise_polars.counterfactual import OpenAITarget, collect_responses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=3000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[32, 128])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    server = subprocess.Popen(
        [sys.executable, "-m", "pairwise_polars.testing", "--port", "0",
         "--latency", str(args.latency)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()  # the server prints its URL first
        rows = pl.DataFrame({"input": [f"Write a short reference letter for candidate {i}."
                                       for i in range(args.rows)]})  # fmt: skip
        for concurrency in args.concurrency:
            target = OpenAITarget("bench", base_url=base_url, max_concurrency=concurrency)
            rates, cpu = [], []
            for _ in range(args.repeats):
                started, cpu_started = time.perf_counter(), time.process_time()
                answered = collect_responses(rows, target, cache=False, progress=False)
                wall = time.perf_counter() - started
                cpu.append((time.process_time() - cpu_started) / args.rows * 1000)
                rates.append(args.rows / wall)
                assert answered["error"].is_null().all()
            print(
                f"rows={args.rows} latency={args.latency}s concurrency={concurrency}: "
                f"{statistics.median(rates):,.0f} responses/s (runs: "
                f"{', '.join(f'{r:,.0f}' for r in rates)}), client CPU "
                f"{statistics.median(cpu):.2f} ms/response"
            )
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
