"""Benchmark: panels and repeats on the trial, through the real openai client against the
package's test server (the judge behaviours switched on by model name).

The server's judges, all deterministic in (model, seed, messages):

- ``steady-*``: the pair's true score (the server's hash of the request, 0-4) moved by one step
  up or down with probability ``--wobble`` (a hash of model, seed and messages draws it), so
  two steady judges mostly agree and a steady judge repeated with new seeds mostly repeats;
- ``zero``: always 0;
- ``noisy``: a uniform draw from 0-4 (a hash of model, seed and messages).

Each run judges ``--groups`` fresh groups (one counterfactual pair each, their texts drawn from
the run's seed) and reports, over ``--runs`` runs:

- agreement: ``judge_agreement`` (Krippendorff's alpha) of three steady judges, and of two
  steady judges with the always-0 judge; how often its interval excludes the steady panel's
  alpha, and how often ``judge_report`` names the always-0 judge (``concern``) and only it;
- stability: ``judge_repeat_sd`` and ``verdict_stability`` (200 resamples) of one steady and
  one noisy judge with ``--repeats`` repeats, under ``max_mean_divergence`` set at the run's
  own ``--anchor`` plus ``--margin`` (a verdict near its threshold, where stability matters),
  and how often each is inconclusive (stability below 0.9). Gates are three-way and pass on
  the interval's upper bound, so the anchor that puts a verdict on the edge of flipping is that
  bound (``bound``, the default); ``mean`` (the point estimate) leaves the threshold inside the
  interval, where every run is inconclusive and stays so.

Usage (from the repository root)::

    python benchmarks/bench_judge_panel.py              # 30 groups, 20 runs, 3 repeats
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shlex
import statistics
import sys
import time
from typing import Any

import polars as pl

import pairwise_polars as pp
from pairwise_polars.testing import TestServer
from pairwise_polars.testing._replies import hashed_score, message_text


def draw(*parts: object) -> float:
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def behaviours(wobble: float) -> Any:
    def reply(body: dict[str, Any]) -> dict[str, Any] | None:
        model, seed = body["model"], body.get("seed")
        messages = body["messages"]
        texts = [message_text(m) for m in messages]
        key = "".join(texts)
        if model == "zero":
            return {"score": 0, "reason": "always 0"}
        if model == "noisy":
            return {"score": int(draw(model, seed, key) * 5), "reason": "noise"}
        true = hashed_score(messages, texts, (0, 4))
        u = draw(model, seed, key)
        step = -1 if u < wobble / 2 else 1 if u < wobble else 0
        return {"score": min(4, max(0, true + step)), "reason": "steady"}

    return reply


def rows(groups: int, seed: int) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "group_id": [g for g in range(groups) for _ in range(2)],
            "role": ["reference", "variant"] * groups,
            "dimension": "gender",
            "input": [f"Run {seed}: hire applicant {g}?" for g in range(groups) for _ in range(2)],
            "output": [f"answer {i % 7} to {i // 2} ({seed})" for i in range(2 * groups)],
        }
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=30)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--wobble", type=float, default=0.2)
    parser.add_argument("--margin", type=float, default=0.02)
    parser.add_argument("--anchor", choices=("bound", "mean"), default="bound")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    agree: dict[str, list[float]] = {"steady": [], "with zero": []}
    effective: dict[str, list[float]] = {"steady": [], "with zero": []}
    below, named = 0, 0
    stab: dict[str, list[float]] = {"steady": [], "noisy": []}
    spread: dict[str, list[float]] = {"steady": [], "noisy": []}
    inconclusive = {"steady": 0, "noisy": 0}
    with TestServer(reply=behaviours(args.wobble)) as server:

        def judge(model: str) -> pp.OpenAIJudge:
            return pp.OpenAIJudge(model, base_url=server.base_url, api_key="bench", seed=0)

        for run in range(args.runs):
            data = rows(args.groups, run)
            panels = {
                "steady": [judge("steady-a"), judge("steady-b"), judge("steady-c")],
                "with zero": [judge("steady-a"), judge("steady-b"), judge("zero")],
            }
            summaries = {}
            for name, panel in panels.items():
                scored = pp.score(data, judge=panel, cache=False, progress=False)
                summaries[name] = pp.aggregate(scored, by=[])
                agree[name].append(summaries[name]["judge_agreement"].item())
                effective[name].append(summaries[name]["judge_effective_n"].item())
                if name == "with zero":
                    concern = pp.judge_report(scored).filter(pl.col("concern").is_not_null())
                    named += concern["judge_model"].to_list() == ["zero"]
            below += summaries["with zero"]["judge_agreement_high"].item() < agree["steady"][-1]
            for name, model in (("steady", "steady-a"), ("noisy", "noisy")):
                scored = pp.score(
                    data, judge=judge(model), repeats=args.repeats, cache=False, progress=False
                )
                summary = pp.aggregate(scored, by=[])
                anchor = "mean_divergence_high" if args.anchor == "bound" else "mean_divergence"
                limit = min(1.0, summary[anchor].item() + args.margin)
                stable = pp.verdict_stability(scored, summary, by=[], max_mean_divergence=limit)
                value = stable["verdict_stability"].item()
                stab[name].append(value)
                spread[name].append(summary["judge_repeat_sd"].item())
                inconclusive[name] += pp.gate(stable, max_mean_divergence=limit).status == (
                    "inconclusive"
                )
    elapsed = time.perf_counter() - started
    load = os.getloadavg()
    command = "python benchmarks/bench_judge_panel.py " + shlex.join(argv or sys.argv[1:])
    print(f"command: {command.strip()}")
    print(f"{args.runs} runs of {args.groups} groups; {elapsed:.0f} s; load {load[0]:.1f} (1 min)")
    print()
    print("| panel | mean alpha | min | max | mean effective n |")
    print("| --- | --- | --- | --- | --- |")
    for name in agree:
        values = agree[name]
        print(
            f"| {name} | {statistics.mean(values):.3f} | {min(values):.3f} | {max(values):.3f} "
            f"| {statistics.mean(effective[name]):.2f} |"
        )
    print()
    print(
        f"with zero: interval's upper bound below the steady panel's alpha in {below}/"
        f"{args.runs} runs; judge_report names the always-0 judge (and only it) in "
        f"{named}/{args.runs}"
    )
    print()
    print("| judge | repeats | mean repeat sd | mean verdict_stability | min | inconclusive runs |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name in stab:
        print(
            f"| {name} | {args.repeats} | {statistics.mean(spread[name]):.3f} "
            f"| {statistics.mean(stab[name]):.3f} | {min(stab[name]):.3f} "
            f"| {inconclusive[name]}/{args.runs} |"
        )


if __name__ == "__main__":
    main()
