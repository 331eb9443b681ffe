"""The judge map's own CPU around the judging (issue 28): what ``score_pairs`` does before the
first request (``prepare``) and after the last answer (the join back and the usage), by stage.

    python benchmarks/bench_judge_prep.py [--requests 3000] [--repeats 5] [--calls 10]
        [--before DIR] [--profile]

The pairs are ``bench_judge.py``'s (``N`` distinct pairs, written once into the bench's work
folder): ``prepare(pairs, "pairwise-bias", judge=OpenAIJudge(...))`` and, on a result frame
of one made-up answer per request (the judge is never called), ``usage_of`` and
``join_back``, as the map runs them. Each repeat is a fresh process per variant (this tree;
with ``--before DIR`` also the package in DIR, e.g. a ``git archive`` of an older commit),
interleaved: the CPU seconds (user + system) of the first call of each stage (templates
compiled, metric read) and the median of ``--calls`` more. Each child also prints digests of
the requests (key and messages), the keyed frame and the scored frame, which must be equal
across variants. ``--profile`` prints a cProfile of this tree's warm calls.
"""

from __future__ import annotations

import argparse
import hashlib
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
STAGES = ("prepare", "join_back")


def _child(pairs_path: str, calls: int, profile: bool) -> dict[str, Any]:
    import polars as pl

    import pairwise_polars as pp
    from pairwise_polars._schemas import RESULT_SCHEMA
    from pairwise_polars.scoring._cost import usage_of
    from pairwise_polars.scoring._prepare import prepare
    from pairwise_polars.scoring._results import join_back

    pairs = pl.read_parquet(pairs_path)
    judge = pp.OpenAIJudge("bench", api_key="bench", base_url="http://127.0.0.1:9/v1")

    def prepared() -> Any:
        return prepare(pairs, "pairwise-bias", judge=judge)

    t0 = time.process_time()
    first = prepared()
    first_prepare = time.process_time() - t0
    answers = {"raw_score": 1, "reason": "fine", "attempts": 1, "latency_s": 0.1,
               "input_tokens": 900, "output_tokens": 30, "cached_tokens": 0,
               "judge_model": "bench", "score_source": "answer"}  # fmt: skip
    results = first.requests.select(
        [
            pl.col(c) if c == "key" else pl.lit(answers.get(c), t).alias(c)
            for c, t in RESULT_SCHEMA.items()
        ]
    ).with_columns(cached=pl.lit(False))

    def joined(p: Any) -> pl.DataFrame:
        usage_of(results, judge.name, p.traits, None)
        return join_back(p.pairs, p.keyed, results, p.spec, p.not_masked)

    cpu: dict[str, list[float]] = {s: [] for s in STAGES}
    firsts: dict[str, float] = {}
    out: dict[str, Any] = {}
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile(time.process_time)
    for i in range(calls + 1):
        if profiler is not None and i == 1:
            profiler.enable()
        t0 = time.process_time()
        p = prepared() if i else first
        t1 = time.process_time()
        scored = joined(p)
        t2 = time.process_time()
        if i == 0:
            firsts = {"prepare": first_prepare, "join_back": t2 - t1}
            out = {"digests": _digests(p, scored)}
        else:
            cpu["prepare"].append(t1 - t0)
            cpu["join_back"].append(t2 - t1)
    if profiler is not None:
        profiler.disable()
        import pstats

        pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(30)
    out["first"] = firsts
    out["cpu"] = {s: statistics.median(v) for s, v in cpu.items()}
    return out


def _digests(prepared: Any, scored: Any) -> dict[str, str]:
    def digest(frame: Any) -> str:  # the values and types, not the buffers' layout
        text = f"{frame.schema}\n{frame.write_ndjson()}"
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    requests = prepared.requests
    return {
        "requests": digest(requests),
        "keys_messages": digest(requests.select("key", "messages")),
        "keyed": digest(prepared.keyed),
        "scored": digest(scored),
    }


def _run(pairs_path: Path, calls: int, before: str | None) -> dict[str, Any]:
    env = dict(os.environ)
    if before is not None:
        env["PYTHONPATH"] = before
    cmd = [sys.executable, __file__, "--child", str(pairs_path), "--calls", str(calls)]
    done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--before", help="a copy of the package to measure alongside")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_child(args.child, args.calls, args.profile)))
        return
    sys.path.insert(0, str(HERE))
    import bench_judge

    pairs_path = bench_judge.prepare(args.requests, 0) / "pairs.parquet"
    if args.profile:
        cmd = [sys.executable, __file__, "--child", str(pairs_path), "--calls", str(args.calls),
               "--profile"]  # fmt: skip
        subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    variants = {"after": None} if args.before is None else {"before": args.before, "after": None}
    runs: dict[str, list[dict[str, Any]]] = {v: [] for v in variants}
    load_start = os.getloadavg()[0]
    for _ in range(args.repeats):
        for name, before in variants.items():
            runs[name].append(_run(pairs_path, args.calls, before))
    digests = {name: {json.dumps(r["digests"]) for r in rs} for name, rs in runs.items()}
    print(f"{args.requests:,} pairs, {args.repeats} repeats x {args.calls} calls; 1-minute "
          f"load {load_start:.2f} at the start, {os.getloadavg()[0]:.2f} at the end")  # fmt: skip
    print("| variant | stage | first call, CPU ms | then, CPU ms (median) | us a request |")
    print("| --- | --- | ---: | ---: | ---: |")
    medians: dict[str, dict[str, float]] = {}
    firsts: dict[str, dict[str, float]] = {}
    for name, rs in runs.items():
        medians[name], firsts[name] = {}, {}
        for stage in (*STAGES, "total"):
            values = [r["cpu"][stage] if stage != "total" else sum(r["cpu"].values()) for r in rs]
            cold = [r["first"][stage] if stage != "total" else sum(r["first"].values()) for r in rs]
            medians[name][stage] = statistics.median(values)
            firsts[name][stage] = statistics.median(cold)
            ms, first = medians[name][stage] * 1000, statistics.median(cold) * 1000
            per = ms * 1000 / args.requests
            print(f"| {name} | {stage} | {first:.1f} | {ms:.1f} | {per:.1f} |")
    if "before" in medians:
        for stage in (*STAGES, "total"):
            ratio = medians["after"][stage] / medians["before"][stage]
            first = firsts["after"][stage] / firsts["before"][stage]
            print(f"after / before, {stage}: first call {first:.2f}, then {ratio:.2f}")
    same = len({d for ds in digests.values() for d in ds}) == 1
    print("outputs identical across variants and repeats:", same)
    if not same:
        print(json.dumps({k: sorted(v) for k, v in digests.items()}, indent=1))


if __name__ == "__main__":
    main()
