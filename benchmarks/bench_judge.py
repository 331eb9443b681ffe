"""Benchmark: judge throughput of the scoring map against bare client loops, on the test server.

One local test server (``pairwise_polars.testing.TestServer``, fixed latency, its own process)
answers every variant; the same N distinct pairs (seeded runs from ``_data.py``, ~600-character
outputs) become N unique judge requests, sent ``concurrency`` at a time by:

- ``map``: ``pp.score_pairs(pairs, "pairwise-bias", judge=pp.OpenAIJudge("bench", base_url=...,
  max_concurrency=C), cache=False, progress=False)``: the package path, rendering included, on
  its default fast transport (the body posted over one aiohttp session);
- ``map-sdk``: the same with ``transport="sdk"`` (the SDK's ``client.post`` on its aiohttp
  transport);
- ``sdk-default``: a bare ``openai.AsyncOpenAI`` + semaphore loop on the SDK's default transport;
- ``sdk-aiohttp``: the same on ``openai.DefaultAioHttpClient`` (the openai aiohttp extra) with
  the connection limits OpenAIJudge uses (C connections, all kept alive);
- ``aiohttp``: a bare ``aiohttp`` loop posting the same JSON: the floor of Python client overhead.

``--diagnose`` adds ``judge-only`` (``OpenAIJudge.judge`` without the map around it),
``map-cache`` (the map storing its answers in a new SQLite cache, as a default run does) and
``sdk-aiohttp-post`` (the SDK loop through ``client.post``, skipping the SDK's params transform);
see ``_judge_loops.py``. ``--variants wire`` (a diagnostic too) is the package's fast transport
alone: OpenAIJudge's own session and headers posting the bodies encoded before the clock starts,
in the bare loop's semaphore and gather, with no judge, engine or map around it. The bare loops
send the messages rendered once, up front, by the metric; the server's request hashes
(canonical JSON) check that every variant sent the same bodies. Each run is a fresh process
that times only the workload: wall time, and its own CPU (user + system, ``getrusage``); the
server's CPU is read separately. Runs are interleaved across repeats; medians are reported.
The goal cells (the map, a ``--before`` copy and bare aiohttp at 64 and 256 in flight; every
concurrency at zero latency) get ``--goal-repeats`` runs (9 by default, after the
``--repeats`` of every cell, interleaved too): on a shared two-core machine a median of three
moved by ~0.1 from one run to the next, as much as the margin to the 1.3x goal.

Usage (from the repository root)::

    python benchmarks/bench_judge.py                            # C = 8, 64, 256; 3,000 requests
    python benchmarks/bench_judge.py --requests 200 --repeats 1 # smoke check
    python benchmarks/bench_judge.py --profile 8 256            # plus cProfiles of the map
    python benchmarks/bench_judge.py --diagnose                 # plus the diagnostics

``--before DIR`` adds ``map-before``: the map of another copy of the package (e.g. a ``git
archive`` of an older commit unpacked in DIR), run in the same interleaved loop, so before and
after are measured side by side.

``--write-results`` replaces the ``## Judge throughput`` section of ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import pstats
import shlex
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
if importlib.util.find_spec("pairwise_polars") is None:  # else: installed, or on PYTHONPATH
    sys.path.insert(1, str(ROOT))

import _data  # noqa: E402
import _judge_loops as loops  # noqa: E402

SECTION = "## Judge throughput"
RESULTS = HERE / "RESULTS.md"
CHILD_TIMEOUT_S = 900
BASELINE = "sdk-default"
SAME_TRANSPORT = "sdk-aiohttp"  # the bare loop on the transport OpenAIJudge uses
GOAL_OVERHEAD_MS = 0.2
GOAL_RATIO = 2.0
GOAL_RATIO_AT = 256  # concurrency at which the map must reach GOAL_RATIO x the default SDK loop
GOAL_GAP = 1.3  # issue 28, at 64 and 256 in flight: bare aiohttp's throughput / the map's
GOAL_CPU = 1.3  # and the map's CPU per request / bare aiohttp's
GOAL_GAP_AT = (64, 256)
GOAL_ZERO_LATENCY = 1.5  # both ratios, against a zero-latency server
MIB = 2**20


# ---------------------------------------------------------------------------------------------
# Data: N distinct pairs, and their messages rendered once by the metric.


def prepare(n_requests: int, seed: int) -> Path:
    """Write ``pairs.parquet`` and ``requests.json`` for N requests; return their folder."""
    import polars as pl

    import pairwise_polars as pp

    # "_shown": the messages come from the package's own preparation (pairs in the order the
    # judge is shown them), so the bare loops send exactly the map's bodies.
    work = _data.WORK / f"judge_{n_requests}_seed{seed}_v{_data.DATA_VERSION}_shown"
    if (work / "requests.json").exists():
        return work
    from pairwise_polars.scoring._prepare import prepare as prepare_requests

    n_rows = max(20_000, n_requests * 2)  # 1 reference + 3-4 variants a group: ~0.77 pairs/row
    runs = pl.read_parquet(_data.dataset_path(n_rows, seed))
    pairs = pp.form_pairs(runs).head(n_requests)
    if pairs.height < n_requests:
        raise ValueError(f"only {pairs.height} pairs from {n_rows} rows")
    metric = pp.get_metric(loops.METRIC)
    judge = pp.OpenAIJudge(loops.MODEL, api_key=loops.API_KEY)
    messages = prepare_requests(pairs, loops.METRIC, judge=judge).requests["messages"].to_list()
    if len(set(messages)) != n_requests:
        raise ValueError("the pairs do not give distinct requests")
    work.mkdir(parents=True, exist_ok=True)
    pairs.write_parquet(work / "pairs.parquet")
    spec = {"schema": metric.response_schema(), "messages": messages,
            "max_scores": [metric.max_score] * n_requests}  # fmt: skip
    partial = work / f"requests.{os.getpid()}.partial"
    partial.write_text(json.dumps(spec))
    partial.replace(work / "requests.json")
    return work


# ---------------------------------------------------------------------------------------------
# The server process and the child runs.


class Server:
    """The test server in its own process, so the client's CPU is measured apart from it."""

    def __init__(self, latency: float) -> None:
        cmd = [sys.executable, __file__, "--serve", str(latency)]
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT
        )
        line = self.proc.stdout.readline()  # type: ignore[union-attr]
        if not line:
            raise RuntimeError("the test server did not start")
        self.base_url = json.loads(line)["base_url"]
        self.cpu_s = 0.0
        self.counters()

    def counters(self) -> dict[str, Any]:
        """Counters since the last call (the server resets them), and its CPU since then."""
        self.proc.stdin.write("stats\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]
        stats = json.loads(self.proc.stdout.readline())  # type: ignore[union-attr]
        stats["cpu_s"], self.cpu_s = stats["cpu_s"] - self.cpu_s, stats["cpu_s"]
        return stats

    def close(self) -> None:
        self.proc.stdin.close()  # type: ignore[union-attr]
        self.proc.wait(timeout=30)


WIRE = "wire"
"""The fast transport alone (see the module's docstring)."""


def run_wire(requests_path: Path, base_url: str, concurrency: int) -> dict[str, Any]:
    import asyncio

    import pairwise_polars as pp
    from pairwise_polars.engine._wire import encode

    bodies, max_scores = loops._load_requests(requests_path)
    encoded: list[Any] = [encode(body) for body in bodies]  # the bytes the map posts
    judge = pp.OpenAIJudge(loops.MODEL, base_url=base_url, api_key=loops.API_KEY,
                           max_concurrency=concurrency)  # fmt: skip

    async def main() -> tuple[int, int]:
        transport = judge._transport()
        try:

            async def one(data: Any, max_score: int) -> bool:
                reply = await transport.post_bytes(data)  # type: ignore[attr-defined]
                return loops._score(reply["choices"][0]["message"]["content"], max_score)

            return await loops._gather_bounded(concurrency, one, encoded, max_scores)
        finally:
            await transport.aclose()

    return loops._timed(lambda: asyncio.run(main()))


BEFORE = "map-before"
"""The map of the package in ``--before DIR``: ``map`` run with DIR first on the path."""


def run_child(
    variant: str, concurrency: int, work: Path, server: Server, before: str | None = None
) -> dict[str, Any]:
    env = None
    if before is not None and variant in (BEFORE, "map-profile-before"):
        env = {**os.environ, "PYTHONPATH": before}
    elif variant == BEFORE:
        raise ValueError(f"{BEFORE} needs --before DIR")
    child = {BEFORE: "map", "map-profile-before": "map-profile"}.get(variant, variant)
    cmd = [sys.executable, __file__, "--child", child, str(concurrency), str(work),
           server.base_url]  # fmt: skip
    server.counters()  # zero them: whatever came before is not this run's
    done = subprocess.run(
        cmd, capture_output=True, text=True, cwd=ROOT, timeout=CHILD_TIMEOUT_S, env=env
    )
    if done.returncode != 0:
        raise RuntimeError(f"{variant} C={concurrency} failed ({done.returncode}):\n{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    seen = server.counters()
    result["server_cpu_s"] = seen["cpu_s"]
    result["server_requests"] = seen["requests"]
    result["max_in_flight"] = seen["max_in_flight"]
    result["hashes"] = seen["hashes"]
    return result


@dataclass
class Outcome:
    variant: str
    concurrency: int
    runs: list[dict[str, Any]] = field(default_factory=list)

    def median(self, key: str) -> float:
        return statistics.median(r[key] for r in self.runs)

    def per_request(self, key: str, n: int) -> float:
        return statistics.median(r[key] / n for r in self.runs)


def bench(args: argparse.Namespace, work: Path) -> tuple[list[Outcome], dict[str, Any]]:
    outcomes = {(v, c): Outcome(v, c) for c in args.concurrency for v in args.variants}
    server = Server(args.latency)
    reference_hashes: dict[str, list[str]] = {}  # by API family: each sends its own bodies
    checks = {"distinct_bodies": None, "identical_bodies": True, "errors": 0}

    def cell(repeat: int, c: int, v: str) -> None:
        result = run_child(v, c, work, server, args.before)
        hashes = result.pop("hashes")
        family = "anthropic" if v.endswith("anthropic") else "openai"
        if family not in reference_hashes:
            reference_hashes[family] = hashes
            checks["distinct_bodies"] = len(hashes)
        elif hashes != reference_hashes[family]:
            checks["identical_bodies"] = False
        checks["errors"] += result["errors"] + (result["server_requests"] - args.requests)
        outcomes[v, c].runs.append(result)
        print(
            f"  repeat {repeat + 1} C={c:<4} {v:<12} "
            f"{args.requests / result['wall_s']:8,.0f} req/s "
            f"{1000 * result['cpu_s'] / args.requests:6.2f} CPU-ms/req "
            f"(server {1000 * result['server_cpu_s'] / args.requests:.2f}), "
            f"max in flight {result['max_in_flight']}, errors {result['errors']}",
            flush=True,
        )

    try:
        for repeat in range(args.repeats):
            for c in args.concurrency:
                for v in args.variants:  # interleaved, so drift on a shared machine spreads out
                    cell(repeat, c, v)
        # The goal cells (the map beside bare aiohttp at 64 and 256 in flight) take more
        # repeats: still interleaved, still fresh processes.
        for repeat in range(args.repeats, args.goal_repeats):
            for c in goal_concurrencies(args):
                for v in goal_variants(args.variants):
                    cell(repeat, c, v)
        checks["profiles"] = [profile(work, server, c, args.requests) for c in args.profile]
        if args.before:
            checks["profiles"] = [
                p
                for c in args.profile
                for p in (profile(work, server, c, args.requests, args.before),
                          profile(work, server, c, args.requests))
            ]  # fmt: skip
    finally:
        server.close()
    return list(outcomes.values()), checks


def goal_concurrencies(args: argparse.Namespace) -> list[int]:
    """The concurrencies whose map-to-bare-loop ratios have a goal (all, at zero latency)."""
    return [c for c in args.concurrency if args.latency == 0 or c in GOAL_GAP_AT]


def goal_note(args: argparse.Namespace) -> str:
    cells = goal_variants(args.variants)
    if args.goal_repeats == args.repeats or not cells or not goal_concurrencies(args):
        return "every cell alike"
    at = ", ".join(str(c) for c in goal_concurrencies(args))
    return f"{args.goal_repeats} for {', '.join(cells)} at C = {at}: the goal cells"


def goal_variants(variants: list[str]) -> list[str]:
    """The variants the goals compare: the map (and its --before copy) and bare aiohttp."""
    return [v for v in variants if v in ("map", BEFORE, "aiohttp")]


def profile(
    work: Path, server: Server, concurrency: int, n: int, before: str | None = None
) -> dict[str, Any]:
    variant = "map-profile" if before is None else "map-profile-before"
    result = run_child(variant, concurrency, work, server, before)
    result["label"] = "before (--before)" if before else "this tree"
    result.pop("hashes")
    stats = pstats.Stats(str(work / "map.prof"))
    rows = []
    for func, (_cc, calls, tottime, cumtime, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        parts = Path(func[0]).parts
        # The package's files by their path in the repository, others by their file name.
        ours = "pairwise_polars" in parts
        name = "/".join(parts[parts.index("pairwise_polars") :]) if ours else parts[-1]
        where = f"{name}:{func[1]}({func[2]})"
        rows.append((tottime, cumtime, calls, where))
    result["top_tottime"] = sorted(rows, reverse=True)[:12]
    ours = [r for r in rows if r[3].startswith("pairwise_polars/")]
    result["top_ours"] = sorted(ours, key=lambda r: r[1], reverse=True)[:12]
    result["n"], result["concurrency"] = n, concurrency
    return result


# ---------------------------------------------------------------------------------------------
# Table and RESULTS.md.


COLUMNS = (
    "variant", "C", "req/s", "req/s min-max", "ideal C/latency", "% of ideal",
    "client CPU-ms/req", "server CPU-ms/req", "max in flight", "req/s vs bare SDK default",
    "map CPU overhead vs bare SDK aiohttp, ms/req", "peak RSS MiB", "RSS before workload MiB",
)  # fmt: skip


def table(outcomes: list[Outcome], args: argparse.Namespace) -> tuple[str, dict[str, Any]]:
    n = args.requests
    by = {(o.variant, o.concurrency): o for o in outcomes}
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + " --- |" * len(COLUMNS)]
    goals: dict[str, dict[int, Any]] = {"overhead_ms": {}, "ratio": {}, "gap": {}, "split": {},
                                        "cpu": {}, "families": {}, "before": {},
                                        "paired": {}}  # fmt: skip
    for c in args.concurrency:
        base, same, floor = (
            by.get((BASELINE, c)),
            by.get((SAME_TRANSPORT, c)),
            by.get(("aiohttp", c)),
        )
        for v in args.variants:
            o = by[v, c]
            rps, ideal = _rps(o, n), (c / args.latency if args.latency > 0 else float("inf"))
            cpu = 1000 * o.per_request("cpu_s", n)
            overhead = ""
            if v == "map" and same is not None:
                goals["overhead_ms"][c] = cpu - 1000 * same.per_request("cpu_s", n)
                overhead = f"{goals['overhead_ms'][c]:+.2f}"
            if v == "map" and base is not None:
                goals["ratio"][c] = rps / _rps(base, n)
            if v == "judge-only" and same is not None and ("map", c) in by:
                judge_ms = cpu - 1000 * same.per_request("cpu_s", n)
                map_ms = 1000 * (by["map", c].per_request("cpu_s", n) - o.per_request("cpu_s", n))
                goals["split"][c] = (judge_ms, map_ms)
            if v == "map" and floor is not None:
                goals["gap"][c] = _rps(floor, n) / rps
                goals["cpu"][c] = cpu / (1000 * floor.per_request("cpu_s", n))
            if v in ("map", BEFORE) and floor is not None:
                goals["paired"][v, c] = _paired(o, floor)
            if v == BEFORE and floor is not None:
                cpu_ratio = cpu / (1000 * floor.per_request("cpu_s", n))
                goals["before"][c] = (_rps(floor, n) / rps, cpu_ratio)
            anthropic_floor = by.get(("aiohttp-anthropic", c))
            if v == "map-anthropic" and anthropic_floor is not None:
                goals["families"][c] = (
                    _rps(anthropic_floor, n) / rps,
                    cpu / (1000 * anthropic_floor.per_request("cpu_s", n)),
                )
            cells = [
                v, c, f"{rps:,.0f}", _spread(o, n), f"{ideal:,.0f}", f"{100 * rps / ideal:.0f}%",
                f"{cpu:.2f}", f"{1000 * o.per_request('server_cpu_s', n):.2f}",
                int(o.median("max_in_flight")),
                "" if base is None else f"{rps / _rps(base, n):.2f}x", overhead,
                f"{o.median('peak_rss') / MIB:.0f}", f"{o.median('rss_before') / MIB:.0f}",
            ]  # fmt: skip
            lines.append("| " + " | ".join(map(str, cells)) + " |")
    return "\n".join(lines), goals


def _paired(outcome: Outcome, floor: Outcome) -> tuple[float, float]:
    """The medians over repeats of each repeat's own CPU ratio and throughput ratio (the
    floor's req/s over the outcome's): the runs of one repeat ran back to back, so load that
    drifts across the repeats cancels better than in a ratio of medians."""
    pairs = list(zip(outcome.runs, floor.runs, strict=True))
    cpu = statistics.median(r["cpu_s"] / f["cpu_s"] for r, f in pairs)
    throughput = statistics.median(r["wall_s"] / f["wall_s"] for r, f in pairs)
    return cpu, throughput


def _spread(outcome: Outcome, n: int) -> str:
    rates = [n / r["wall_s"] for r in outcome.runs]
    return f"{min(rates):,.0f}-{max(rates):,.0f}"


def _rps(outcome: Outcome, n: int) -> float:
    return statistics.median(n / r["wall_s"] for r in outcome.runs)


def goal_lines(goals: dict[str, Any], latency: float = 0.05) -> list[str]:
    out = []
    for c, extra in sorted(goals["overhead_ms"].items()):
        met = "met" if extra <= GOAL_OVERHEAD_MS else "MISSED"
        out.append(
            f"- C={c}: map CPU overhead vs the bare SDK loop on the same (aiohttp) transport "
            f"{extra:+.2f} ms/judgement (goal <= {GOAL_OVERHEAD_MS}): {met}"
        )
    top = GOAL_RATIO_AT
    ratio = goals["ratio"].get(top)
    if ratio is not None:
        met = "met" if ratio >= GOAL_RATIO else "MISSED"
        out.append(f"- C={top}: map throughput {ratio:.2f}x the bare SDK default-transport loop "
                   f"(goal >= {GOAL_RATIO}x): {met}")  # fmt: skip
    for c, gap in sorted(goals["gap"].items()):
        cpu = goals["cpu"][c]
        line = (f"- C={c}: bare aiohttp is {gap:.2f}x the map's throughput; the map's CPU per "
                f"request is {cpu:.2f}x bare aiohttp's")  # fmt: skip
        bound = GOAL_ZERO_LATENCY if latency == 0 else GOAL_GAP
        if c in GOAL_GAP_AT or latency == 0:
            met = "met" if gap <= bound and cpu <= bound else "MISSED"
            line += f" (goal <= {bound}x and <= {bound}x): {met}"
        out.append(line)
    for (v, c), (cpu, rate) in sorted(goals["paired"].items(), key=lambda item: item[0][::-1]):
        out.append(f"- C={c}: {v}'s CPU per request over bare aiohttp's, paired per repeat "
                   f"(median of each repeat's ratio): {cpu:.2f}x; bare aiohttp's throughput "
                   f"over {v}'s, paired the same way: {rate:.2f}x")  # fmt: skip
    for c, (gap, cpu) in sorted(goals["before"].items()):
        out.append(f"- C={c}: {BEFORE} (the --before copy): bare aiohttp is {gap:.2f}x its "
                   f"throughput; its CPU per request is {cpu:.2f}x bare aiohttp's")  # fmt: skip
    for c, (gap, cpu) in sorted(goals["families"].items()):
        openai = goals["gap"].get(c), goals["cpu"].get(c)
        beside = (
            "" if None in openai else (f" (OpenAI dialect: {openai[0]:.2f}x and {openai[1]:.2f}x)")
        )
        out.append(f"- C={c}: Anthropic dialect: bare aiohttp is {gap:.2f}x map-anthropic's "
                   f"throughput; its CPU per request is {cpu:.2f}x bare aiohttp's"
                   f"{beside}")  # fmt: skip
    for c, (judge_ms, map_ms) in sorted(goals["split"].items()):
        out.append(
            f"- C={c}: of the overhead, OpenAIJudge.judge alone (judge-only vs sdk-aiohttp) "
            f"{judge_ms:+.2f} ms/req, the scoring map around it (map vs judge-only) {map_ms:+.2f}"
        )
    return out


def profile_lines(prof: dict[str, Any]) -> list[str]:
    n = prof["n"]

    def ms(seconds: float) -> str:
        return f"{1000 * seconds / n:.3f}"

    lines = [
        f"Map ({prof.get('label', 'this tree')}) under cProfile at C={prof['concurrency']} "
        "(the profiler inflates small calls): "
        f"CPU {ms(prof['cpu_s'])} ms/req; before the first request {ms(prof['before_judge_cpu_s'])}"
        f", while judging {ms(prof['judging_cpu_s'])}, after the last answer "
        f"{ms(prof['after_judge_cpu_s'])}. Own time, ms per request:",
        "",
    ]
    for tottime, cumtime, calls, where in prof["top_tottime"][:8]:
        lines.append(f"- `{where}`: own {ms(tottime)}, cumulative {ms(cumtime)}, {calls:,} calls")
    lines += ["", "The package's own functions by cumulative time, ms per request:", ""]
    for tottime, cumtime, calls, where in prof["top_ours"][:8]:
        lines.append(f"- `{where}`: cumulative {ms(cumtime)}, own {ms(tottime)}, {calls:,} calls")
    return lines


def write_results(text: str) -> None:
    """Replace (or append) this benchmark's section (its text up to the next heading), leaving
    the others and its own subsections as they are."""
    current = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    lines = current.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == SECTION), None)
    if start is None:
        new = current.rstrip("\n") + "\n\n" + text.rstrip("\n") + "\n"
    else:
        # Up to the next heading: the subsections below it (earlier passes' records) stay.
        headings = ("## ", "### ")
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith(headings)),
                   len(lines))  # fmt: skip
        before = "\n".join(lines[:start]).rstrip("\n")
        after = "\n".join(lines[end:])
        new = before + "\n\n" + text.rstrip("\n") + "\n" + ("\n" + after + "\n" if after else "")
    RESULTS.write_text(new)


def machine_note() -> str:
    import aiohttp
    import openai
    import polars

    load = os.getloadavg()[0]
    return (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores (shared with other "
        f"work: 1-minute load {load:.1f} at the start), Python {platform.python_version()}, "
        f"openai {openai.__version__}, aiohttp {aiohttp.__version__}, polars {polars.__version__}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 64, 256])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--goal-repeats",
        type=int,
        default=9,
        metavar="N",
        help="repeats of the goal cells (map, --before copy and bare aiohttp at 64 and 256 in "
        "flight, every concurrency at zero latency); at least --repeats",
    )
    parser.add_argument("--latency", type=float, default=0.05, help="server latency, seconds")
    parser.add_argument("--variants", nargs="+", default=list(loops.VARIANTS),
                        choices=(*loops.VARIANTS, *loops.DIAGNOSTICS, WIRE, BEFORE))  # fmt: skip
    parser.add_argument(
        "--diagnose",
        action="store_true",
        help=f"add the diagnostic variants {', '.join(loops.DIAGNOSTICS)}",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--before",
        metavar="DIR",
        help=f"add the variant {BEFORE}: the map of the package copy in DIR, interleaved",
    )
    parser.add_argument(
        "--profile",
        type=int,
        nargs="*",
        default=[],
        metavar="C",
        help="also run the map once under cProfile at these concurrencies",
    )
    parser.add_argument(
        "--write-results",
        action="store_true",
        help=f"replace the '{SECTION}' section of benchmarks/RESULTS.md",
    )
    args = parser.parse_args(argv)
    args.goal_repeats = max(args.goal_repeats, args.repeats)
    if args.diagnose:
        args.variants += [v for v in loops.DIAGNOSTICS if v not in args.variants]
    if args.before and BEFORE not in args.variants:
        args.variants.insert(0, BEFORE)

    note = machine_note()
    command = "python benchmarks/bench_judge.py " + shlex.join(sys.argv[1:])
    print(f"{note}\n{command.strip()}")
    start = time.perf_counter()
    work = prepare(args.requests, args.seed)
    outcomes, checks = bench(args, work)
    text, goals = table(outcomes, args)
    summary = goal_lines(goals, args.latency)
    print(f"\n{text}\n")
    print("\n".join(summary))
    print(f"checks: {json.dumps({k: v for k, v in checks.items() if k != 'profiles'})}")
    prof_text = []
    for prof in checks["profiles"]:
        prof_text += ["", *profile_lines(prof)]
    print("\n".join(prof_text))
    print(f"\ntotal {time.perf_counter() - start:.0f} s")
    if args.write_results:
        body = [
            SECTION, "",
            f"`{command.strip()}` ({date.today().isoformat()}). {note}. The test server ran in "
            f"its own process at {args.latency * 1000:g} ms latency on the same machine; "
            f"{args.requests:,} distinct requests per run, median of {args.repeats} fresh "
            f"processes per cell ({goal_note(args)}). Client CPU is user + system time of the "
            "client process during the workload only.",
            "", text, "", *summary,
            "", f"Checks: every run sent the same {checks['distinct_bodies']:,} distinct bodies: "
            f"{checks['identical_bodies']}; failed requests: {checks['errors']}.",
        ]  # fmt: skip
        body += prof_text
        write_results("\n".join(body))
        print(f"wrote the '{SECTION}' section of {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":  # variant, concurrency, work, base_url
        variant, concurrency, work, base_url = sys.argv[2:6]
        if variant == WIRE:
            outcome = run_wire(Path(work) / "requests.json", base_url, int(concurrency))
        else:
            outcome = loops.run_variant(variant, Path(work), base_url, int(concurrency))
        print(json.dumps(outcome))
    elif len(sys.argv) > 1 and sys.argv[1] == "--serve":
        loops.serve(float(sys.argv[2]))
    else:
        main()
