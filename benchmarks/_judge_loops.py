"""The workloads of ``bench_judge.py``, each run in its own process, and the test server's process.

Every variant sends the same request bodies (the rendered ``pairwise-bias`` messages with the
judge's model, temperature, max_tokens and json_schema ``response_format``), ``concurrency`` at
a time, and reads each reply's score:

- ``map``: ``pp.score_pairs(pairs, judge=pp.OpenAIJudge(...), cache=False)``, the package path
  (its default fast transport: the body posted over one aiohttp session);
- ``map-sdk``: the same with ``OpenAIJudge(..., transport="sdk")``: through the SDK's
  ``client.post`` on its aiohttp transport (the package's path before the fast one);
- ``sdk-default``: ``openai.AsyncOpenAI`` on its default transport, a semaphore and ``gather``;
- ``sdk-aiohttp``: the same on ``openai.DefaultAioHttpClient`` with the limits OpenAIJudge uses;
- ``aiohttp``: a bare ``aiohttp.ClientSession`` posting the same JSON (the floor);
- ``map-anthropic``: ``pp.score_pairs(..., judge=pp.AnthropicJudge(...))``, the package path in
  Anthropic's dialect (``/v1/messages``, the rubric as a forced tool);
- ``aiohttp-anthropic``: a bare aiohttp loop posting the same Messages bodies (its floor).
  The Anthropic variants send their own bodies (the same messages in the other dialect): the
  body check compares each family with itself.

Three diagnostics, off by default (``--diagnose``):

- ``judge-only``: ``OpenAIJudge.judge(requests)`` consumed directly (the Judge protocol), without
  the scoring map around it: splits the map's overhead into the judge's and the map's;
- ``map-cache``: ``map`` with the judgement cache in a new SQLite file (``cache=path``, as a run
  with the default ``cache=True`` keeps it): each batch of answers stored as it arrives;
- ``sdk-aiohttp-post``: the ``sdk-aiohttp`` loop calling the SDK's low-level
  ``client.post("/chat/completions", body=..., cast_to=ChatCompletion)``, which skips the SDK's
  per-request transform of the params (typed-dict walking) but keeps its transport, auth, error
  classes and typed response: what a judge could save by sending its own plain-JSON body.

A child times only the workload (setup and data loading excluded) and prints one JSON line:
``wall_s``, ``cpu_s`` (user + system of the whole process, ``getrusage``), ``ok``, ``errors``,
``rss_before`` (bytes resident once imports and data are loaded, before the workload) and
``peak_rss`` (the process's high-water mark, ``VmHWM``).
"""

from __future__ import annotations

import asyncio
import json
import resource
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

MODEL = "bench"
METRIC = "pairwise-bias"
API_KEY = "k"
TIMEOUT_S = 60.0
_AUTH: Any = {"security": {"bearer_auth": True}}  # what the SDK's create() passes to post()
VARIANTS = ("map", "map-sdk", "sdk-default", "sdk-aiohttp", "aiohttp", "map-anthropic",
            "aiohttp-anthropic")  # fmt: skip
DIAGNOSTICS = ("judge-only", "sdk-aiohttp-post", "map-cache")


def request_body(chat: list[dict[str, str]], schema: dict[str, Any]) -> dict[str, Any]:
    """The body OpenAIJudge sends with its defaults (temperature 0, max_tokens 300, json_schema)."""
    return {
        "model": MODEL,
        "messages": chat,
        "temperature": 0.0,
        "max_tokens": 300,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "judgement", "strict": True, "schema": schema},
        },
    }


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _score(content: str | None, max_score: int) -> bool:
    """What every bare loop does with a reply: parse the JSON verdict, check the rubric."""
    try:
        score = json.loads(content or "")["score"]
    except (ValueError, KeyError, TypeError):
        return False
    return isinstance(score, int) and 0 <= score <= max_score


def _rss(key: str) -> int:
    """A ``kB`` field of this process's ``/proc/self/status``, in bytes (0 where there is none)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _timed(run: Callable[[], Any]) -> dict[str, Any]:
    rss_before = _rss("VmRSS")
    wall0, cpu0 = time.perf_counter(), _cpu_s()
    ok, errors = run()
    return {"wall_s": time.perf_counter() - wall0, "cpu_s": _cpu_s() - cpu0, "ok": ok,
            "errors": errors, "rss_before": rss_before, "peak_rss": _rss("VmHWM")}  # fmt: skip


# ---------------------------------------------------------------------------------------------
# The package path.


def run_map(
    pairs_path: Path,
    base_url: str,
    concurrency: int,
    transport: str = "fast",
    cache: Path | None = None,
) -> dict[str, Any]:
    import polars as pl

    import pairwise_polars as pp

    pairs = pl.read_parquet(pairs_path)
    judge = pp.OpenAIJudge(MODEL, base_url=base_url, api_key=API_KEY, max_concurrency=concurrency,
                           transport=transport)  # type: ignore[arg-type]  # fmt: skip
    if cache is not None:  # a new file each run: every request is sent, every answer stored
        for stale in cache.parent.glob(cache.name + "*"):
            stale.unlink()

    def run() -> tuple[int, int]:
        out = pp.score_pairs(pairs, METRIC, judge=judge, cache=cache or False, progress=False)
        ok = out.select(pl.col("score").is_not_null() & pl.col("error").is_null()).sum().item()
        return ok, out.height - ok

    return _timed(run)


def run_map_anthropic(pairs_path: Path, base_url: str, concurrency: int) -> dict[str, Any]:
    import polars as pl

    import pairwise_polars as pp

    pairs = pl.read_parquet(pairs_path)
    judge = pp.AnthropicJudge(MODEL, base_url=base_url, api_key=API_KEY,
                              max_concurrency=concurrency)  # fmt: skip

    def run() -> tuple[int, int]:
        out = pp.score_pairs(pairs, METRIC, judge=judge, cache=False, progress=False)
        ok = out.select(pl.col("score").is_not_null() & pl.col("error").is_null()).sum().item()
        return ok, out.height - ok

    return _timed(run)


def run_aiohttp_anthropic(requests_path: Path, base_url: str, concurrency: int) -> dict[str, Any]:
    import aiohttp

    from pairwise_polars.engine._messages import anthropic_headers, messages_body, read_message

    spec = json.loads(requests_path.read_text())
    bodies = [messages_body(MODEL, json.loads(m), max_tokens=300, temperature=0.0,
                            schema=spec["schema"]) for m in spec["messages"]]  # fmt: skip
    url = base_url.rstrip("/") + "/messages"

    async def main() -> tuple[int, int]:
        connector = aiohttp.TCPConnector(limit=concurrency)
        timeout = aiohttp.ClientTimeout(total=TIMEOUT_S)
        async with aiohttp.ClientSession(
            connector=connector, timeout=timeout, headers=anthropic_headers(API_KEY)
        ) as session:

            async def one(body: dict[str, Any], max_score: int) -> bool:
                async with session.post(url, data=json.dumps(body)) as response:
                    payload = json.loads(await response.read())
                if response.status != 200:
                    return False
                return _score(read_message(payload).content, max_score)

            return await _gather_bounded(concurrency, one, bodies, spec["max_scores"])

    return _timed(lambda: asyncio.run(main()))


def run_judge_only(requests_path: Path, base_url: str, concurrency: int) -> dict[str, Any]:
    import polars as pl

    import pairwise_polars as pp

    spec = json.loads(requests_path.read_text())
    n = len(spec["messages"])
    requests = pl.DataFrame(
        {"key": [str(i) for i in range(n)], "metric": METRIC, "max_score": spec["max_scores"],
         "messages": spec["messages"]},
        schema_overrides={"max_score": pl.Int64},
    ).with_columns(pl.lit(None, pl.String).alias(c) for c in
                   ("input_a", "input_b", "output_a", "output_b", "attribute_a", "attribute_b",
                    "dimension"))  # fmt: skip
    judge = pp.OpenAIJudge(MODEL, base_url=base_url, api_key=API_KEY, max_concurrency=concurrency)

    async def consume() -> tuple[int, int]:
        ok = errors = 0
        async for frame in judge.judge(requests):
            good = frame["raw_score"].is_not_null().sum()
            ok, errors = ok + good, errors + frame.height - good
        return ok, errors

    return _timed(lambda: asyncio.run(consume()))


def profile_map(
    pairs_path: Path, base_url: str, concurrency: int, out_path: Path
) -> dict[str, Any]:
    """The map under cProfile, plus a CPU split: before the first request, while judging, after.

    The split comes from a thin judge wrapper that forwards everything to OpenAIJudge and reads
    the CPU clock when the map first asks it to judge and when its last frame has been consumed.
    """
    import cProfile

    import polars as pl

    import pairwise_polars as pp

    pairs = pl.read_parquet(pairs_path)
    inner = pp.OpenAIJudge(MODEL, base_url=base_url, api_key=API_KEY, max_concurrency=concurrency)
    marks: dict[str, float] = {}

    class Clocked:
        name = inner.name
        identity = inner.identity

        async def judge(self, requests: pl.DataFrame):  # type: ignore[no-untyped-def]
            marks["judge_start"] = _cpu_s()
            async for frame in inner.judge(requests):
                yield frame
            marks["judge_end"] = _cpu_s()

    profiler = cProfile.Profile(time.process_time)  # CPU, not wall: idle polling is not cost
    cpu0 = _cpu_s()
    wall0 = time.perf_counter()
    profiler.enable()
    out = pp.score_pairs(pairs, METRIC, judge=Clocked(), cache=False, progress=False)
    profiler.disable()
    wall, cpu1 = time.perf_counter() - wall0, _cpu_s()
    profiler.dump_stats(out_path)
    ok = out.select(pl.col("score").is_not_null() & pl.col("error").is_null()).sum().item()
    return {
        "wall_s": wall, "cpu_s": cpu1 - cpu0, "ok": ok, "errors": out.height - ok,
        "before_judge_cpu_s": marks["judge_start"] - cpu0,
        "judging_cpu_s": marks["judge_end"] - marks["judge_start"],
        "after_judge_cpu_s": cpu1 - marks["judge_end"],
    }  # fmt: skip


# ---------------------------------------------------------------------------------------------
# The bare loops: a semaphore and gather, nothing else.


def _load_requests(requests_path: Path) -> tuple[list[dict[str, Any]], list[int]]:
    spec = json.loads(requests_path.read_text())
    schema = spec["schema"]
    bodies = [request_body(json.loads(m), schema) for m in spec["messages"]]
    return bodies, spec["max_scores"]


async def _gather_bounded(
    concurrency: int,
    one: Callable[[dict[str, Any], int], Coroutine[Any, Any, bool]],
    bodies: list[dict[str, Any]],
    max_scores: list[int],
) -> tuple[int, int]:
    semaphore = asyncio.Semaphore(concurrency)

    async def bounded(body: dict[str, Any], max_score: int) -> bool:
        async with semaphore:
            try:
                return await one(body, max_score)
            except Exception:
                return False

    done = await asyncio.gather(*(bounded(b, m) for b, m in zip(bodies, max_scores, strict=True)))
    ok = sum(done)
    return ok, len(done) - ok


def run_sdk(
    requests_path: Path, base_url: str, concurrency: int, aiohttp: bool, post: bool = False
) -> dict[str, Any]:
    import openai
    from openai.types.chat import ChatCompletion

    bodies, max_scores = _load_requests(requests_path)

    async def main() -> tuple[int, int]:
        http_client = None
        if aiohttp:  # the limits OpenAIJudge sets: a live connection per concurrent request
            from httpx2 import Limits

            limits = Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
            http_client = openai.DefaultAioHttpClient(limits=limits, timeout=TIMEOUT_S)
        client = openai.AsyncOpenAI(api_key=API_KEY, base_url=base_url, max_retries=0,
                                    timeout=TIMEOUT_S, http_client=http_client)  # fmt: skip

        async def one(body: dict[str, Any], max_score: int) -> bool:
            if post:  # the body is already plain JSON: no need for the SDK's params transform
                response = await client.post("/chat/completions", body=body,
                                             cast_to=ChatCompletion, options=_AUTH)  # fmt: skip
            else:
                response = await client.chat.completions.create(**body)
            return _score(response.choices[0].message.content, max_score)

        async with client:
            return await _gather_bounded(concurrency, one, bodies, max_scores)

    return _timed(lambda: asyncio.run(main()))


def run_aiohttp(requests_path: Path, base_url: str, concurrency: int) -> dict[str, Any]:
    import aiohttp

    bodies, max_scores = _load_requests(requests_path)
    url = base_url.rstrip("/") + "/chat/completions"
    headers = {"Authorization": f"Bearer {API_KEY}", "Content-Type": "application/json"}

    async def main() -> tuple[int, int]:
        connector = aiohttp.TCPConnector(limit=concurrency)
        timeout = aiohttp.ClientTimeout(total=TIMEOUT_S)
        async with aiohttp.ClientSession(
            connector=connector, timeout=timeout, headers=headers
        ) as session:

            async def one(body: dict[str, Any], max_score: int) -> bool:
                async with session.post(url, data=json.dumps(body)) as response:
                    payload = json.loads(await response.read())
                if response.status != 200:
                    return False
                return _score(payload["choices"][0]["message"]["content"], max_score)

            return await _gather_bounded(concurrency, one, bodies, max_scores)

    return _timed(lambda: asyncio.run(main()))


def run_variant(variant: str, work: Path, base_url: str, concurrency: int) -> dict[str, Any]:
    if variant in ("map", "map-sdk"):
        transport = "sdk" if variant == "map-sdk" else "fast"
        return run_map(work / "pairs.parquet", base_url, concurrency, transport)
    if variant == "map-cache":
        return run_map(work / "pairs.parquet", base_url, concurrency, cache=work / "cache.sqlite")
    if variant == "map-anthropic":
        return run_map_anthropic(work / "pairs.parquet", base_url, concurrency)
    if variant == "aiohttp-anthropic":
        return run_aiohttp_anthropic(work / "requests.json", base_url, concurrency)
    if variant == "judge-only":
        return run_judge_only(work / "requests.json", base_url, concurrency)
    if variant == "map-profile":
        return profile_map(work / "pairs.parquet", base_url, concurrency, work / "map.prof")
    if variant in ("sdk-default", "sdk-aiohttp", "sdk-aiohttp-post"):
        aiohttp, post = variant != "sdk-default", variant == "sdk-aiohttp-post"
        return run_sdk(work / "requests.json", base_url, concurrency, aiohttp, post)
    if variant == "aiohttp":
        return run_aiohttp(work / "requests.json", base_url, concurrency)
    raise ValueError(f"unknown variant {variant!r}; known: {VARIANTS + DIAGNOSTICS}")


# ---------------------------------------------------------------------------------------------
# The server's process: the package's TestServer, with its counters and its CPU on request.


def serve(latency: float) -> None:
    """Serve until stdin closes; for each line read, print one JSON line of the counters since
    the last one (requests, distinct bodies, the most requests in flight) and this process's CPU
    seconds. (A pipe, not signals: an Event set from a signal handler can deadlock the thread
    it interrupts.)"""
    import sys

    from pairwise_polars.testing import TestServer

    with TestServer(latency=latency) as server:
        print(json.dumps({"base_url": server.base_url}), flush=True)
        for _ in sys.stdin:
            stats = server.stats
            server.reset_stats()
            print(json.dumps({
                "requests": stats.requests, "unique_requests": stats.unique_requests,
                "ok": stats.outcomes["ok"], "max_in_flight": stats.max_in_flight,
                "cpu_s": _cpu_s(), "hashes": sorted(stats.request_hashes),
            }), flush=True)  # fmt: skip
