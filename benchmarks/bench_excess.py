"""Coverage and power of aggregate()'s excess-divergence interval on simulated clustered scores.

Each group is one prompt with ``variants`` counterfactual pairs and ``controls`` control pairs
(the counterfactual generator makes one control per group). Scores follow a beta-binomial
model on the 0-4 rubric: the group draws how noisy its prompt is, ``p_g ~ Beta`` with mean
``mu`` and a spread set so that two pairs of one group have the intra-group correlation
``icc`` (``rho_beta = icc / (4 - 3 icc)``, as in ``bench_intervals.py``); a control pair scores
``Binomial(4, p_g) / 4`` and a counterfactual pair ``Binomial(4, p_g + delta (1 - p_g)) / 4``.

- No effect (``delta = 0``): variants and controls come from the same distribution, the true
  excess is 0, and the table prints the share of 95% intervals that hold 0 (coverage).
- Effect (``delta > 0``): the true excess is ``delta (1 - mu)``; the table prints the share of
  intervals that lie above 0 (power: the excess is detected) and the share that hold the true
  excess (coverage under an effect).

Every replicate is one slice of a single ``aggregate`` call (``by=["replicate"]``).

    python benchmarks/bench_excess.py                 # 1,000 replicates per cell
    python benchmarks/bench_excess.py --reps 200 --groups 10 30
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import polars as pl

import pairwise_polars as pp


def _beta_params(mu: float, icc: float) -> tuple[float, float]:
    rho = icc / (4 - 3 * icc)
    spread = 1 / rho - 1
    return mu * spread, (1 - mu) * spread


def simulate(
    groups: int,
    mu: float,
    icc: float,
    delta: float,
    reps: int,
    variants: int,
    controls: int,
    rng: np.random.Generator,
) -> pl.DataFrame:
    """One row per scored pair: replicate, group_id, pair_kind, score."""
    if icc == 0:
        p = np.full((reps, groups), mu)
    else:
        p = rng.beta(*_beta_params(mu, icc), size=(reps, groups))
    per_group = variants + controls
    p_pairs = np.repeat(p[..., None], per_group, axis=2)
    shifted = p_pairs[..., :variants] + delta * (1 - p_pairs[..., :variants])
    p_pairs[..., :variants] = shifted
    scores = rng.binomial(4, p_pairs) / 4
    kinds = np.array(["counterfactual"] * variants + ["control"] * controls)
    return pl.DataFrame(
        {
            "metric": "pairwise-bias",
            "replicate": np.repeat(np.arange(reps), groups * per_group),
            "group_id": np.tile(np.repeat(np.arange(groups), per_group), reps),
            "pair_kind": np.tile(kinds, reps * groups),
            "score": scores.ravel(),
        }
    )


def cell(
    groups: int, mu: float, icc: float, delta: float, args: argparse.Namespace, seed: int
) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    data = simulate(groups, mu, icc, delta, args.reps, args.variants, args.controls, rng)
    summary = pp.aggregate(data, by=["replicate"])
    low, high = summary["excess_divergence_low"], summary["excess_divergence_high"]
    true = delta * (1 - mu)
    return {
        "holds_zero": float(((low <= 0) & (high >= 0)).mean()),
        "above_zero": float((low > 0).mean()),
        "holds_true": float(((low <= true + 1e-12) & (high >= true - 1e-12)).mean()),
        "width": float((high - low).mean()),
        "true": true,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--groups", type=int, nargs="+", default=[10, 30, 200])
    parser.add_argument("--icc", type=float, nargs="+", default=[0.0, 0.3, 0.6])
    parser.add_argument("--mu", type=float, nargs="+", default=[0.05, 0.2])
    parser.add_argument("--delta", type=float, default=0.15)
    parser.add_argument("--variants", type=int, default=3)
    parser.add_argument("--controls", type=int, default=1)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    started = time.perf_counter()
    print(
        f"{args.reps} replicates per cell; {args.variants} counterfactual + {args.controls} "
        f"control pair(s) per group; effect delta = {args.delta}"
    )
    print(
        "| groups | icc | mu | no effect: holds 0 | width | effect: above 0 (power) "
        "| effect: holds true excess | width |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    seed = args.seed
    for groups in args.groups:
        for icc in args.icc:
            for mu in args.mu:
                null = cell(groups, mu, icc, 0.0, args, seed)
                effect = cell(groups, mu, icc, args.delta, args, seed + 1)
                seed += 2
                print(
                    f"| {groups} | {icc} | {mu} | {null['holds_zero']:.3f} | "
                    f"{null['width']:.3f} | {effect['above_zero']:.3f} | "
                    f"{effect['holds_true']:.3f} | {effect['width']:.3f} |"
                )
    print(f"\n{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
