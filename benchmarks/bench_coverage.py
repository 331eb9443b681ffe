"""Coverage and width of aggregate()'s intervals on the wide grid of issue 23.

Each cell simulates ``--reps`` replicates of one design at once (numpy over replicates and
groups), reduces them to the per-group sums of ``group_sums`` and hands all replicates to the
package's own :func:`~pairwise_polars.summary._aggregate.combine`, the replicate id being a
slice key: the bounds are exactly those ``aggregate`` gives.

Scores: a group draws a propensity ``p_g ~ Beta`` with mean ``mu``, spread so that two pairs of
one group have the intra-group correlation ``icc``; a *rubric* pair scores ``Binomial(4,
p_g) / 4``, a *continuous* pair ``Beta(4 p_g, 4 (1 - p_g))``. Sizes: every group 1, 3 or 10
pairs, or alternating 1 and 20. True values: ``mu`` for the mean, ``P(score = 0)`` and
``P(score >= 0.5)`` for the rates (the continuous model has no equivalence rate).

The excess: each group has counterfactual and control pairs (1:1, 3:1, 5:1, or unequal:
counterfactual 1 or 10 alternating, control 3 or 1 alternating); a control pair scores from
``p_g``, a counterfactual one from ``p_g + delta_g (1 - p_g)`` with ``delta_g = 0`` (no effect),
0.1 in every group (uniform) or 0.5 in the first 20% of groups (an effect in a few groups).

Competitors, from the same sums: the cluster-robust t (CR1, ``G - 1`` degrees of freedom) and
CR2 with Bell-McCaffrey degrees of freedom (Wald intervals, clipped to the range). The table
counts cells under 0.90 / 0.93 and the lowest coverage per number of groups; widths are the
median over cells of the package's mean width over that of the narrowest competitor that covers
(>= 0.93 at 30+ groups, >= 0.90 below). Null bounds (inconclusive by design) are counted apart.

    python benchmarks/bench_coverage.py --grid primary --reps 400
    python benchmarks/bench_coverage.py --grid held-out --reps 400
"""

from __future__ import annotations

import argparse
import math
import time

import _competitors as rivals
import numpy as np
import polars as pl

from pairwise_polars.summary._aggregate import combine
from pairwise_polars.summary._sums import SUM_COLUMNS

GRIDS = {
    "primary": {
        "groups": (5, 10, 30, 200),
        "sizes": ("1", "3", "10", "1/20"),
        "icc": (0.0, 0.3, 0.8),
        "mu": (0.01, 0.05, 0.2, 0.5, 0.8, 0.95, 0.99),
        "excess_mu": (0.05, 0.3),
        "designs": ("1:1", "3:1", "5:1", "unequal"),
    },
    "held-out": {
        "groups": (8, 20, 60),
        "sizes": ("2", "5", "1/8"),
        "icc": (0.15, 0.5),
        "mu": (0.02, 0.1, 0.35, 0.65, 0.9),
        "excess_mu": (0.1, 0.5),
        "designs": ("2:1", "1:1", "unequal"),
    },
}
KINDS = ("rubric", "continuous")
EFFECTS = {"none": 0.0, "uniform": 0.1, "20%": 0.5}
STATS = ("equivalence_rate", "divergence_rate", "mean_divergence")


def target(groups: int) -> float:
    return 0.93 if groups >= 30 else 0.90


def sizes_of(design: str, groups: int) -> np.ndarray:
    if "/" in design:
        a, b = (int(x) for x in design.split("/"))
        return np.where(np.arange(groups) % 2 == 0, a, b)
    return np.full(groups, int(design))


def propensity(mu: float, icc: float, kind: str, shape: tuple[int, ...], rng) -> np.ndarray:
    if icc == 0:
        return np.full(shape, mu)
    rho = icc / (4 - 3 * icc) if kind == "rubric" else icc / (5 - 4 * icc)
    spread = 1 / rho - 1
    return np.clip(rng.beta(mu * spread, (1 - mu) * spread, size=shape), 1e-9, 1 - 1e-9)


def group_scores(p: np.ndarray, n: np.ndarray, kind: str, rng) -> dict[str, np.ndarray]:
    """Per (replicate, group) count, hits and sums of ``n[g]`` pairs scored from ``p``."""
    counts = np.broadcast_to(n, p.shape)
    if kind == "rubric":
        k = np.arange(5)
        binom = np.array([math.comb(4, int(i)) for i in k])
        pvals = binom * p[..., None] ** k * (1 - p[..., None]) ** (4 - k)
        pvals /= pvals.sum(axis=-1, keepdims=True)
        drawn = rng.multinomial(counts, pvals)
        scores = k / 4
        return {
            "n": counts.astype(np.int64),
            "eq": drawn[..., 0],
            "div": drawn[..., 2:].sum(axis=-1),
            "sum": (drawn * scores).sum(axis=-1),
            "sq": (drawn * scores * scores).sum(axis=-1),
        }
    flat_n = counts.ravel()
    pair_p = np.repeat(p.ravel(), flat_n)
    values = rng.beta(4 * pair_p, 4 * (1 - pair_p))
    starts = np.concatenate([[0], np.cumsum(flat_n)[:-1]])

    def per_group(x: np.ndarray) -> np.ndarray:
        out = np.add.reduceat(x, starts) if x.size else np.zeros(flat_n.size)
        return np.where(flat_n > 0, out, 0).reshape(p.shape)

    return {
        "n": counts.astype(np.int64),
        "eq": np.zeros(p.shape, np.int64),
        "div": per_group((values >= 0.5).astype(np.int64)),
        "sum": per_group(values),
        "sq": per_group(values * values),
    }


def truths(mu: float, icc: float, kind: str, rng) -> dict[str, float]:
    p = propensity(mu, icc, kind, (2_000_000,), rng)
    if kind == "rubric":
        eq = float(np.mean((1 - p) ** 4))
        one = float(np.mean(4 * p * (1 - p) ** 3))
        return {"equivalence_rate": eq, "divergence_rate": 1 - eq - one, "mean_divergence": mu}
    values = rng.beta(4 * p, 4 * (1 - p))
    return {"divergence_rate": float(np.mean(values >= 0.5)), "mean_divergence": mu}


def summarise(cf: dict[str, np.ndarray], ctrl: dict[str, np.ndarray] | None) -> pl.DataFrame:
    reps, groups = cf["n"].shape
    zeros = np.zeros(reps * groups, np.int64)
    columns: dict[str, object] = dict.fromkeys(SUM_COLUMNS, zeros)
    columns |= {
        "n_pairs": cf["n"].ravel(),
        "n_scored": cf["n"].ravel(),
        "n_equivalent": cf["eq"].ravel(),
        "n_divergent": cf["div"].ravel(),
        "score_sum": cf["sum"].ravel().astype(float),
        "score_sq_sum": cf["sq"].ravel().astype(float),
        "position_gap_sum": np.zeros(reps * groups),
        "control_score_sum": np.zeros(reps * groups),
    }
    if ctrl is not None:
        columns |= {
            "n_control": ctrl["n"].ravel(),
            "n_control_scored": ctrl["n"].ravel(),
            "control_score_sum": ctrl["sum"].ravel().astype(float),
        }
    sums = pl.DataFrame(
        {
            "metric": np.full(reps * groups, "m"),
            "replicate": np.repeat(np.arange(reps), groups),
            # unique across replicates: a group's control pairs are attached by its id
            "group_id": np.arange(reps * groups),
            **columns,
        }
    )
    return combine(sums, ["metric", "replicate"]).sort("replicate")


def judge(summary: pl.DataFrame, column: str, truth: float) -> dict[str, float]:
    low, high = summary[f"{column}_low"], summary[f"{column}_high"]
    bounded = low.is_not_null() & high.is_not_null()
    frame = pl.DataFrame({"low": low, "high": high}).filter(bounded)
    covered = ((frame["low"] <= truth + 1e-12) & (frame["high"] >= truth - 1e-12)).mean()
    return {
        "coverage": float(covered) if frame.height else math.nan,  # type: ignore[arg-type]
        "width": float(frame["high"].mean() - frame["low"].mean()) if frame.height else math.nan,  # type: ignore[operator]
        "null": 1 - frame.height / summary.height,
    }


def rates_and_mean(grid: dict, reps: int, rng) -> list[dict]:
    rows = []
    for kind in KINDS:
        for mu in grid["mu"]:
            for icc in grid["icc"]:
                truth = truths(mu, icc, kind, rng)
                for groups in grid["groups"]:
                    for design in grid["sizes"]:
                        n = sizes_of(design, groups)
                        p = propensity(mu, icc, kind, (reps, groups), rng)
                        cf = group_scores(p, n, kind, rng)
                        summary = summarise(cf, None)
                        for stat, value in truth.items():
                            y = {"equivalence_rate": "eq", "divergence_rate": "div"}
                            mine = judge(summary, stat, value)
                            others = rivals.ratio(
                                cf[y.get(stat, "sum")].astype(float),
                                cf["n"].astype(float),
                                value,
                                rate=stat != "mean_divergence",
                                rng=rng,
                            )
                            rows.append(_row(stat, kind, groups, design, icc, mu, mine, others))
    return rows


def excess(grid: dict, reps: int, rng) -> list[dict]:
    rows = []
    for kind in KINDS:
        for mu in grid["excess_mu"]:
            for icc in grid["icc"]:
                for groups in grid["groups"]:
                    for design in grid["designs"]:
                        if design == "unequal":
                            n_cf, n_ctrl = sizes_of("1/10", groups), sizes_of("3/1", groups)
                        else:
                            a, b = (int(x) for x in design.split(":"))
                            n_cf, n_ctrl = np.full(groups, a), np.full(groups, b)
                        for effect, size in EFFECTS.items():
                            delta = np.full(groups, size)
                            if effect == "20%":
                                delta[math.ceil(0.2 * groups) :] = 0.0
                            truth = float((n_cf * delta).sum() / n_cf.sum() * (1 - mu))
                            p = propensity(mu, icc, kind, (reps, groups), rng)
                            cf = group_scores(p + delta * (1 - p), n_cf, kind, rng)
                            ctrl = group_scores(p, n_ctrl, kind, rng)
                            summary = summarise(cf, ctrl)
                            mine = judge(summary, "excess_divergence", truth)
                            others = rivals.difference(cf, ctrl, truth, rng)
                            label = f"{design} {effect}"
                            rows.append(
                                _row(
                                    "excess_divergence", kind, groups, label, icc, mu, mine, others
                                )
                            )
    return rows


def _row(stat, kind, groups, design, icc, mu, mine, others) -> dict:
    goal = target(groups)
    covering = [w for c, w in others.values() if c >= goal]
    narrowest = min(covering) if covering else math.nan
    return {
        "statistic": stat,
        "kind": kind,
        "groups": groups,
        "design": design,
        "icc": icc,
        "mu": mu,
        **mine,
        **{f"{name} coverage": c for name, (c, _) in others.items()},
        **{f"{name} width": w for name, (_, w) in others.items()},
        "ratio": mine["width"] / narrowest if narrowest > 0 else math.nan,
    }


def report(rows: list[dict], reps: int, save: str | None = None) -> None:
    frame = pl.DataFrame(rows, infer_schema_length=None)
    if save:
        frame.write_parquet(save)
    frame = frame.with_columns(goal=pl.col("groups").map_elements(target, pl.Float64))
    mc = math.sqrt(0.95 * 0.05 / reps)
    print(f"\nMonte Carlo standard error of a 0.95 coverage: {mc:.3f} ({reps} replicates)\n")
    names = [c.removesuffix(" coverage") for c in frame.columns if c.endswith(" coverage")]
    frame = frame.drop(f"{name} width" for name in names)
    print(
        "| figure | cells | under 0.90 | under 0.93 | under goal | lowest at each G | "
        + "".join(f"{name} under goal | " for name in names)
        + "median width / narrowest covering | cells over 1.3x | replicates null |"
    )
    print("| " + " | ".join(["---"] * (9 + len(names))) + " |")
    for stat in (*STATS, "excess_divergence"):
        part = frame.filter(pl.col("statistic") == stat)
        if part.is_empty():
            continue
        valid = part.filter(pl.col("coverage").is_not_nan())
        lowest = (
            valid.group_by("groups")
            .agg(pl.col("coverage").min())
            .sort("groups")
            .select(pl.format("{}: {}", "groups", pl.col("coverage").round(3)))
            .to_series()
            .to_list()
        )
        ratio = valid.filter(pl.col("ratio").is_not_nan())["ratio"]
        rivals_under = "".join(
            f"{(part[f'{name} coverage'] < part['goal']).sum()} | "
            if part[f"{name} coverage"].null_count() < part.height
            else "- | "
            for name in names
        )
        print(
            f"| {stat} | {part.height} | {(valid['coverage'] < 0.90).sum()} | "
            f"{(valid['coverage'] < 0.93).sum()} | "
            f"{(valid['coverage'] < valid['goal']).sum()} | {'; '.join(lowest)} | "
            f"{rivals_under}{ratio.median():.2f} | {(ratio > 1.3).sum()} | "
            f"{part['null'].mean():.3f} |"
        )
    misses = frame.filter(pl.col("coverage") < pl.col("goal")).sort("coverage")
    print(f"\ncells under their goal ({misses.height}):")
    with pl.Config(tbl_rows=60, tbl_cols=20, tbl_width_chars=200):
        print(misses.head(60).drop("goal"))
    wide = frame.filter(pl.col("ratio").is_not_nan() & (pl.col("ratio") > 1.3)).sort(
        "ratio", descending=True
    )
    print(f"\ncells wider than 1.3x the narrowest covering competitor ({wide.height}):")
    with pl.Config(tbl_rows=30, tbl_cols=20, tbl_width_chars=200):
        print(wide.head(30).drop("goal"))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--grid", choices=tuple(GRIDS), default="primary")
    parser.add_argument("--only", choices=("rates", "excess", "both"), default="both")
    parser.add_argument("--seed", type=int, default=20261205)
    parser.add_argument("--save", help="write every cell's figures to this parquet file")
    for axis in ("groups", "sizes", "icc", "mu"):
        parser.add_argument(f"--{axis}", nargs="+", help=f"only these {axis} of the grid")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    grid = dict(GRIDS[args.grid])
    for axis, cast in (("groups", int), ("sizes", str), ("icc", float), ("mu", float)):
        if getattr(args, axis):
            grid[axis] = tuple(cast(v) for v in getattr(args, axis))
    started = time.perf_counter()
    rows = []
    if args.only in ("rates", "both"):
        rows += rates_and_mean(grid, args.reps, rng)
    if args.only in ("excess", "both"):
        rows += excess(grid, args.reps, rng)
    print(f"{args.grid} grid, {args.reps} replicates per cell, polars {pl.__version__}")
    report(rows, args.reps, args.save)
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
