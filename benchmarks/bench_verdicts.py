"""What the three-way verdict decides on simulated clustered scores, beside the readings it
replaces, and what the duplicate-judgement check costs ``aggregate``.

Verdicts: a ``max_mean_divergence`` gate at 0.2 over slices whose true mean divergence is
below, at or above it. Scores follow the beta-binomial model of ``bench_intervals.py`` (each
group draws ``p_g ~ Beta`` with mean ``mu``; each of its pairs scores ``Binomial(4, p_g) / 4``;
intra-group correlation 0.3; 3 pairs per group). Every replicate is a slice of one
``aggregate`` call. For each cell the table gives the share of replicates that pass, fail and
are inconclusive under three readings of the same summaries:

- ``point``: the estimate against the threshold (the default before issue 23);
- ``one-sided``: ``conservative=True`` (fail when the upper bound is beyond; with
  ``min_groups``);
- ``three-way``: the default now.

A false pass is a pass where the true mean is above the threshold; a false fail a fail where it
is below. Failed judgements: the same design with 5% of judgements lost, chosen among the most
divergent pairs (the hard case for a gate), under ``errors_as="worst"`` and ``"ignore"``.

Cost: ``aggregate`` of a scored frame with unique ``pair_id`` per row, with the duplicate check
(``aggregate``) and without (``aggregate_checked``, the same sums), median of 5 in one process.

    python benchmarks/bench_verdicts.py                     # 400 replicates per cell, 1M rows
    python benchmarks/bench_verdicts.py --reps 200 --rows 500000
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np
import polars as pl

import pairwise_polars as pp
from pairwise_polars.summary._aggregate import aggregate_checked

THRESHOLD = 0.2
ICC = 0.3
PAIRS = 3
GROUPS = (10, 30, 100)
MUS = (0.10, 0.15, 0.20, 0.25, 0.30)


def simulate(groups: int, mu: float, reps: int, rng: np.random.Generator) -> pl.DataFrame:
    """``reps`` replicates (column ``replicate``) of ``groups`` groups of ``PAIRS`` pairs."""
    rho = ICC / (4 - 3 * ICC)
    strength = (1 - rho) / rho
    p = rng.beta(mu * strength, (1 - mu) * strength, size=(reps, groups))
    raw = rng.binomial(4, np.repeat(p[:, :, None], PAIRS, axis=2))
    n = reps * groups * PAIRS
    replicate = np.repeat(np.arange(reps), groups * PAIRS)
    group = np.tile(np.repeat(np.arange(groups), PAIRS), reps)
    return pl.DataFrame(
        {
            "pair_id": np.arange(n),
            "replicate": replicate,
            "group_id": replicate * groups + group,
            "metric": "pairwise-bias",
            "score": raw.reshape(-1) / 4,
            "error": pl.Series([None] * n, dtype=pl.String),
        }
    )


def lose_divergent(scored: pl.DataFrame, share: float) -> pl.DataFrame:
    """``share`` of each replicate's judgements lost, the most divergent first."""
    rank = pl.col("score").rank("ordinal", descending=True).over("replicate")
    size = pl.len().over("replicate")
    lost = rank <= (size * share).ceil()
    return scored.with_columns(
        score=pl.when(lost).then(None).otherwise(pl.col("score")),
        error=pl.when(lost).then(pl.lit("timeout")).otherwise(pl.col("error")),
    )


def shares(summary: pl.DataFrame, **options: object) -> tuple[float, float, float]:
    checks = pp.gate(
        summary, per=["replicate"], max_mean_divergence=THRESHOLD, max_error_rate=None, **options
    ).checks  # type: ignore[arg-type]
    statuses = checks["status"].value_counts()
    counts = dict(zip(statuses["status"], statuses["count"], strict=True))
    total = checks.height
    return tuple(counts.get(s, 0) / total for s in ("pass", "fail", "inconclusive"))  # type: ignore[return-value]


def point_shares(summary: pl.DataFrame) -> tuple[float, float, float]:
    passed = (summary["mean_divergence"] <= THRESHOLD).mean()
    return float(passed), 1 - float(passed), 0.0  # type: ignore[arg-type]


def verdicts(reps: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    print(f"### Verdicts: max_mean_divergence {THRESHOLD}, {reps} replicates per cell")
    print()
    print("| groups | true mean | point pass / fail | one-sided pass / fail / inc. | "
          "three-way pass / fail / inc. |")  # fmt: skip
    print("| ---: | ---: | --- | --- | --- |")
    for groups in GROUPS:
        for mu in MUS:
            summary = pp.aggregate(simulate(groups, mu, reps, rng), by=["replicate"])
            point = point_shares(summary)
            one = shares(summary, conservative=True)
            three = shares(summary)
            print(
                f"| {groups} | {mu:.2f} | {point[0]:.3f} / {point[1]:.3f} | "
                f"{one[0]:.3f} / {one[1]:.3f} / {one[2]:.3f} | "
                f"{three[0]:.3f} / {three[1]:.3f} / {three[2]:.3f} |"
            )
    print()
    print("### 5% of judgements lost, the most divergent first (three-way)")
    print()
    print("| groups | true mean | errors_as=worst pass / fail / inc. | "
          "errors_as=ignore pass / fail / inc. |")  # fmt: skip
    print("| ---: | ---: | --- | --- |")
    for groups in GROUPS:
        for mu in (0.15, 0.20, 0.25):
            scored = lose_divergent(simulate(groups, mu, reps, rng), 0.05)
            summary = pp.aggregate(scored, by=["replicate"])
            worst = shares(summary)
            ignored = shares(summary, errors_as="ignore")
            print(
                f"| {groups} | {mu:.2f} | {worst[0]:.3f} / {worst[1]:.3f} / {worst[2]:.3f} | "
                f"{ignored[0]:.3f} / {ignored[1]:.3f} / {ignored[2]:.3f} |"
            )
    print()


def cost(rows: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    groups = rows // PAIRS
    scored = (
        simulate(groups, 0.2, 1, rng)
        .drop("replicate")
        .with_columns(dimension=pl.col("group_id") % 7)
    )
    options = {
        "equivalence_threshold": 0.0,
        "divergence_threshold": 0.5,
        "confidence": 0.95,
        "group_by": "group_id",
    }
    timings: dict[str, list[float]] = {"with the check": [], "without": []}
    for _ in range(5):
        for name in timings:
            start = time.perf_counter()
            if name == "without":
                aggregate_checked(scored.lazy(), ["dimension"], **options)
            else:
                pp.aggregate(scored, by=["dimension"])
            timings[name].append(time.perf_counter() - start)
    base = statistics.median(timings["without"])
    print(f"### aggregate of {rows:,} scored rows by dimension, median of 5")
    print()
    print("| | seconds | ratio |")
    print("| --- | ---: | ---: |")
    for name, values in timings.items():
        median = statistics.median(values)
        print(f"| {name} | {median:.3f} | {median / base:.2f}x |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=23)
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pp.ThresholdWarning)
        verdicts(args.reps, args.seed)
    cost(args.rows, args.seed)


if __name__ == "__main__":
    main()
