"""What the resource bounds of issue 30 cost and what they save.

    python benchmarks/bench_hostile.py [--answer-mb 300] [--csv-rows 100000] [--repeats 3]

1. Oversize answers: one judge request against a HostileServer sending a ``--answer-mb`` MB
   answer (``huge``: with Content-Length; ``gzip-bomb``: the same answer gzip-compressed), on
   both transports, in a fresh child process each (the server in this one): wall time of the
   scoring call and the child's peak RSS (its VmHWM).
2. A host that never accepts, with the default connect_timeout (10 s): time to the JudgeError.
3. A server that drips its body a byte every 0.2 s, timeout=2 s: time to the error rows.
4. The CSV check (one pass of Python's csv reader before polars reads the file): time of
   ``scan_data(path).collect()`` against ``pl.scan_csv(path).collect()`` on ``--csv-rows`` rows
   of ~600-character answers.
5. Redaction: CPU microseconds per reply text (1 KB) for a 40-character key.

Medians of ``--repeats`` runs; the machine is shared, read the ratios more than the seconds.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

from pairwise_polars.engine._failures import redact_secrets
from pairwise_polars.io import scan_data
from pairwise_polars.testing import HostileServer

CHILD = """
import json, sys, time
import polars as pl
import pairwise_polars as pp
url, transport, options = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
rows = pl.DataFrame({"group_id": ["g", "g"], "role": ["reference", "variant"],
                     "input": ["q", "q"], "output": ["a", "b"]})
judge = pp.OpenAIJudge("judge", base_url=url, transport=transport, max_retries=0, **options)
started = time.perf_counter()
try:
    scored = pp.score(rows, judge=judge, cache=False, progress=False)
    outcome = scored["error"][0]
except pp.JudgeError as exc:
    outcome = str(exc)[:80]
seconds = time.perf_counter() - started
# VmHWM: this process's own high-water mark (ru_maxrss would count the parent's at fork)
status = open("/proc/self/status").read().split("VmHWM:")[1]
peak = int(status.split()[0]) / 1024
print(json.dumps({"seconds": seconds, "peak_mib": peak, "outcome": outcome}))
"""


def child(mode: str, size: int, transport: str, **options: object) -> dict:
    """One judge request from a fresh process (the server runs here, outside its memory)."""
    with HostileServer(mode, size=size, interval=0.2) as server:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, server.base_url, transport, json.dumps(options)],
            capture_output=True, text=True, check=True, timeout=600,
        )  # fmt: skip
    return json.loads(done.stdout)


def median_of(runs: list[dict], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def answers(args: argparse.Namespace) -> None:
    print("| server | transport | seconds | peak RSS MiB | outcome |")
    print("| --- | --- | --- | --- | --- |")
    for mode in ("huge", "gzip-bomb"):
        for transport in ("fast", "sdk"):
            runs = [child(mode, args.answer_mb * 2**20, transport) for _ in range(args.repeats)]
            print(f"| {mode} {args.answer_mb} MB | {transport} | {median_of(runs, 'seconds'):.2f} "
                  f"| {median_of(runs, 'peak_mib'):.0f} | {runs[0]['outcome'][:70]} |")  # fmt: skip
    for mode, options in (("never-accept", {}), ("drip-body", {"timeout": 2.0})):
        for transport in ("fast", "sdk"):
            run = child(mode, 0, transport, **options)
            print(f"| {mode} | {transport} | {run['seconds']:.2f} | {run['peak_mib']:.0f} "
                  f"| {run['outcome'][:70]} |")  # fmt: skip


def csv_check(args: argparse.Namespace) -> None:
    text = "The candidate shows strong skills, " * 17
    n = args.csv_rows
    roles = (["reference", "variant", "variant"] * (n // 3 + 1))[:n]
    frame = pl.DataFrame({
        "group_id": [f"g{i // 3}" for i in range(n)], "role": roles,
        "input": "Write a reference letter.", "output": [f"{text}{i}" for i in range(n)],
    })  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "rows.csv"
        frame.write_csv(path)
        timings: dict[str, list[float]] = {"polars alone": [], "checked (scan_data)": []}
        for _ in range(args.repeats):
            started = time.perf_counter()
            pl.scan_csv(path, infer_schema_length=None).collect()
            timings["polars alone"].append(time.perf_counter() - started)
            started = time.perf_counter()
            scan_data(str(path)).collect()
            timings["checked (scan_data)"].append(time.perf_counter() - started)
        size = path.stat().st_size / 2**20
    print(f"\nCSV of {args.csv_rows:,} rows ({size:.0f} MiB):")
    for name, values in timings.items():
        print(f"- {name}: {statistics.median(values):.3f} s")


def redaction() -> None:
    key = "sk-proj-" + "A1b2C3d4" * 4
    reply = ("The two letters differ in warmth and in the details they offer. " * 16)[:1024]
    n = 20_000
    started = time.process_time()  # CPU time: the machine is shared
    for _ in range(n):
        redact_secrets(reply, (key,))
    print(f"\nRedaction: {(time.process_time() - started) / n * 1e6:.1f} CPU-µs per 1 KB reply")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answer-mb", type=int, default=300)
    parser.add_argument("--csv-rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    answers(args)
    csv_check(args)
    redaction()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\nthis process's peak RSS (the server's side included): {peak:.0f} MiB")


if __name__ == "__main__":
    main()
