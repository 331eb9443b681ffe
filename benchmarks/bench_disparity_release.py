"""Disparities release over release: coverage of compare's paired disparity intervals, its
false alarms with nothing changed, and plan's predicted power for a disparity against the
simulated power.

Each group is one prompt with two variant pairs (two names of the attribute, sharing the
reference) and carries each side's outcomes, as a ``score_parquet`` run keeps them. A group
draws an approval probability ``p_g ~ U(0.45, 0.95)`` and a base offer ``B_g`` (log-normal);
each response decides yes with its probability and offers ``B_g * exp(N(0, 0.05))`` (the
variant times ``1 + e_g``, ``e_g ~ N(effect, 0.03)``). The new release re-draws every response
(new answers to the same prompts).

1. Coverage: before without effect, after with amount effect -0.08 and decision effect -0.10:
   the true change of ``amount_relative`` is ``-0.08 * exp(s^2)`` and of
   ``decision_difference`` -0.10; the share of runs whose ``delta`` interval holds it.
2. False alarms: nothing changed; the share of runs whose disparity row has ``p_value < 0.05``
   (one figure, unadjusted: the goal is 5%).
3. Power: one run with amount effect -0.03 (and decision -0.10), at 10, 30 and 200 groups: the
   share of runs whose ``disparities`` interval excludes 0, against ``plan``'s prediction
   (``summary._disparity_power``) from a held-out pilot (another seed, 60 groups), and the
   mean prediction over 20 such pilots (what is the model's error, what the pilot's).

    python benchmarks/bench_disparity_release.py            # the RESULTS.md figures
    python benchmarks/bench_disparity_release.py --runs 200 # quicker
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import polars as pl

import pairwise_polars as pp
from pairwise_polars.summary._disparity_power import disparity_power

NAMES, NOISE = 2, 0.05


def runs(sims: int, groups: int, amount: float, decision: float, seed: int) -> pl.DataFrame:
    """``sims`` scored runs of ``groups`` groups each (one row per pair), with outcomes."""
    rng = np.random.default_rng(seed)
    n_groups = sims * groups
    p = rng.uniform(0.45, 0.95, n_groups)
    base = np.exp(rng.normal(math.log(80_000), 0.3, n_groups))
    effect = rng.normal(amount, 0.03, n_groups)
    group = np.repeat(np.arange(n_groups), NAMES)
    reference_yes = rng.random(n_groups) < p  # one reference response per group
    reference_offer = base * np.exp(rng.normal(0, NOISE, n_groups))
    variant_yes = rng.random(group.size) < p[group] + decision
    variant_offer = base[group] * (1 + effect[group]) * np.exp(rng.normal(0, NOISE, group.size))
    return pl.DataFrame(
        {
            "sim": group // groups,
            "dimension": "gender",
            "group_id": group,
            "pair_id": np.arange(group.size),
            "pair_kind": "counterfactual",
            "attribute_a": "male",
            "attribute_b": "female",
            "metric": "pairwise-bias",
            "score": rng.uniform(0, 1, group.size),
            "decision_a": reference_yes[group].astype(float),
            "decision_b": variant_yes.astype(float),
            "amount_a": reference_offer[group],
            "amount_b": variant_offer,
            "amount_unit_a": "USD",
            "amount_unit_b": "USD",
            "refused_a": False,
            "refused_b": False,
            "favourability_a": 0.5,
            "favourability_b": 0.5,
        }
    )


def _mc(p: float, n: int) -> str:
    return f"{p:.3f} ± {math.sqrt(max(p * (1 - p), 1e-12) / n):.3f}"


def coverage(sims: int, groups: tuple[int, ...]) -> None:
    truth = {"amount_relative": -0.08 * math.exp(NOISE**2), "decision_difference": -0.10}
    print("\ncompare: coverage of the paired 95% interval of a disparity's change, and runs "
          "with p < 0.05 when nothing changed (± MC s.e.)")  # fmt: skip
    print("| groups | runs | figure | true change | coverage | false alarms, nothing changed |")
    print("| --- | --- | --- | --- | --- | --- |")
    for g in groups:
        before = runs(sims, g, 0.0, 0.0, seed=10 + g)
        after = runs(sims, g, -0.08, -0.10, seed=20 + g)
        same = runs(sims, g, 0.0, 0.0, seed=30 + g)
        moved = pp.compare(before, after, by=("sim", "dimension"), adjust=None)
        still = pp.compare(before, same, by=("sim", "dimension"), adjust=None)
        for figure, true in truth.items():
            rows = moved.filter(pl.col("figure") == figure)
            held = ((rows["delta_low"] <= true) & (rows["delta_high"] >= true)).mean()
            quiet = still.filter(pl.col("figure") == figure)
            alarms = (quiet["p_value"] < 0.05).mean()
            print(f"| {g} | {rows.height} | `{figure}` | {true:.4f} | "
                  f"{_mc(float(held), rows.height)} | {_mc(float(alarms), quiet.height)} |")  # type: ignore[arg-type]  # fmt: skip


def power(sims: int, groups: tuple[int, ...], pilots: int) -> None:
    # held out: other seeds, never tuned on; the first alone, and the mean over ``pilots``
    pilot_runs = [runs(1, 60, -0.03, -0.10, seed=777 + i).drop("sim") for i in range(pilots)]
    truth = {"amount_relative": (1 - 0.03) * math.exp(NOISE**2) - 1, "decision_difference": -0.10}
    print("\nplan's predicted power for a disparity against simulated power (interval "
          "excludes 0); the prediction from one 60-group pilot, and the mean [range] over "
          f"{pilots}")  # fmt: skip
    print("| groups | figure | true disparity | runs | simulated power | one pilot "
          "| difference, points | mean of pilots [range] | difference, points |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for g in groups:
        run = runs(sims, g, -0.03, -0.10, seed=40 + g)
        figures = pp.disparities(run, by=("sim", "dimension", "attribute"))
        planned = run.filter(pl.col("sim") == 0).drop("sim")
        for figure, true in truth.items():
            excludes = (figures[f"{figure}_high"] < 0) | (figures[f"{figure}_low"] > 0)
            simulated = float(excludes.mean())  # type: ignore[arg-type]
            predicted = []
            for pilot in pilot_runs:
                rows = disparity_power(planned, ["dimension"], "group_id", pilot.lazy(),
                                       detect=abs(true))  # fmt: skip
                predicted.append(next(r.power for r in rows if r.figure == figure) or 0.0)
            one, mean = predicted[0], sum(predicted) / len(predicted)
            print(f"| {g} | `{figure}` | {true:.4f} | {sims} | {_mc(simulated, sims)} | "
                  f"{one:.3f} | {100 * (one - simulated):+.1f} | {mean:.3f} "
                  f"[{min(predicted):.3f}, {max(predicted):.3f}] | "
                  f"{100 * (mean - simulated):+.1f} |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000, help="runs per cell")
    parser.add_argument("--groups", type=int, nargs="+", default=[10, 30, 200])
    parser.add_argument("--pilots", type=int, default=20, help="held-out pilots averaged")
    args = parser.parse_args()
    started = time.perf_counter()
    coverage(args.runs, tuple(args.groups))
    power(args.runs, tuple(args.groups), args.pilots)
    print(f"\n{time.perf_counter() - started:.0f} s in all")


if __name__ == "__main__":
    main()
