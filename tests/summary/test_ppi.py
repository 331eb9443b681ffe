"""Prediction-powered estimates against a hand computation, and their identities."""

from __future__ import annotations

import math

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

import pairwise_polars as pp
from pairwise_polars.summary._ppi import PPI_COLUMNS
from pairwise_polars.summary._student_t import t_quantile

METRIC = "pairwise-bias"


def scored(raw: list[int], groups: list[int] | None = None, **extra: list[object]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "pair_id": list(range(len(raw))),
            "group_id": groups if groups is not None else list(range(len(raw))),
            "metric": METRIC,
            "score": [r / 4 for r in raw],
            "raw_score": [float(r) for r in raw],
            **extra,
        }
    )


def labels(pairs: list[int], raw: list[int]) -> pl.DataFrame:
    return pl.DataFrame({"pair_id": pairs, "metric": METRIC, "label": raw})


def test_textbook_case_by_hand() -> None:
    # Six independent pairs (one per group); the judge scored all six, people labelled three.
    # judge f = 1, 0, 1, 1, .5, 0 (raw 4 0 4 4 2 0); labels y = .5, 0, 1 on the first three.
    # J = S/N = 3.5/6 = 7/12, L/M = 1/2, F/M = 2/3.
    # u = (y - 1/2)/3 = 0, -1/6, 1/6, 0, 0, 0;  v = (f - 2/3)/3 on the labelled;
    # w = (f - 7/12)/6;  d = v - w = (3, -9, 3, -5, 1, 7)/72;  sum u d = 1/36,
    # sum d^2 = 174/5184.  Each labelled group's lambda is tuned without it:
    # lambda_0 = (1/36) / (165/5184) = 48/55, lambda_1 = (1/144) / (93/5184) = 12/31,
    # lambda_2 = (1/48) / (165/5184) = 36/55.
    # theta = mean of y - lambda (f - J) = (3/22 + 7/31 + 8/11) / 3 = 743/2046.
    summary = pp.aggregate(scored([4, 0, 4, 4, 2, 0]), labels=labels([0, 1, 2], [2, 0, 4]))
    row = summary.row(0, named=True)
    assert row["n_labelled"] == 3
    assert math.isclose(row["mean_divergence_ppi"], 743 / 2046, rel_tol=1e-12)
    lam, f, j = [48 / 55, 12 / 31, 36 / 55], [1, 0, 1, 1, 0.5, 0], 7 / 12
    theta, weight = 743 / 2046, sum(lam) / 3  # weight: the share of J in theta
    corrected = [3 / 22, 7 / 31, 8 / 11, 0, 0, 0]
    r = [(corrected[g] - (theta if g < 3 else 0)) / 3 + weight * (f[g] - j) / 6 for g in range(6)]
    a, b = sum(x**2 for x in r), sum(x**4 for x in r)
    # The noise of lambda (24/29 on all groups, inside [0, 1]) adds gap^2 sum(r^2 d^2) /
    # (sum d^2)^2, gap = J - F/M = -1/12.
    d = [x / 72 for x in (3, -9, 3, -5, 1, 7)]
    tuning = (1 / 12) ** 2 * sum((ri * di) ** 2 for ri, di in zip(r, d, strict=True))
    variance = 3 / 2 * (a + tuning / (174 / 5184) ** 2)  # three groups carry labels
    df = min(max(math.floor(2 * a * a / (b - a * a / 6)), 1), 5)
    q = t_quantile(0.975, df)
    m = theta
    n_eff = min(m * (1 - m) / variance, 6)
    centre = (m + q * q / (2 * n_eff)) / (1 + q * q / n_eff)
    half = q * math.sqrt(m * (1 - m) / n_eff + q * q / (4 * n_eff**2)) / (1 + q * q / n_eff)
    assert math.isclose(row["mean_divergence_ppi_low"], centre - half, rel_tol=1e-9)
    assert math.isclose(row["mean_divergence_ppi_high"], centre + half, rel_tol=1e-9)
    # The rates: y <= 0 on one of three labelled pairs, the judge on two of six and one of three.
    assert row["equivalence_rate_ppi"] is not None and 0 <= row["equivalence_rate_ppi"] <= 1


def test_a_judge_that_tells_nothing_falls_back_to_the_labels() -> None:
    # A constant judge: lambda = 0, so every estimate is the labels' own figure.
    raw_labels = [0, 4, 1, 0, 0, 3, 0, 2]
    summary = pp.aggregate(scored([2] * 40), labels=labels(list(range(8)), raw_labels))
    row = summary.row(0, named=True)
    assert math.isclose(row["mean_divergence_ppi"], sum(raw_labels) / 4 / 8)
    assert math.isclose(row["equivalence_rate_ppi"], 4 / 8)
    assert math.isclose(row["divergence_rate_ppi"], 3 / 8)


def test_a_biased_judge_is_corrected_and_the_verdict_moves() -> None:
    # The judge calls every pair 2 (0.5); people say 0 on all labelled pairs of 30 groups.
    raw = [2] * 90
    groups = [i // 3 for i in range(90)]
    summary = pp.aggregate(scored(raw, groups), labels=labels(list(range(0, 90, 3)), [0] * 30))
    row = summary.row(0, named=True)
    assert row["mean_divergence"] == 0.5
    assert row["mean_divergence_ppi"] == 0.0
    assert row["mean_divergence_ppi_high"] < 0.15  # Wilson on the 30 labels, never 0 width
    assert row["equivalence_rate_ppi"] == 1.0 and row["equivalence_rate_ppi_low"] > 0.85


def test_without_labels_there_are_no_ppi_columns_and_one_labelled_group_has_no_bounds() -> None:
    frame = scored([0, 1, 2, 3], [1, 1, 2, 2])
    assert not set(PPI_COLUMNS) & set(pp.aggregate(frame).columns)
    row = pp.aggregate(frame, labels=labels([0, 1], [0, 1])).row(0, named=True)
    assert row["n_labelled"] == 2 and row["mean_divergence_ppi"] is not None
    assert row["mean_divergence_ppi_low"] is None  # the labels' spread across groups is unknown


def test_excess_is_the_difference_of_corrected_means() -> None:
    # Per group: two counterfactual pairs and one control pair; the judge over-calls by 1 point.
    n = 40
    kinds = ["counterfactual", "counterfactual", "control"] * n
    truth = [(i * 7) % 3 if k == "counterfactual" else (i * 5) % 2 for i, k in enumerate(kinds)]
    raw = [min(t + 1, 4) for t in truth]
    frame = scored(raw, [i // 3 for i in range(3 * n)], pair_kind=kinds)
    labelled = list(range(0, 3 * n, 2))  # every other pair, both kinds
    row = pp.aggregate(frame, labels=labels(labelled, [truth[i] for i in labelled])).row(
        0, named=True
    )
    assert row["excess_divergence_ppi_low"] <= row["excess_divergence_ppi"]
    assert row["excess_divergence_ppi"] <= row["excess_divergence_ppi_high"]
    cf = [truth[i] / 4 for i in range(3 * n) if kinds[i] != "control"]
    co = [truth[i] / 4 for i in range(3 * n) if kinds[i] == "control"]
    assert abs(row["excess_divergence_ppi"] - (sum(cf) / len(cf) - sum(co) / len(co))) < 0.1


pairs_st = st.lists(
    st.tuples(st.integers(0, 7), st.integers(0, 4), st.one_of(st.none(), st.integers(0, 4))),
    min_size=2, max_size=30,
)  # fmt: skip


@settings(max_examples=10, deadline=None)
@given(pairs_st, st.randoms(use_true_random=False))
def test_estimates_ignore_row_order_and_bounds_hold_them(
    data: list[tuple[int, int, int | None]], rnd: object
) -> None:
    frame = scored([r for _, r, _ in data], [g for g, _, _ in data])
    given_labels = [(i, lab) for i, (_, _, lab) in enumerate(data) if lab is not None]
    lab = labels([i for i, _ in given_labels], [v for _, v in given_labels])
    if lab.is_empty():
        return
    first = pp.aggregate(frame, labels=lab)
    shuffled = frame.sample(fraction=1.0, shuffle=True, seed=len(data))
    second = pp.aggregate(shuffled, labels=lab.reverse())
    for column in PPI_COLUMNS:
        a, b = first[column].item(), second[column].item()
        assert (a is None and b is None) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    row = first.row(0, named=True)
    for name in ("equivalence_rate", "divergence_rate", "mean_divergence"):
        estimate, low, high = (row[f"{name}_ppi{e}"] for e in ("", "_low", "_high"))
        assert estimate is not None and -1e-12 <= estimate <= 1 + 1e-12
        if low is not None:
            assert low <= min(max(estimate, 0), 1) + 1e-12 <= high + 2e-12


def test_gates_use_the_corrected_figures_and_their_bounds_and_say_so() -> None:
    # Slice "a": the judge says 0.5 everywhere, people 0 (30 labelled groups); "b" unlabelled.
    raw = [2] * 120
    groups = [i // 3 for i in range(120)]
    frame = scored(raw, groups, dimension=["a"] * 90 + ["b"] * 30)
    summary = pp.aggregate(frame, labels=labels(list(range(0, 90, 3)), [0] * 30))
    result = pp.gate(summary, max_mean_divergence=0.2, max_error_rate=None)
    checks = {row["slice"]: row for row in result.checks.iter_rows(named=True)}
    assert checks["dimension=a"]["passed"] and checks["dimension=a"]["observed"] == 0.0
    assert (
        "corrected by human labels (mean_divergence_ppi, n_labelled=30)"
        in (checks["dimension=a"]["note"])
    )
    assert not checks["dimension=b"]["passed"] and checks["dimension=b"]["observed"] == 0.5
    assert "judge only: no labelled pair in this slice" in checks["dimension=b"]["note"]
    careful = pp.gate(summary, max_mean_divergence=0.2, max_error_rate=None, conservative=True)
    observed = careful.checks.filter(pl.col("slice") == "dimension=a")["observed"].item()
    assert observed == summary["mean_divergence_ppi_high"][0] and 0 < observed < 0.2
    assert "corrected by human labels" in careful.verdict()


def test_labels_that_never_disagree_bound_the_judge_only_as_far_as_their_count() -> None:
    """70 labelled pairs all read as the judge read them: the judge may still err on up to
    1 - 0.025^(1/70) = 5.1% of the pairs nobody labelled, so no corrected interval is
    narrower than about twice that (the plug-in variance alone gave widths of 0.02-0.05)."""
    raw = [2 if (i * 2654435761) % 97 < 30 else 0 for i in range(2000)]
    picked = [4 * g + (7 * g) % 4 for g in range(0, 500, 10)]
    picked += [4 * g + (7 * g + 1) % 4 for g in range(0, 500, 25)]
    summary = pp.aggregate(
        scored(raw, [i // 4 for i in range(2000)]),
        by=(),
        labels=labels(picked, [raw[i] for i in picked]),
    )
    unseen = 1 - 0.025 ** (1 / 70)
    row = summary.row(0, named=True)
    assert row["n_labelled"] == 70 and row["label_agreement"] == 1.0
    for name in ("equivalence_rate", "divergence_rate", "mean_divergence"):
        low, high = row[f"{name}_ppi_low"], row[f"{name}_ppi_high"]
        assert low < row[f"{name}_ppi"] < high and high - low > 1.5 * unseen, name
