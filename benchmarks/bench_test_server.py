"""Benchmark: the test server's CPU per request, this tree against an earlier commit.

The test server answers every judge benchmark, so its routes must not get slower when they are
rewritten. Each run is a fresh process that starts a ``TestServer`` (no latency, no faults) and
sends, over one aiohttp session, ``--requests`` chat completions, as many Anthropic messages,
and a Batch API round (upload, create, retrieve, content) every 50 requests; it reports its own
CPU time (user + system: client and server share the process, and the client's part is the
same code in both variants). The earlier commit's package is taken with ``git archive`` into a
temporary folder. Variants alternate run by run; medians are reported.

Usage (from the repository root)::

    python benchmarks/bench_test_server.py --before HEAD~3             # 2,000 requests, 5 repeats
    python benchmarks/bench_test_server.py --before HEAD~3 --requests 200 --repeats 1  # smoke
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_CHAT = {"model": "bench", "messages": [{"role": "user", "content": "Say hello."}]}
_MESSAGES = {**_CHAT, "max_tokens": 64}
_BATCH_LINE = {"custom_id": "r0", "method": "POST", "url": "/v1/chat/completions", "body": _CHAT}


async def _workload(base: str, n: int) -> None:
    import aiohttp

    async with aiohttp.ClientSession() as session:
        for i in range(n):
            async with session.post(f"{base}/chat/completions", json=_CHAT) as r:
                await r.read()
            headers = {"anthropic-version": "2023-06-01"}
            async with session.post(f"{base}/messages", json=_MESSAGES, headers=headers) as r:
                await r.read()
            if i % 50 == 0:
                await _batch_round(session, base)


async def _batch_round(session: object, base: str) -> None:
    import aiohttp

    assert isinstance(session, aiohttp.ClientSession)
    form = aiohttp.FormData()
    form.add_field("purpose", "batch")
    form.add_field("file", json.dumps(_BATCH_LINE).encode(), filename="in.jsonl")
    async with session.post(f"{base}/files", data=form) as r:
        file_id = (await r.json())["id"]
    body = {"input_file_id": file_id, "endpoint": "/v1/chat/completions"}
    async with session.post(f"{base}/batches", json={**body, "completion_window": "24h"}) as r:
        batch_id = (await r.json())["id"]
    async with session.get(f"{base}/batches/{batch_id}") as r:
        output = (await r.json())["output_file_id"]
    async with session.get(f"{base}/files/{output}/content") as r:
        await r.read()


def _child(n: int) -> None:
    from pairwise_polars.testing import TestServer

    with TestServer() as server:
        start = resource.getrusage(resource.RUSAGE_SELF)
        asyncio.run(_workload(server.base_url, n))
        end = resource.getrusage(resource.RUSAGE_SELF)
        requests = server.stats.requests
    cpu = (end.ru_utime - start.ru_utime) + (end.ru_stime - start.ru_stime)
    print(json.dumps({"cpu_s": cpu, "requests": requests}))


def _extract(rev: str, into: Path) -> None:
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev, "pairwise_polars"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")


def _run(tree: Path, n: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(n)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", metavar="REV", help="the earlier commit (required)")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        _child(args.child)
        return
    if args.before is None:
        parser.error("--before REV is required")
    with tempfile.TemporaryDirectory() as folder:
        _extract(args.before, Path(folder))
        trees = {args.before: Path(folder), "this tree": ROOT}
        runs: dict[str, list[dict]] = {name: [] for name in trees}
        for _ in range(args.repeats):
            for name, tree in trees.items():
                runs[name].append(_run(tree, args.requests))
    load = os.getloadavg()[0]
    base = statistics.median(r["cpu_s"] for r in runs[args.before])
    print(f"{args.requests} chat + {args.requests} messages requests and a batch round every 50;")
    print(f"{args.repeats} runs each, alternating; 1-minute load at the end {load:.1f}\n")
    print("| variant | server requests | CPU s (median) | CPU s (all) | ratio |")
    print("| --- | --- | --- | --- | --- |")
    for name, rows in runs.items():
        cpu = [r["cpu_s"] for r in rows]
        median = statistics.median(cpu)
        listed = ", ".join(f"{c:.2f}" for c in cpu)
        print(f"| {name} | {rows[0]['requests']} | {median:.2f} | {listed} | {median / base:.2f} |")


if __name__ == "__main__":
    main()
