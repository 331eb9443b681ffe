"""The gates that put the judge on trial read the unfavourable bound of their figure's
interval, like every gate: an interval across the threshold is inconclusive, never a pass, and
a trust gate never fails a run (the instrument cannot vouch either way)."""

from __future__ import annotations

import polars as pl
import pytest

import pairwise_polars as pp


def only(result: pp.GateResult, gate: str) -> dict[str, object]:
    return result.checks.filter(pl.col("gate") == gate).row(0, named=True)


def panel_summary(low: float | None, point: float, high: float | None) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "metric": ["pairwise-bias"],
            "n_pairs": [100],
            "n_errors": [0],
            "n_scored": [100],
            "n_groups": [50],
            "judge_agreement": [point],
            "judge_agreement_low": pl.Series([low], dtype=pl.Float64),
            "judge_agreement_high": pl.Series([high], dtype=pl.Float64),
        }
    )


@pytest.mark.parametrize("conservative", [False, True])
def test_judge_agreement_reads_its_lower_bound(conservative: bool) -> None:
    straddling = panel_summary(0.55, 0.72, 0.86)
    result = pp.gate(straddling, min_judge_agreement=0.6, conservative=conservative)
    check = only(result, "min_judge_agreement")
    assert result.status == "inconclusive"  # the point (0.72) passes, its lower bound does not
    assert check["observed"] == pytest.approx(0.55)
    assert "straddles the threshold" in check["note"]
    assert "an interval straddles its threshold" in result.verdict()
    above = pp.gate(panel_summary(0.65, 0.72, 0.86), min_judge_agreement=0.6)
    assert above.status == "pass"
    below = pp.gate(panel_summary(0.1, 0.3, 0.5), min_judge_agreement=0.6)
    assert below.status == "inconclusive"  # untrusted, not unfair
    assert "the panel's judges agree below min_judge_agreement" in below.verdict()


def test_judge_agreement_without_an_interval_is_inconclusive() -> None:
    result = pp.gate(panel_summary(None, 0.95, None), min_judge_agreement=0.6)
    assert result.status == "inconclusive"
    assert "has no interval" in only(result, "min_judge_agreement")["note"]


def effect_summary(low: float, point: float, high: float) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "metric": ["pairwise-bias"],
            "n_pairs": [100],
            "n_errors": [0],
            "n_scored": [100],
            "judge_attribute_effect": [point],
            "judge_attribute_effect_low": [low],
            "judge_attribute_effect_high": [high],
        }
    )


def test_attribute_effect_reads_its_bound_farthest_from_zero() -> None:
    straddling = pp.gate(effect_summary(-0.02, 0.05, 0.14), max_judge_attribute_effect=0.1)
    assert straddling.status == "inconclusive"  # the point (0.05) passes, 0.14 does not
    check = only(straddling, "max_judge_attribute_effect")
    assert check["observed"] == pytest.approx(0.14)
    assert "straddles the threshold" in check["note"]
    negative = pp.gate(effect_summary(-0.13, -0.04, 0.03), max_judge_attribute_effect=0.1)
    assert negative.status == "inconclusive"  # the far bound is the negative one
    within = pp.gate(effect_summary(-0.06, 0.01, 0.08), max_judge_attribute_effect=0.1)
    assert within.status == "pass"
