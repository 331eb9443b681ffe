"""Coverage and width of aggregate()'s prediction-powered (PPI++) intervals on simulated judges.

People's truth per pair, on the 0-4 rubric, clustered by group: the group draws how often its
pairs diverge, ``p_g ~ Beta(1.5, 8)`` (mean 0.158), and a pair is 0 with probability
``1 - p_g``, else ``1 + Binomial(3, 0.3)``. So the true mean divergence is
``0.158 * 1.9 / 4``, the true equivalence rate ``1 - 0.158`` and the true divergence rate
(raw >= 2) ``0.158 * (1 - 0.7^3)``: population values, not this draw's.

Judges, each reading the same truth:

- ``unbiased``: right about which pairs diverge, but on half of the divergent ones it reads
  the severity afresh from the same distribution (so every figure is right on average);
- ``over-2x``: calls divergence twice as often as people: every truly divergent pair as
  people do, and a share of the equivalent ones (raw 1-3), as many again on average;
- ``under``: misses half the divergent pairs (scores them 0);
- ``noise``: a uniform 0-4, whatever the truth.

Labels: ``labels`` pairs drawn by group (``labels / 2`` groups at random, two of their pairs
each), as ``sample_for_labelling`` draws them. Each cell prints, for the mean divergence and
both rates, the share of 95% intervals that hold the population value: the judge-only
("naive") interval, the prediction-powered one, and the labels alone (the package's clustered
interval on the labelled pairs' labels), with the mean widths of the last two. Every
replicate is one slice of a single ``aggregate`` call (``by=["replicate"]``).

    python benchmarks/bench_ppi.py                       # 1,000 / 400 replicates per cell
    python benchmarks/bench_ppi.py --reps 200 --pairs 2000
    python benchmarks/bench_ppi.py --pairs 20000 --labels 300 --judges noise
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import polars as pl

import pairwise_polars as pp

A, B, SEVERITY_P, PER_GROUP = 1.5, 8.0, 0.3, 4
P_MEAN = A / (A + B)
TRUTH = {
    "mean_divergence": P_MEAN * (1 + 3 * SEVERITY_P) / 4,
    "equivalence_rate": 1 - P_MEAN,
    "divergence_rate": P_MEAN * (1 - (1 - SEVERITY_P) ** 3),
}
JUDGES = ("unbiased", "over-2x", "under", "noise")
METRIC = "pairwise-bias"


def truth(rng: np.random.Generator, reps: int, groups: int) -> np.ndarray:
    p = rng.beta(A, B, size=(reps, groups, 1))
    divergent = rng.random((reps, groups, PER_GROUP)) < p
    severity = 1 + rng.binomial(3, SEVERITY_P, size=divergent.shape)
    return np.where(divergent, severity, 0)


def judge(kind: str, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    if kind == "unbiased":
        redraw = (y > 0) & (rng.random(y.shape) < 0.5)
        return np.where(redraw, 1 + rng.binomial(3, SEVERITY_P, size=y.shape), y)
    if kind == "over-2x":
        extra = rng.random(y.shape) < P_MEAN / (1 - P_MEAN)
        return np.where((y == 0) & extra, rng.integers(1, 4, size=y.shape), y)
    if kind == "under":
        return np.where(rng.random(y.shape) < 0.5, 0, y)
    return rng.integers(0, 5, size=y.shape)


def batch(
    kind: str, reps: int, pairs: int, labels: int, rng: np.random.Generator
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The scored pairs, their labels, and the labelled pairs scored by their labels."""
    groups = pairs // PER_GROUP
    y = truth(rng, reps, groups)
    f = judge(kind, y, rng)
    shape = y.shape
    replicate = np.broadcast_to(np.arange(reps)[:, None, None], shape).ravel()
    group = np.broadcast_to(np.arange(groups)[None, :, None], shape).ravel() + replicate * groups
    pair_id = np.arange(y.size)
    scored = pl.DataFrame(
        {
            "pair_id": pair_id,
            "group_id": group,
            "replicate": replicate,
            "metric": METRIC,
            "score": f.ravel() / 4,
            "raw_score": f.ravel().astype(float),
        }
    )
    chosen_groups = np.argsort(rng.random((reps, groups)), axis=1)[:, : labels // 2]
    chosen_pairs = np.argsort(rng.random((reps, labels // 2, PER_GROUP)), axis=2)[..., :2]
    ids = (
        np.arange(reps)[:, None, None] * groups * PER_GROUP
        + chosen_groups[..., None] * PER_GROUP
        + chosen_pairs
    ).ravel()
    label_rows = pl.DataFrame({"pair_id": ids, "metric": METRIC, "label": y.ravel()[ids]})
    alone = scored.filter(pl.col("pair_id").is_in(ids)).with_columns(
        score=pl.col("pair_id").replace_strict(ids, y.ravel()[ids] / 4)
    )
    return scored, label_rows, alone


def cell(kind: str, pairs: int, labels: int, reps: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    per_batch = max(1, min(reps, 400_000 // pairs))
    rows: list[pl.DataFrame] = []
    done = 0
    while done < reps:
        n = min(per_batch, reps - done)
        scored, label_rows, alone = batch(kind, n, pairs, labels, rng)
        both = pp.aggregate(scored, by=["replicate"], labels=label_rows)
        only = pp.aggregate(alone, by=["replicate"]).rename(lambda c: f"alone_{c}")
        rows.append(both.join(only, left_on="replicate", right_on="alone_replicate"))
        done += n
    result = pl.concat(rows)
    out: dict[str, float] = {}
    for name, value in TRUTH.items():
        for tag, prefix in (("naive", name), ("ppi", f"{name}_ppi"), ("alone", f"alone_{name}")):
            low, high = result[f"{prefix}_low"], result[f"{prefix}_high"]
            out[f"{name}:{tag}"] = float(((low <= value) & (value <= high)).mean() or 0.0)
            out[f"{name}:{tag}_width"] = float((high - low).mean() or 0.0)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=0, help="0: 1,000 at 2,000 pairs, else 400")
    parser.add_argument("--pairs", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--labels", type=int, nargs="+", default=[100, 300])
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--judges", nargs="+", choices=JUDGES, default=list(JUDGES))
    args = parser.parse_args()
    print("| judge | pairs | labels | reps | figure | naive cover | PPI cover | labels-alone "
          "cover | PPI width | labels-alone width | width ratio |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for pairs in args.pairs:
        for labels in args.labels:
            for index, kind in enumerate(JUDGES):
                if kind not in args.judges:  # one cell alone keeps the seed it has in the grid
                    continue
                reps = args.reps or (1000 if pairs <= 2000 else 400)
                start = time.perf_counter()
                got = cell(kind, pairs, labels, reps, args.seed + 97 * index + pairs + labels)
                for name in TRUTH:
                    ppi_w, alone_w = got[f"{name}:ppi_width"], got[f"{name}:alone_width"]
                    print(
                        f"| {kind} | {pairs:,} | {labels} | {reps} | {name} | "
                        f"{got[f'{name}:naive']:.3f} | {got[f'{name}:ppi']:.3f} | "
                        f"{got[f'{name}:alone']:.3f} | {ppi_w:.4f} | {alone_w:.4f} | "
                        f"{ppi_w / alone_w:.2f} |",
                        flush=True,
                    )
                mc = math.sqrt(0.95 * 0.05 / reps)
                print(f"<!-- {kind} {pairs} {labels}: {time.perf_counter() - start:.1f} s, "
                      f"MC error of a 0.95 coverage {mc:.3f} -->", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
