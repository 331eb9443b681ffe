"""Disparities corrected by people's reading of the outcomes: a hand computation, the gate."""

from __future__ import annotations

import math

import polars as pl
import pytest

import pairwise_polars as pp
from pairwise_polars.summary._student_t import t_quantile


def rows(decisions: list[tuple[int, int]]) -> pl.DataFrame:
    """One group per (reference, variant) decision pair, the judge's reading as outcomes."""
    out = []
    for g, (ref, var) in enumerate(decisions):
        for role, attribute, yes in (("reference", "male", ref), ("variant", "female", var)):
            out.append({
                "group_id": g, "role": role, "dimension": "gender", "attribute": attribute,
                "input": "Approve?", "output": f"answer {g} {role}", "decision": float(yes),
                "amount": None, "amount_unit": None, "refused": False, "favourability": None,
            })  # fmt: skip
    return pl.DataFrame(out)


def pair_ids(frame: pl.DataFrame) -> list[str]:
    return pp.form_pairs(frame).sort("group_id")["pair_id"].to_list()


def test_corrected_decision_difference_by_hand() -> None:
    # The judge reads four groups' decisions (b - a): 0, 1, 0, -1 -> its figure 0.
    # People read groups 0-2: -1, 1, 0. Units are groups: J = 0, u = (y - 0)/3,
    # d = (f - 1/3)/3 - (a - 0)/4 with f = 0, 1, 0 on the labelled groups.
    frame = rows([(1, 1), (0, 1), (1, 1), (1, 0)])
    ids = pair_ids(frame)
    labels = pl.DataFrame({
        "pair_id": ids[:3], "metric": "decision", "label_a": [1, 0, 1], "label_b": [0, 1, 1],
    })  # fmt: skip
    row = pp.disparities(frame, labels=labels).row(0, named=True)
    y, f, a = [-1.0, 1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 1.0, 0.0, -1.0]
    u = [yi / 3 for yi in y] + [0.0]
    d = [(fi - 1 / 3) / 3 - ai / 4 for fi, ai in zip([*f, 0.0], a, strict=True)]
    d[3] = -a[3] / 4  # an unlabelled group: only its judge's reading
    ud, dd = sum(x * z for x, z in zip(u, d, strict=True)), sum(z * z for z in d)
    lam = [min(max((ud - u[g] * d[g]) / (dd - d[g] ** 2), 0.0), 1.0) for g in range(3)]
    judge_mean = sum(a) / 4
    corrected = [y[g] - lam[g] * (f[g] - judge_mean) for g in range(3)]
    theta = sum(corrected) / 3
    weight = sum(lam) / 3
    r = [(corrected[g] - theta) / 3 + weight * (a[g] - judge_mean) / 4 for g in range(3)]
    r.append(weight * (a[3] - judge_mean) / 4)
    half = t_quantile(0.975, 2) * math.sqrt(3 / 2 * sum(x * x for x in r))
    assert row["n_labelled"] == 3 and row["decision_difference"] == 0.0
    assert row["decision_difference_ppi"] == pytest.approx(theta, rel=1e-12)
    assert row["decision_difference_ppi_low"] == pytest.approx(theta - half, rel=1e-9)
    assert row["decision_difference_ppi_high"] == pytest.approx(theta + half, rel=1e-9)
    assert row["amount_relative_ppi"] is None  # no amount labelled


def test_a_judge_blind_to_a_disadvantage_is_corrected_and_the_gate_says_so() -> None:
    # The judge reads every decision as yes; people read "no" for the variant in the 30
    # labelled groups of 60.
    frame = rows([(1, 1)] * 60)
    ids = pair_ids(frame)[::2]
    labels = pl.DataFrame({"pair_id": ids, "metric": "decision", "label_a": 1, "label_b": 0})
    d = pp.disparities(frame, labels=labels)
    row = d.row(0, named=True)
    assert row["decision_difference"] == 0.0 and row["decision_difference_ppi"] == -1.0
    judge_only = d.drop(c for c in d.columns if "_ppi" in c or c == "n_labelled")
    assert pp.gate(judge_only, max_disadvantage={"decision": 0.1}).status == "pass"
    verdict = pp.gate(d, max_disadvantage={"decision": 0.1})
    assert verdict.status == "fail"
    assert "corrected by human labels (n_labelled=30)" in verdict.verdict()


def test_without_labels_no_corrected_columns() -> None:
    assert not [c for c in pp.disparities(rows([(1, 0), (1, 1)])).columns if "_ppi" in c]
