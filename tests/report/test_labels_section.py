"""The report's "The judge against people": agreement, bias with its interval, confusion."""

from __future__ import annotations

import polars as pl

from pairwise_polars.report import render_report


def _over_calling() -> pl.DataFrame:
    """The judge over-calls: raw 2 where people said 0 on every other labelled pair."""
    groups, judge, people = 20, [], []
    for g in range(groups):
        judge += [2, 1]
        people += [0 if g % 2 else 2, 1]
    return pl.DataFrame({
        "pair_id": list(range(2 * groups)), "group_id": [i // 2 for i in range(2 * groups)],
        "dimension": "gender", "metric": "pairwise-bias", "error": None,
        "score": [j / 4 for j in judge], "raw_score": [float(j) for j in judge],
        "raw_label": [float(p) for p in people], "label": [p / 4 for p in people],
    })  # fmt: skip


def test_labelled_pairs_show_the_bias_interval_and_the_confusion_table() -> None:
    html = render_report(_over_calling())
    assert "The judge against people" in html
    # mean bias: 10 of 40 pairs 0.5 too high = 0.125, an interval above 0
    assert "0.125 [0." in html and "over-calls divergence" in html
    assert "pairwise-bias: labelled pairs by label (rows)" in html
    # label 0: ten pairs the judge scored 2; label 2: ten agreeing; label 1: twenty agreeing
    assert '<tr><th>0</th><td class="off" style="--share: 0%">0</td>' in html
    assert '<td class="off" style="--share: 100%">10</td>' in html
    assert '<td class="agree" style="--share: 100%">20</td>' in html


def test_no_labels_no_section() -> None:
    scored = pl.DataFrame({"group_id": [1, 2], "metric": "pairwise-bias", "score": [0.0, 0.5]})
    assert "The judge against people" not in render_report(scored.with_columns(error=None))


def test_the_interval_charts_draw_the_corrected_figure_under_the_judges() -> None:
    html = render_report(_over_calling())
    # mean divergence: the judge's 0.375 (raw 1.5 of 4), people's 0.25 (every pair labelled)
    chart = html[html.index("Mean divergence by slice") :]
    judged = chart.index('<div class="irow" title="gender: 0.375 [')
    corrected = chart.index('<div class="irow" title="gender, corrected by labels: 0.25 [')
    assert judged < corrected and "(40 labelled pairs)" in chart[corrected : corrected + 200]
