"""Release over release: false alarms and detection of pp.compare / pp.gate_compare over many
slices, and plan()'s predicted power against simulated power.

Each group is one prompt with three counterfactual pairs and one control pair, judged on a
0-10 rubric (scores in steps of 0.1). A group draws its prompt's level ``L_g ~ U(0.2, 0.5)`` and
its own excess ``e_g ~ N(0.05, 0.03)``; a control pair scores ``N(L_g, 0.15)``, a counterfactual
pair ``N(L_g + e_g, 0.15)``, clipped to [0, 1] and rounded to the rubric. The new release
re-draws every pair's noise (new responses to the same prompts); a planted regression adds
``delta`` to the counterfactual pairs of one slice, so its excess divergence rises by about
``delta`` (the exact rise after rounding and clipping is printed: "true").

1. False alarms: 20 slices, nothing changed. A run raises a false alarm when ``compare`` calls
   any slice's figure "worse" or "better" (``adjust=None``, ``"bh"``, ``"holm"``: p-values
   adjusted over the run's 20 slices x 4 figures), and when ``gate_compare`` (allowance 0:
   any evidence of a regression fails) fails any slice (``familywise=None`` / ``"holm"``).
2. Detection: the same with a regression planted in one slice, at 10, 30 and 200 groups per
   slice: the share of runs where that slice is called worse, and where its gate fails.
3. Power: one slice of one run with a true excess, at 10, 30 and 200 groups: the share of runs
   whose excess interval lies above 0 (``aggregate``), against ``plan``'s prediction
   (``summary.slice_power``) from a held-out pilot run (another seed, 60 groups).
4. Family-wise fairness gates: ``gate(max_excess_divergence=T, familywise=...)`` over 20 slices
   whose true excess is exactly ``T`` (nothing wrong, at its worst): runs that fail any slice.

All runs of a cell are slices of one ``compare`` / ``aggregate`` call (``by=["sim", ...]``).

    python benchmarks/bench_release.py                      # the RESULTS.md figures
    python benchmarks/bench_release.py --runs 200 --power-runs 400   # quicker
    python benchmarks/bench_release.py --parts family                # the fourth part only
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import polars as pl

import pairwise_polars as pp
from pairwise_polars.summary import slice_power
from pairwise_polars.summary._adjust import adjusted

PAIRS, CONTROLS, NOISE = 3, 1, 0.15


def _levels(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    return rng.uniform(0.2, 0.5, n), rng.normal(0.05, 0.03, n)


def _scores(rng: np.random.Generator, mean: np.ndarray) -> np.ndarray:
    raw = np.clip(rng.normal(mean, NOISE), 0.0, 1.0)
    return np.round(raw * 10) / 10


def runs(
    sims: int, slices: int, groups: int, delta: float, seed: int, *, after: bool = True
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(before, after) of ``sims`` simulated runs, ``delta`` planted in slice 0 of the after."""
    rng = np.random.default_rng(seed)
    n_groups = sims * slices * groups
    level, excess = _levels(rng, n_groups)
    per = PAIRS + CONTROLS
    group = np.repeat(np.arange(n_groups), per)
    control = np.tile(np.array([False] * PAIRS + [True] * CONTROLS), n_groups)
    mean = level[group] + np.where(control, 0.0, excess[group])
    slice_of = (group // groups) % slices
    frame = pl.DataFrame(
        {
            "sim": group // (slices * groups),
            "dimension": slice_of,
            "group_id": group,
            "pair_id": np.arange(group.size),
            "pair_kind": np.where(control, "control", "counterfactual"),
        }
    ).with_columns(metric=pl.lit("pairwise-bias"), error=pl.lit(None, pl.String))
    before = frame.with_columns(score=pl.Series(_scores(rng, mean)))
    shifted = mean + np.where((slice_of == 0) & ~control, delta, 0.0)
    return before, frame.with_columns(score=pl.Series(_scores(rng, shifted)))


def true_rise(delta: float) -> float:
    """The planted regression's true rise of the excess divergence (rounding and clipping)."""
    rng = np.random.default_rng(99)
    level, excess = _levels(rng, 2_000_000)
    base = _scores(rng, level + excess) - _scores(rng, level)
    moved = _scores(rng, level + excess + delta) - _scores(rng, level)
    return float(moved.mean() - base.mean())


def _per_run(comparison: pl.DataFrame, sims: int, figure: str | None = None) -> dict[str, float]:
    """Share of runs with an alarm (any row, or slice 0's ``figure``) per adjustment."""
    out = {}
    for name, adjust in (("none", None), ("bh", "bh"), ("holm", "holm")):
        hits = 0
        for _, rows in comparison.group_by("sim"):
            p = adjusted(rows["p_value"], adjust)  # type: ignore[arg-type]
            flagged = rows.with_columns(p=p).filter(pl.col("p") < 0.05)
            if figure is not None:
                worse = pl.col("delta") > 0
                flagged = flagged.filter(
                    (pl.col("dimension") == 0) & (pl.col("figure") == figure) & worse
                )
            hits += not flagged.is_empty()
        out[name] = hits / sims
    return out


def _gate_fails(comparison: pl.DataFrame, sims: int, *, planted_only: bool) -> dict[str, float]:
    out = {}
    for name, familywise in (("none", None), ("holm", "holm")):
        hits = 0
        for _, rows in comparison.group_by("sim"):
            result = pp.gate_compare(rows.drop("sim"), 0.0, familywise=familywise, min_groups=2)
            failed = result.checks.filter(pl.col("status") == "fail")
            if planted_only:
                failed = failed.filter(pl.col("slice") == "dimension=0")
            hits += not failed.is_empty()
        out[name] = hits / sims
    return out


def _mc(p: float, n: int) -> str:
    return f"{100 * p:.1f} ± {100 * math.sqrt(max(p * (1 - p), 1e-12) / n):.1f}"


def false_alarms(sims: int, groups: int) -> None:
    before, after = runs(sims, 20, groups, 0.0, seed=1)
    start = time.perf_counter()
    comparison = pp.compare(before, after, by=("sim", "dimension"), adjust=None)
    took = time.perf_counter() - start
    alarms = _per_run(comparison, sims)
    gates = _gate_fails(comparison, sims, planted_only=False)
    print(f"\n20 slices x {groups} groups, no change, {sims} runs (compare of "
          f"{before.height:,} pairs per run set: {took:.1f} s)")  # fmt: skip
    print("| decision | adjustment | runs with any false alarm, % (± MC s.e.) |")
    print("| --- | --- | --- |")
    for name, value in alarms.items():
        print(f"| compare: any figure called worse or better | {name} | {_mc(value, sims)} |")
    for name, value in gates.items():
        print(f"| gate_compare(max_regression=0): any slice fails | {name} | {_mc(value, sims)} |")


def detection(sims: int, groups: tuple[int, ...], deltas: tuple[float, ...]) -> None:
    print("\nA regression planted in 1 of 20 slices: share of runs that catch it, % (± MC s.e.)")
    print("| groups per slice | planted delta | true rise of the excess | runs | compare worse, "
          "none | compare worse, holm | gate fails, none | gate fails, holm |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for g in groups:
        n = sims if g < 200 else max(sims // 2, 50)
        for d in deltas:
            before, after = runs(n, 20, g, d, seed=int(1000 * d) + g)
            comparison = pp.compare(before, after, by=("sim", "dimension"), adjust=None)
            worse = _per_run(comparison, n, figure="excess_divergence")
            gates = _gate_fails(comparison, n, planted_only=True)
            cells = [
                _mc(v, n) for v in (worse["none"], worse["holm"], gates["none"], gates["holm"])
            ]
            print(f"| {g} | {d} | {true_rise(d):.3f} | {n} | " + " | ".join(cells) + " |")


def power(sims: int, groups: tuple[int, ...], deltas: tuple[float, ...]) -> None:
    pilot, _ = runs(1, 1, 60, 0.0, seed=777)  # held out: another seed, never tuned on
    print("\nplan's predicted power against simulated power (one slice, excess divergence)")
    print("| groups | true excess | runs | simulated power, % (± MC s.e.) | plan's prediction, % "
          "| difference, points |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- |")
    for g in groups:
        for d in deltas:
            # a run whose groups' excess is e_g - 0.05 + d: a true excess of about d
            _, run = runs(sims, 1, g, d - 0.05, seed=31 * g + int(100 * d))
            true = true_rise(d - 0.05) + 0.05 + _bias()
            summary = pp.aggregate(run, by=["sim"])
            simulated = float((summary["excess_divergence_low"] > 0).mean())  # type: ignore[arg-type]
            planned = run.filter(pl.col("sim") == 0)
            row = slice_power(planned, ["pairwise-bias"], ["dimension"], "group_id",
                              detect=true, pilot=pilot.lazy())[0]  # fmt: skip
            predicted = row.power or 0.0
            print(f"| {g} | {true:.3f} | {sims} | {_mc(simulated, sims)} | {100 * predicted:.1f} "
                  f"| {100 * (predicted - simulated):+.1f} |")  # fmt: skip


def fairness_family(sims: int, groups: tuple[int, ...]) -> None:
    """gate(max_excess_divergence=T, familywise=...) over 20 slices whose true excess is T
    exactly (the worst case of nothing wrong): the share of runs that fail any slice."""
    true = 0.05 + _bias()
    print(f"\nFairness gates over 20 slices, true excess {true:.4f} = the threshold everywhere: "
          "share of runs that fail any slice, % (± MC s.e.)")  # fmt: skip
    print("| groups per slice | runs | familywise none | holm | bh |")
    print("| --- | --- | --- | --- | --- |")
    for g in groups:
        n = sims if g < 200 else max(sims // 2, 50)
        run, _ = runs(n, 20, g, 0.0, seed=4242 + g, after=False)
        summary = pp.aggregate(run, by=["sim", "dimension"])
        cells = []
        for familywise in ("none", "holm", "bh"):
            failed = 0
            for _, rows in summary.group_by("sim"):
                result = pp.gate(rows.drop("sim"), max_excess_divergence=true,
                                 familywise=familywise, max_error_rate=None)  # fmt: skip
                failed += not result.checks.filter(pl.col("status") == "fail").is_empty()
            cells.append(_mc(failed / n, n))
        print(f"| {g} | {n} | " + " | ".join(cells) + " |")


def _bias() -> float:
    """The excess a run with e_g ~ N(0.05, ...) shows once rounded and clipped, minus 0.05."""
    rng = np.random.default_rng(5)
    level, excess = _levels(rng, 2_000_000)
    return float((_scores(rng, level + excess) - _scores(rng, level)).mean()) - 0.05


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs", type=int, default=1000, help="runs per false-alarm / detection cell"
    )
    parser.add_argument("--power-runs", type=int, default=1000)
    parser.add_argument("--groups", type=int, nargs="+", default=[10, 30, 200])
    parser.add_argument("--deltas", type=float, nargs="+", default=[0.05, 0.10])
    parts = ("false-alarms", "detection", "power", "family")
    parser.add_argument("--parts", nargs="+", choices=parts, default=list(parts))
    args = parser.parse_args()
    started = time.perf_counter()
    if "false-alarms" in args.parts:
        false_alarms(args.runs, 30)
    if "detection" in args.parts:
        detection(args.runs // 2, tuple(args.groups), tuple(args.deltas))
    if "power" in args.parts:
        power(args.power_runs, tuple(args.groups), tuple(args.deltas))
    if "family" in args.parts:
        fairness_family(args.runs, tuple(args.groups))
    print(f"\n{time.perf_counter() - started:.0f} s in all")


if __name__ == "__main__":
    main()
