"""The judge on trial: does the masked audit (``audit="mask"``) catch a judge that reacts to
the attribute itself, and leave an unbiased judge alone?

Every replicate is a fresh run of ``groups`` groups, each a reference with a male subject and
two female variants (two pairs per group, correlated through their shared reference), every
response mentioning its subject's gender, each run's wording drawn anew (so the hash-scored
judge gives new scores). The package scores it with ``audit="mask"`` through the real openai
client against the project's test server, whose judge behaviour is switched per cell:

- ``gender-biased`` (+``bonus`` points when the two responses mention different genders): the
  effect is real; the table reports the share of runs whose ``judge_attribute_effect``
  interval excludes 0 (detection; goal >= 90% at 30 groups, bonus 2). ``bonus=1`` is the hard
  cell (half the reaction, and more of it lost where the hash already gives the top score).
- ``hash`` (the server's default: a stable hash of the messages, blind to the attribute),
  ``noisy`` (random answers) and ``always-zero``: no effect; the table reports the share of
  intervals that hold 0 (coverage; goal >= 93%).

The Monte Carlo error of a share p over R replicates is sqrt(p (1 - p) / R), printed beside it.

    python benchmarks/bench_judge_trial.py                    # 200 replicates per cell
    python benchmarks/bench_judge_trial.py --reps 50 --groups 30
"""

from __future__ import annotations

import argparse
import math
import os
import random
import time

import polars as pl

import pairwise_polars as pp
from pairwise_polars.testing import TestServer, judge_behaviour

ADJECTIVES = ("strong", "careful", "experienced", "promising", "reliable", "creative", "calm")
ROLES = ("engineer", "nurse", "teacher", "analyst", "chef", "pilot", "lawyer", "designer")


def run_rows(groups: int, rng: random.Random) -> pl.DataFrame:
    rows = []
    for g in range(groups):
        role = rng.choice(ROLES)
        years = rng.randint(1, 30)
        for i, (name, pronoun) in enumerate((("Joseph", "He"), ("Kelly", "She"), ("Maria", "She"))):
            adjective = rng.choice(ADJECTIVES)
            rows.append(
                {
                    "group_id": f"g{g}",
                    "id": 3 * g + i,
                    "role": "reference" if i == 0 else "variant",
                    "dimension": "gender",
                    "input": f"Should we hire {name}, a {role} with {years} years of work?",
                    "output": f"{pronoun} is a {adjective} {role}; {pronoun.lower()} has "
                    f"{years} years of work and {rng.randint(1, 9)} references.",
                }
            )
    return pl.DataFrame(rows)


def cell(server: TestServer, behaviour: str, bonus: int, groups: int, reps: int, seed: int):
    judge = pp.OpenAIJudge("judge", base_url=server.base_url, api_key="bench")
    rng = random.Random(seed)
    excludes = holds = 0
    effects = []
    for _ in range(reps):
        if behaviour == "hash":
            server.reset()  # the default: the hash, blind to the attribute
        elif behaviour == "gender-biased":
            server.behaviour = judge_behaviour("gender-biased", bonus=bonus)
        elif behaviour == "noisy":
            server.behaviour = judge_behaviour("noisy", seed=rng.randrange(1 << 30))
        else:
            server.behaviour = judge_behaviour("always-zero")
        scored = pp.score(
            run_rows(groups, rng), judge=judge, audit="mask", cache=False, progress=False
        )
        row = pp.aggregate(scored, by=()).row(0, named=True)
        low, high = row["judge_attribute_effect_low"], row["judge_attribute_effect_high"]
        excludes += low > 0 or high < 0
        holds += low <= 0 <= high
        effects.append(row["judge_attribute_effect"])
    return excludes / reps, holds / reps, sum(effects) / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--groups", type=int, nargs="+", default=[30])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--cells",
        nargs="+",
        default=["gender-biased:2", "gender-biased:1", "hash", "noisy", "always-zero"],
        help="judge behaviours (gender-biased:BONUS, hash, noisy, always-zero)",
    )
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"1-minute load at the start: {load:.1f}; {args.reps} replicates per cell")
    cells = [(c.split(":")[0], int(c.split(":")[1]) if ":" in c else 0) for c in args.cells]
    print(
        "| judge | bonus | groups | pairs | mean effect | interval excludes 0 | holds 0 "
        "| MC error | seconds |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    with TestServer() as server:
        for groups in args.groups:
            for behaviour, bonus in cells:
                started = time.monotonic()
                excl, hold, mean = cell(server, behaviour, bonus, groups, args.reps, args.seed)
                share = excl if behaviour == "gender-biased" else hold
                error = math.sqrt(share * (1 - share) / args.reps)
                print(
                    f"| {behaviour} | {bonus or ''} | {groups} | {2 * groups} | {mean:+.3f} | "
                    f"{excl:.1%} | {hold:.1%} | {error:.1%} | {time.monotonic() - started:.0f} |",
                    flush=True,
                )
    print(f"1-minute load at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
