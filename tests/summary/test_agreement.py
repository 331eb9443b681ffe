"""The judge against people: weighted kappa against the long computation from the confusion
table, the bias and its interval, and the summary's label_agreement."""

from __future__ import annotations

import math

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import pairwise_polars as pp

METRIC = "pairwise-bias"


def frames(pairs: list[tuple[int, int, int]]) -> tuple[pl.DataFrame, pl.DataFrame]:
    scored = pl.DataFrame(
        {
            "pair_id": list(range(len(pairs))),
            "group_id": [g for g, _, _ in pairs],
            "metric": METRIC,
            "score": [j / 4 for _, j, _ in pairs],
            "raw_score": [float(j) for _, j, _ in pairs],
        }
    )
    labels = pl.DataFrame(
        {"pair_id": list(range(len(pairs))), "metric": METRIC, "label": [y for _, _, y in pairs]}
    )
    return scored, labels


def kappa_from_table(judge: list[int], label: list[int]) -> float | None:
    """Quadratic weighted kappa the textbook way: observed against chance disagreement."""
    n, k = len(judge), 5
    observed = [[0.0] * k for _ in range(k)]
    for j, y in zip(judge, label, strict=True):
        observed[y][j] += 1 / n
    rows = [sum(observed[i]) for i in range(k)]
    cols = [sum(observed[i][j] for i in range(k)) for j in range(k)]
    weight = [[(i - j) ** 2 for j in range(k)] for i in range(k)]
    seen = sum(weight[i][j] * observed[i][j] for i in range(k) for j in range(k))
    chance = sum(weight[i][j] * rows[i] * cols[j] for i in range(k) for j in range(k))
    return None if chance < 1e-12 else 1 - seen / chance


@settings(max_examples=12, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 4), st.integers(0, 4)),
                min_size=2, max_size=40))  # fmt: skip
def test_kappa_matches_the_confusion_table(pairs: list[tuple[int, int, int]]) -> None:
    scored, labels = frames(pairs)
    found = pp.judge_agreement(scored, labels)
    expected = kappa_from_table([j for _, j, _ in pairs], [y for _, _, y in pairs])
    got = found.summary["weighted_kappa"].item()
    assert (got is None) == (expected is None)
    if expected is not None:
        assert math.isclose(got, expected, abs_tol=1e-9)
        assert math.isclose(pp.aggregate(scored, labels=labels)["label_agreement"].item(), got)
    assert found.confusion["n"].sum() == len(pairs)


def test_an_over_calling_judge_shows_its_bias_and_both_figures() -> None:
    # 20 groups of 3; people say 0 or 1, the judge one point more.
    pairs = [(i // 3, (i % 2) + 1, i % 2) for i in range(60)]
    scored, labels = frames(pairs)
    row = pp.judge_agreement(scored, labels).summary.row(0, named=True)
    assert row["n_labelled"] == 60 and row["n_groups"] == 20
    assert row["mean_bias"] == 0.25 and row["mean_bias_low"] == row["mean_bias_high"] == 0.25
    assert row["exact_agreement"] == 0.0
    assert row["judge_equivalence_rate"] == 0.0 and row["label_equivalence_rate"] == 0.5
    assert row["judge_mean_divergence"] - row["label_mean_divergence"] == 0.25
    confusion = pp.judge_agreement(scored, labels).confusion
    assert confusion.select("label", "judge", "n").rows() == [(0.0, 1.0, 30), (1.0, 2.0, 30)]


def test_a_bias_interval_over_groups_holds_the_bias() -> None:
    pairs = [(i // 2, (i * 7) % 5, (i * 3) % 5) for i in range(80)]
    scored, labels = frames(pairs)
    row = pp.judge_agreement(scored, labels).summary.row(0, named=True)
    assert row["mean_bias_low"] < row["mean_bias"] < row["mean_bias_high"]
    assert math.isclose(row["mean_bias"], sum((j - y) / 4 for _, j, y in pairs) / 80)
