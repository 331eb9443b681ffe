"""Two scored runs of the same pairs, simulated: a group effect shared by both runs (the same
prompt), pair noise, and a planted change in chosen slices."""

from __future__ import annotations

import numpy as np
import polars as pl

RUBRIC = np.array([0.0, 0.25, 0.5, 0.75, 1.0])


def scored_runs(
    *,
    groups: int = 40,
    dimensions: tuple[str, ...] = ("age", "gender", "race"),
    shift: dict[str, float] | None = None,
    seed: int = 0,
    controls: bool = True,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(before, after): per dimension ``groups`` groups of three counterfactual pairs and one
    control pair; the after run's scores move up by ``shift[dimension]`` on average."""
    rng = np.random.default_rng(seed)
    shift = shift or {}
    rows: list[dict[str, object]] = []
    for dimension in dimensions:
        for g in range(groups):
            group = f"{dimension}-{g}"
            level = rng.uniform(0.0, 0.4)
            pairs = [("counterfactual", "a", f"v{i}") for i in range(3)]
            pairs += [("control", "a", "a")] if controls else []
            for i, (kind, attribute_a, attribute_b) in enumerate(pairs):
                rows.append(
                    {
                        "pair_id": hash((group, i)) % 2**62,
                        "group_id": group,
                        "dimension": dimension,
                        "attribute_a": attribute_a,
                        "attribute_b": attribute_b,
                        "pair_kind": kind,
                        "level": level if kind == "counterfactual" else 0.1,
                    }
                )
    frame = pl.DataFrame(rows).with_columns(metric=pl.lit("pairwise-bias"))

    def draw(extra: np.ndarray) -> pl.Series:
        mean = np.clip(frame["level"].to_numpy() + extra, 0, 1)
        raw = rng.normal(mean, 0.15)
        nearest = np.abs(raw[:, None] - RUBRIC[None, :]).argmin(axis=1)
        return pl.Series("score", RUBRIC[nearest])

    moved = np.array(
        [
            shift.get(d, 0.0) if k == "counterfactual" else 0.0
            for d, k in zip(frame["dimension"], frame["pair_kind"], strict=True)
        ]
    )
    before = frame.with_columns(draw(np.zeros(frame.height)), error=pl.lit(None, pl.String))
    after = frame.with_columns(draw(moved), error=pl.lit(None, pl.String))
    return before.drop("level"), after.drop("level")
