"""Coverage of disparities()' intervals, and false fails of its gates, on planted effects.

One crossed dimension ``gender×race`` (reference cell ``male|White``) and one plain dimension
``age`` (``old`` against ``young``), every group with a control row. Per group a latent
approval probability ``p_g ~ Uniform(lo, hi)`` and a latent offer ``base_g ~ LogNormal`` make
every response of the group correlated (the within-group correlation); each variant cell has
two rows (two names), so its two pairs share the reference. Planted, on the probability and
the amount scales:

- ``female|White``: decision rate -0.10 (an impact ratio of ``(m - 0.1) / m``);
- ``male|Black``: amount -8% (each offer ``base_g * 0.92 * exp(N(0, s))``);
- ``female|Black``: both, and a decision interaction of -0.05 (a decision rate -0.15 in all);
- ``age=old`` and the controls: no effect. Refusals: 5% everywhere, no effect.

(A relative difference of two offers with independent multiplicative noise averages
``exp(s^2) - 1`` even with no effect: 0.25% at s = 0.05, 2.3% at s = 0.15; that is the truth
the intervals must cover.)

True values are exact expectations over groups: ``E[p_b - p_a]``, ``E[p_b] / E[p_a]``,
``0.92 exp(s^2) - 1`` for an 8% cut (the two offers' noise), 0 for no effect. Each replicate is
one slice of a single ``disparities`` call (``by=("replicate", "dimension", "attribute")``).

Printed per grid cell: the coverage of every 95% interval that has a true value, and the share
of replicates where a gate FAILS on ``age=old`` (no effect), three-way (the default) and
conservative: ``max_disadvantage`` decision / amount / refusal 0.05 and ``min_impact_ratio`` 0.8.

The primary grid (10 / 30 / 200 groups; p ~ U(0.45, 0.95), s = 0.05) is the issue's; the
held-out grid (15 / 50 groups; p ~ U(0.25, 0.65), s = 0.15, one name per cell) was not looked
at while choosing the intervals.

    python benchmarks/bench_disparities.py --reps 1500
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import polars as pl

import pairwise_polars as pp
from pairwise_polars.summary._disparity_gate import disparity_checks

CELLS = {  # cell: (decision shift, amount factor)
    "female|White": (-0.10, 1.0),
    "male|Black": (0.0, 0.92),
    "female|Black": (-0.15, 0.92),  # -0.10 - 0.05: an interaction of -0.05 on decisions
}
PRIMARY = {"groups": (10, 30, 200), "p": (0.45, 0.95), "s": 0.05, "names": 2}
HELD_OUT = {"groups": (15, 50), "p": (0.25, 0.65), "s": 0.15, "names": 1}
GATES = {"decision": 0.05, "amount": 0.05, "refusal": 0.05}
SCHEMA = {
    "metric": pl.String, "slice": pl.String, "gate": pl.String, "threshold": pl.Float64,
    "observed": pl.Float64, "passed": pl.Boolean, "status": pl.String, "note": pl.String,
}  # fmt: skip


def _rows(
    draw: dict, grid: dict, rng: np.random.Generator, spec: tuple[str, str, str, float, float]
) -> pl.DataFrame:
    dimension, role, attribute, shift, factor = spec
    n = len(draw["p"])
    return pl.DataFrame({
        "replicate": draw["rep"], "group_id": np.arange(n), "dimension": dimension,
        "role": role, "attribute": attribute,
        "decision": (rng.random(n) < draw["p"] + shift).astype(float),
        "amount": draw["base"] * factor * np.exp(rng.normal(0, grid["s"], n)),
        "amount_unit": "USD", "refused": rng.random(n) < 0.05, "favourability": 0.5,
    })  # fmt: skip


def simulate(groups: int, reps: int, grid: dict, rng: np.random.Generator) -> pl.DataFrame:
    """Rows with outcome columns for ``reps`` replicates of ``groups`` groups."""
    specs = [("gender×race", "reference", "male|White", 0.0, 1.0),
             ("gender×race", "control", "male|White", 0.0, 1.0)]  # fmt: skip
    for cell, (shift, factor) in CELLS.items():
        specs += [("gender×race", "variant", cell, shift, factor)] * grid["names"]
    specs += [("age", "reference", "young", 0.0, 1.0), ("age", "control", "young", 0.0, 1.0)]
    specs += [("age", "variant", "old", 0.0, 1.0)] * grid["names"]
    frames = []
    for rep in range(reps):
        draw = {
            "rep": rep,
            "p": rng.uniform(*grid["p"], groups),
            "base": np.exp(rng.normal(math.log(80_000), 0.3, groups)),
        }
        frames += [_rows(draw, grid, rng, spec) for spec in specs]
    return (
        pl.concat(frames)
        .with_columns(group_id=pl.format("{}-{}-{}", "replicate", "dimension", "group_id"))
        .with_row_index("id")
        .with_columns(input=pl.lit("q"), output=pl.lit("a"))
    )


def truths(grid: dict) -> dict[tuple[str, str], float]:
    lo, hi = grid["p"]
    mean_p = (lo + hi) / 2
    noise = math.exp(grid["s"] ** 2)  # E[exp(e_b - e_a)], both N(0, s^2)
    out: dict[tuple[str, str], float] = {}
    for cell, (shift, factor) in CELLS.items():
        out[(cell, "decision_difference")] = shift
        out[(cell, "impact_ratio")] = (mean_p + shift) / mean_p
        out[(cell, "amount_relative")] = factor * noise - 1
        out[(cell, "refusal_difference")] = 0.0
    out[("female|Black", "decision_difference_interaction")] = -0.05
    out[("female|Black", "amount_relative_interaction")] = (
        (0.92 * noise - 1) - (noise - 1) - (0.92 * noise - 1)
    )
    for column in ("decision_difference", "amount_relative", "refusal_difference"):
        # no effect; a relative difference of two noisy offers still averages exp(s^2) - 1
        truth = noise - 1 if column == "amount_relative" else 0.0
        out[("old", column)] = truth
        out[("young", column)] = truth  # the controls
        out[("male|White", column)] = truth
    out[("old", "impact_ratio")] = 1.0
    return out


def run_cell(groups: int, reps: int, grid: dict, seed: int) -> tuple[list[dict], dict]:
    rng = np.random.default_rng(seed)
    rows = simulate(groups, reps, grid, rng)
    started = time.perf_counter()
    d = pp.disparities(rows, by=("replicate", "dimension", "attribute"))
    seconds = time.perf_counter() - started
    coverage = []
    for (attribute, column), truth in truths(grid).items():
        kind = "control" if attribute in ("young", "male|White") else "counterfactual"
        sub = d.filter((pl.col("attribute") == attribute) & (pl.col("pair_kind") == kind))
        low, high = sub[f"{column}_low"], sub[f"{column}_high"]
        hit = ((low <= truth) & (high >= truth)).fill_null(False)
        share = float(hit.mean())  # type: ignore[arg-type]
        coverage.append({"groups": groups, "attribute": attribute, "figure": column,
                         "truth": round(truth, 4), "coverage": share,
                         "mc_error": math.sqrt(max(share * (1 - share), 1e-9) / reps)})  # fmt: skip
    old = d.filter(pl.col("attribute") == "old")
    fails = {}
    for conservative in (False, True):
        checks = disparity_checks(old, min_impact_ratio=0.8, max_disadvantage=GATES,
                                  conservative=conservative, check_schema=SCHEMA,
                                  min_groups=min(groups, 30))  # fmt: skip
        for frame in checks:
            key = (frame["gate"][0], frame["metric"][0], conservative)
            fails[key] = float((frame["status"] == "fail").mean())  # type: ignore[arg-type]
    return coverage, {"groups": groups, "seconds": seconds, "fails": fails}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1500)
    parser.add_argument("--grid", choices=("primary", "held-out", "both"), default="both")
    args = parser.parse_args()
    grids = {"primary": PRIMARY, "held-out": HELD_OUT}
    chosen = grids if args.grid == "both" else {args.grid: grids[args.grid]}
    for name, grid in chosen.items():
        print(f"\n## {name} grid: p ~ U{grid['p']}, s = {grid['s']}, {grid['names']} name(s) "
              f"per cell, {args.reps} replicates per cell")  # fmt: skip
        for groups in grid["groups"]:
            coverage, gates = run_cell(groups, args.reps, grid, seed=groups)
            print(f"\n### {groups} groups (disparities over all replicates: "
                  f"{gates['seconds']:.1f} s)\n")  # fmt: skip
            print("| attribute | figure | truth | coverage | MC error |")
            print("| --- | --- | --- | --- | --- |")
            for c in coverage:
                cell = c["attribute"].replace("|", "&#124;")
                print(f"| {cell} | {c['figure']} | {c['truth']} | {c['coverage']:.3f} "
                      f"| {c['mc_error']:.3f} |")  # fmt: skip
            print("\nfalse fails on age=old (no effect): " + "; ".join(
                f"{gate} {metric}{' conservative' if cons else ''} {share:.3f}"
                for (gate, metric, cons), share in gates["fails"].items()))  # fmt: skip


if __name__ == "__main__":
    main()
