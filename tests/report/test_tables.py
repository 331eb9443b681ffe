"""The summary as a table for people, the CLI, JUnit and the step summary: columns that later
stages add (position bias, the noise floor) appear when the summary has them."""

from __future__ import annotations

import polars as pl

from pairwise_polars.report import Outcome, junit_xml, readable_summary, step_summary
from pairwise_polars.summary import gate_summary, summarize


def summary() -> pl.DataFrame:
    scored = pl.DataFrame(
        {"metric": "pairwise-bias", "group_id": [1, 2, 3], "dimension": ["age", "age", "race"],
         "score": [0.0, 0.5, 0.25]}
    )  # fmt: skip
    return summarize(scored)


def test_the_base_table() -> None:
    base = summary()
    table = readable_summary(base)
    assert table.columns == [
        "metric", "dimension", "pairs", "scored", "errors", "equivalence rate",
        "divergence rate", "mean divergence", "detectable effect",
    ]  # fmt: skip
    o = base.row(0, named=True)
    shown = [
        f"{o[f]:.3f} [{o[f + '_low']:.3f}, {o[f + '_high']:.3f}]"
        for f in ("equivalence_rate", "divergence_rate", "mean_divergence")
    ]
    detectable = f"{o['min_detectable_effect']:.3f}"
    assert table.row(0) == ("pairwise-bias", "overall", 3, 3, 0, *shown, detectable)
    assert shown[0].startswith("0.333 [") and shown[2].startswith("0.250 [")


def test_position_and_noise_floor_columns_appear_when_present() -> None:
    extended = summary().with_columns(
        mean_position_gap=pl.lit(0.05),
        position_flip_rate=pl.lit(0.1),
        n_control=pl.lit(3, pl.Int64),
        control_mean_divergence=pl.lit(0.1),
        excess_divergence=pl.lit(0.15),
        excess_divergence_low=pl.lit(0.05),
        excess_divergence_high=pl.lit(0.25),
    )
    table = readable_summary(extended)
    assert table.columns[:2] == ["metric", "dimension"]  # not taken for slices
    assert table.columns[2:] == [
        "pairs", "scored", "errors", "controls", "equivalence rate", "divergence rate",
        "mean divergence", "control divergence", "excess divergence", "position gap",
        "position flips", "detectable effect",
    ]  # fmt: skip
    assert table["excess divergence"][0] == "0.150 [0.050, 0.250]"
    gates = gate_summary(summary(), overall={"max_mean_divergence": 0.5})
    outcome = Outcome("t", extended, gates)
    assert "excess divergence" in step_summary([outcome], title="run")
    assert "excess divergence" in junit_xml([outcome])
