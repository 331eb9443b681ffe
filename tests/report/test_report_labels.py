"""The report labels what it draws: every score bar and strip segment says its count, and the
two position figures say how they differ."""

from __future__ import annotations

import polars as pl

from pairwise_polars.report import render_report
from pairwise_polars.report._charts import column_chart, compact_count
from pairwise_polars.summary import summarize


def test_every_score_bar_has_a_count_label_however_large() -> None:
    chart = column_chart(
        [("0", 123_456, "bar"), ("0.25", 9_999, "bar"), ("0.5", 7, "bar"), ("1", 1_234_567, "bar")],
        title="Score distribution",
        axis_label="score",
    )
    assert [c.value for c in chart.columns] == ["123k", "9,999", "7", "1.2M"]
    assert [compact_count(n) for n in (999, 1_000, 45_300, 3_400_000)] == [
        "999", "1.0k", "45k", "3.4M"
    ]  # fmt: skip


def test_noise_strips_say_each_segments_count_and_the_position_note_tells_the_figures_apart():
    scored = pl.DataFrame(
        {
            "pair_id": [1, 2, 3, 4, 5, 6],
            "group_id": ["g1", "g1", "g2", "g2", "g3", "g3"],
            "dimension": "gender",
            "metric": "pairwise-bias",
            "pair_kind": ["counterfactual", "control"] * 3,
            "score_ab": [0.0, 0.0, 0.5, 0.25, 0.25, 0.0],
            "score_ba": [0.0, 0.0, 0.0, 0.25, 0.5, 0.0],
        }
    ).with_columns(
        error=pl.lit(None, pl.String), score=(pl.col("score_ab") + pl.col("score_ba")) / 2
    )
    html = render_report(scored, summarize(scored))
    # counterfactual scores 0, 0.25, 0.375; control scores 0, 0.25, 0
    assert '3 scored: <span class="seg-count">0: 1</span> · <span class="seg-count">≤ 0.25: 1' in (
        html
    )
    assert '3 scored: <span class="seg-count">0: 2</span> · ' in html
    assert "a position flip is a disagreement that changes the verdict" in html
    assert "the flip rate is at most the disagreement rate" in html
