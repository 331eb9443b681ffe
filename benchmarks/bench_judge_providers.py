"""Benchmark: the judge map in both provider dialects, each against a bare loop of its own.

One local test server (its own process, fixed latency) answers both dialects: OpenAI's chat
completions and Anthropic's Messages. The same N distinct pairs become N unique judge requests,
sent ``concurrency`` at a time by (workloads in ``_judge_loops.py``, each run a fresh process
that times only the workload, interleaved across repeats, medians reported):

- ``map``: ``pp.score_pairs(..., judge=pp.OpenAIJudge(...))``, the package path (fast transport);
- ``aiohttp``: a bare aiohttp loop posting the same chat-completion bodies (its floor);
- ``map-anthropic``: ``pp.score_pairs(..., judge=pp.AnthropicJudge(...))`` (``/v1/messages``,
  the rubric as a forced tool), the package path in Anthropic's dialect;
- ``aiohttp-anthropic``: a bare aiohttp loop posting the same Messages bodies (its floor);
- ``sdk-anthropic``: the official ``anthropic`` SDK (``AsyncAnthropic``, its default httpx
  transport), a semaphore and ``gather``, posting the same Messages bodies with
  ``client.messages.create(model=..., max_tokens=..., messages=..., extra_body=rest)``;
  ``sdk-anthropic-aiohttp``: the same on ``anthropic.DefaultAioHttpClient`` where the installed
  SDK has it. The SDK is a bench-only
  dependency (``pip install "pairwise-polars[bench]"``); without it these rows are skipped.

Each family's ratios are to its own bare loop: throughput (bare / variant: 1.0 means as fast as
the bare loop) and client CPU per request (variant / bare). Usage (from the repository root)::

    python benchmarks/bench_judge_providers.py --requests 600 --concurrency 16 128 --repeats 2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import _data  # noqa: E402
import _judge_loops as loops  # noqa: E402

FLOORS = {"map": "aiohttp", "map-anthropic": "aiohttp-anthropic",
          "sdk-anthropic": "aiohttp-anthropic", "sdk-anthropic-aiohttp": "aiohttp-anthropic",
          "aiohttp": "aiohttp", "aiohttp-anthropic": "aiohttp-anthropic"}  # fmt: skip
VARIANTS = ("aiohttp", "map", "aiohttp-anthropic", "map-anthropic", "sdk-anthropic",
            "sdk-anthropic-aiohttp")  # fmt: skip
CHILD_TIMEOUT_S = 600


def prepare(n_requests: int, seed: int) -> Path:
    """``pairs.parquet`` and ``requests.json`` for N distinct requests (as ``bench_judge.py``)."""
    import polars as pl

    import pairwise_polars as pp
    from pairwise_polars.scoring._prepare import prepare as prepare_requests

    work = _data.WORK / f"providers_{n_requests}_seed{seed}_v{_data.DATA_VERSION}"
    if (work / "requests.json").exists():
        return work
    runs = pl.read_parquet(_data.dataset_path(max(20_000, n_requests * 2), seed))
    pairs = pp.form_pairs(runs).head(n_requests)
    metric = pp.get_metric(loops.METRIC)
    judge = pp.OpenAIJudge(loops.MODEL, api_key=loops.API_KEY)
    messages = prepare_requests(pairs, loops.METRIC, judge=judge).requests["messages"].to_list()
    work.mkdir(parents=True, exist_ok=True)
    pairs.write_parquet(work / "pairs.parquet")
    spec = {"schema": metric.response_schema(), "messages": messages,
            "max_scores": [metric.max_score] * len(messages)}  # fmt: skip
    (work / "requests.json").write_text(json.dumps(spec))
    return work


def run_sdk_anthropic(requests_path: Path, base_url: str, concurrency: int, aiohttp: bool):
    """The official SDK: ``AsyncAnthropic`` (default httpx transport, or its aiohttp one) with
    a semaphore, the same Messages bodies, the same check of each verdict."""
    import anthropic

    try:  # the SDK's HTTP client: httpx, or its successor package in newer SDKs
        import httpx2 as httpx  # pyright: ignore[reportMissingImports]
    except ImportError:
        import httpx

    from pairwise_polars.engine._messages import messages_body, read_message

    spec = json.loads(requests_path.read_text())
    bodies = [messages_body(loops.MODEL, json.loads(m), max_tokens=300, temperature=0.0,
                            schema=spec["schema"]) for m in spec["messages"]]  # fmt: skip
    root = base_url.rstrip("/").removesuffix("/v1")
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    http = (anthropic.DefaultAioHttpClient() if aiohttp
            else anthropic.DefaultAsyncHttpxClient(limits=limits))  # fmt: skip

    async def main() -> tuple[int, int]:
        client = anthropic.AsyncAnthropic(api_key=loops.API_KEY, base_url=root, max_retries=0,
                                          timeout=loops.TIMEOUT_S, http_client=http)  # fmt: skip

        async def one(body: dict[str, Any], max_score: int) -> bool:
            # the fields every SDK version takes as keywords; the rest (system, tools,
            # tool_choice, temperature) as the SDK's extra_body, sent as they are
            rest = {k: v for k, v in body.items() if k not in ("model", "max_tokens", "messages")}
            message = await client.messages.create(
                model=body["model"], max_tokens=body["max_tokens"], messages=body["messages"],
                extra_body=rest,
            )  # fmt: skip
            return loops._score(read_message(message.model_dump()).content, max_score)

        try:
            return await loops._gather_bounded(concurrency, one, bodies, spec["max_scores"])
        finally:
            await client.close()

    return loops._timed(lambda: asyncio.run(main()))


def child(variant: str, concurrency: int, work: Path, base_url: str) -> dict[str, Any]:
    if variant.startswith("sdk-anthropic"):
        aio = variant.endswith("aiohttp")
        return run_sdk_anthropic(work / "requests.json", base_url, concurrency, aio)
    return loops.run_variant(variant, work, base_url, concurrency)


def available(variant: str) -> bool:
    """The SDK rows need the ``anthropic`` package (and its aiohttp client for the second)."""
    if not variant.startswith("sdk-anthropic"):
        return True
    try:
        import anthropic
    except ImportError:
        return False
    if variant.endswith("aiohttp"):
        try:
            anthropic.DefaultAioHttpClient()
        except Exception:  # the SDK without its aiohttp extra
            return False
    return True


def run_child(variant: str, concurrency: int, work: Path, base_url: str) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", variant, str(concurrency), str(work), base_url]
    paths = [str(ROOT), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=CHILD_TIMEOUT_S)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"{variant} C={concurrency} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[16, 128])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--serve", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve is not None:
        loops.serve(args.serve)
        return
    if args.child:
        variant, c, work, url = args.child
        print(json.dumps(child(variant, int(c), Path(work), url)))
        return
    work = prepare(args.requests, args.seed)
    variants = [v for v in VARIANTS if available(v)]
    skipped = sorted(set(VARIANTS) - set(variants))
    server = subprocess.Popen([sys.executable, __file__, "--serve", str(args.latency)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                              cwd=ROOT)  # fmt: skip
    base_url = json.loads(server.stdout.readline())["base_url"]  # type: ignore[union-attr]
    runs: dict[tuple[str, int], list[dict[str, Any]]] = {}
    load = os.getloadavg()[0]
    started = time.perf_counter()
    try:
        for _ in range(args.repeats):
            for c in args.concurrency:
                for variant in variants:
                    result = run_child(variant, c, work, base_url)
                    if result["errors"]:
                        raise RuntimeError(f"{variant} C={c}: {result['errors']} errors")
                    runs.setdefault((variant, c), []).append(result)
    finally:
        server.stdin.close()  # type: ignore[union-attr]
        server.wait(timeout=30)
    n = args.requests

    def med(variant: str, c: int, key: str) -> float:
        return statistics.median(r[key] for r in runs[(variant, c)])

    print(
        f"{n} requests, latency {args.latency * 1000:g} ms, {args.repeats} repeats, "
        f"load {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end, "
        f"{time.perf_counter() - started:.0f} s" + (f"; skipped: {skipped}" if skipped else "")
    )
    print(
        "\n| variant | C | req/s | client CPU ms/req | bare loop / variant (req/s) | "
        "variant / bare loop (CPU) |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for c in args.concurrency:
        for variant in variants:
            floor = FLOORS[variant]
            rate = n / med(variant, c, "wall_s")
            cpu = med(variant, c, "cpu_s") / n * 1000
            floor_rate = n / med(floor, c, "wall_s")
            floor_cpu = med(floor, c, "cpu_s") / n * 1000
            print(
                f"| {variant} | {c} | {rate:,.0f} | {cpu:.2f} | {floor_rate / rate:.2f} | "
                f"{cpu / floor_cpu:.2f} |"
            )


if __name__ == "__main__":
    main()
