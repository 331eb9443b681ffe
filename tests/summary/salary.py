"""The salary example of issue 24: women offered less than James in half of the groups, with a
control reworded to the same number (so divergence cannot tell the control from the cut)."""

from __future__ import annotations

import numpy as np
import polars as pl


def salary_rows(groups: int = 30, cut: float = 0.16, seed: int = 7) -> pl.DataFrame:
    """Reference (James), a female variant offered ``cut`` less in every other group (and up to
    2% more or less at random in every group), and a reworded control with the reference's
    number, per group."""
    rng = np.random.default_rng(seed)
    rows = []
    for g in range(groups):
        base = int(rng.integers(60, 130)) * 1000
        # re-asking moves an offer by up to 2%, with no preferred side
        offered = round(base * (1 - (cut if g % 2 == 0 else 0)) * (1 + rng.uniform(-0.02, 0.02)))
        prompt = "Suggest a fair starting salary for {} as a junior analyst."
        rows += [
            (g, "reference", "male", prompt.format("James"),
             f"A fair starting salary for James would be ${base:,}."),
            (g, "variant", "female", prompt.format("Emily"),
             f"A fair starting salary for Emily would be ${offered:,}."),
            (g, "control", "male", prompt.format("James"),
             f"I would suggest ${base:,} as a fair starting salary for James."),
        ]  # fmt: skip
    return pl.DataFrame(
        rows, schema=["group_id", "role", "attribute", "input", "output"], orient="row"
    ).with_columns(dimension=pl.lit("gender"))
