"""Coverage of disparities()'s corrected (prediction-powered) decision difference on simulated
readers of the outcomes.

Each group is one request asked for a reference and a variant; the group draws a shift
``e ~ U(-0.2, 0.2)`` and people would read a yes with probability ``0.7 + e`` (reference) and
``0.6 + e`` (variant): the population decision difference is -0.1 exactly. Readers ("judges")
of the outcomes, each seeing the same truth:

- ``biased``: reads the variant's yes as a no 30% of the time (the judge's figure is -0.28);
- ``noisy``: flips either side's reading 20% of the time (unbiased in difference, noisier);
- ``blind``: reads every response as a yes (figure 0: sees no disparity at all).

People label ``labels`` groups drawn at random (their one pair). Each cell prints the share of
95% intervals holding -0.1: the judge-only interval, the corrected one, and the labels alone
(the disparities of the labelled groups read as people read them), with mean widths. Every
replicate is one slice of a single ``disparities`` call (``by=["replicate"]``).

    python benchmarks/bench_disparity_ppi.py                 # 400 replicates per cell
    python benchmarks/bench_disparity_ppi.py --reps 100 --labels 50
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import polars as pl

import pairwise_polars as pp

TRUTH = -0.1
READERS = ("biased", "noisy", "blind")


def read(kind: str, yes: np.ndarray, side: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "biased":
        return yes & ~((side == 1) & (rng.random(yes.shape) < 0.3))
    if kind == "noisy":
        return yes ^ (rng.random(yes.shape) < 0.2)
    return np.ones_like(yes)


def rows(
    kind: str, reps: int, groups: int, rng: np.random.Generator
) -> tuple[pl.DataFrame, np.ndarray]:
    shift = rng.uniform(-0.2, 0.2, size=(reps, groups, 1))
    truth = rng.random((reps, groups, 2)) < np.array([0.7, 0.6]) + shift
    judged = np.stack([read(kind, truth[..., s], s, rng) for s in (0, 1)], axis=-1)
    n = reps * groups
    frame = pl.DataFrame({
        "group_id": np.repeat(np.arange(n), 2),
        "replicate": np.repeat(np.arange(reps), 2 * groups),
        "role": np.tile(["reference", "variant"], n),
        "dimension": "gender",
        "attribute": np.tile(["male", "female"], n),
        "input": "Approve the loan?",
        "output": "-",
        "decision": judged.reshape(-1).astype(float),
        "amount": None, "amount_unit": None, "refused": False, "favourability": None,
    })  # fmt: skip
    return frame, truth.reshape(n, 2)


def cell(kind: str, groups: int, labels: int, reps: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    frame, truth = rows(kind, reps, groups, rng)
    chosen = np.argsort(rng.random((reps, groups)), axis=1)[:, :labels]
    chosen = (chosen + np.arange(reps)[:, None] * groups).ravel()
    pairs = pp.form_pairs(frame).select("pair_id", "group_id").sort("group_id")
    label_rows = pl.DataFrame({
        "pair_id": pairs["pair_id"].gather(chosen), "metric": "decision",
        "label_a": truth[chosen, 0].astype(int), "label_b": truth[chosen, 1].astype(int),
    })  # fmt: skip
    both = pp.disparities(frame, by=["replicate"], labels=label_rows)
    people = frame.filter(pl.col("group_id").is_in(chosen)).with_columns(
        decision=pl.Series(truth[np.sort(chosen)].reshape(-1).astype(float))
    )
    alone = pp.disparities(people, by=["replicate"])
    out: dict[str, float] = {}
    for tag, result, prefix in (
        ("naive", both, "decision_difference"),
        ("ppi", both, "decision_difference_ppi"),
        ("alone", alone, "decision_difference"),
    ):
        result = result.filter(pl.col("pair_kind") == "counterfactual")
        low, high = result[f"{prefix}_low"], result[f"{prefix}_high"]
        out[tag] = float(((low <= TRUTH) & (high >= TRUTH)).mean() or 0.0)
        out[f"{tag}_width"] = float((high - low).mean() or 0.0)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--groups", type=int, default=400)
    parser.add_argument("--labels", type=int, nargs="+", default=[50, 100])
    parser.add_argument("--seed", type=int, default=2626)
    args = parser.parse_args()
    print("| reader | groups | labelled groups | reps | naive cover | PPI cover | labels-alone "
          "cover | PPI width | labels-alone width | width ratio |")  # fmt: skip
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for labels in args.labels:
        for index, kind in enumerate(READERS):
            start = time.perf_counter()
            got = cell(kind, args.groups, labels, args.reps, args.seed + 31 * index + labels)
            print(
                f"| {kind} | {args.groups} | {labels} | {args.reps} | {got['naive']:.3f} | "
                f"{got['ppi']:.3f} | {got['alone']:.3f} | {got['ppi_width']:.4f} | "
                f"{got['alone_width']:.4f} | {got['ppi_width'] / got['alone_width']:.2f} |",
                flush=True,
            )
            mc = math.sqrt(0.95 * 0.05 / args.reps)
            print(f"<!-- {kind} {labels}: {time.perf_counter() - start:.1f} s, MC error "
                  f"{mc:.3f} -->", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
