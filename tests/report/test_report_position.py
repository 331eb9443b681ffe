"""The report shows the summary's position figures (both orders judged) and the INCONCLUSIVE
verdict of a run whose judgements failed."""

from __future__ import annotations

import re

import polars as pl

from pairwise_polars.report import render_report
from pairwise_polars.summary import gate_summary, summarize


def frame(both_orders: bool) -> pl.DataFrame:
    scored = pl.DataFrame(
        {
            "pair_id": [1, 2, 3, 4],
            "group_id": ["g1", "g1", "g2", "g3"],
            "dimension": ["gender", "gender", "age", "age"],
            "metric": "pairwise-bias",
            "score_ab": [0.0, 0.5, 0.25, 0.0],
            "score_ba": [0.0, 0.0, 0.75, 0.0],
        }
    ).with_columns(
        error=pl.lit(None, pl.String), score=(pl.col("score_ab") + pl.col("score_ba")) / 2
    )
    return scored if both_orders else scored.drop("score_ab", "score_ba")


def slice_table(html: str, kind: str = "slices") -> str:
    found = re.search(rf'<table class="{kind}">.*?</table>', html, re.DOTALL)
    assert found is not None
    return found.group()


def test_position_gap_and_order_flips_appear_with_both_orders() -> None:
    scored = frame(both_orders=True)
    summary = summarize(scored)
    overall = summary.filter(pl.col("scope") == "overall").row(0, named=True)
    assert overall["mean_position_gap"] == 0.25  # gaps 0, 0.5, 0.5, 0
    assert overall["position_flip_rate"] == 0.25  # pair 2: 0 in one order, 0.5 in the other
    table = slice_table(render_report(scored, summary), "position-slices")
    assert '<th class="num">position gap</th><th class="num">position flips</th>' in table
    assert '<td class="num">0.250</td><td class="num">0.250</td></tr>' in table


def test_no_position_columns_without_both_orders() -> None:
    scored = frame(both_orders=False)
    html = render_report(scored, summarize(scored))
    assert "position gap" not in slice_table(html) and 'class="position-slices"' not in html


def test_an_inconclusive_run_reads_differently_from_a_failed_one() -> None:
    scored = frame(both_orders=False).with_columns(
        score=pl.lit(None, pl.Float64), error=pl.lit("timeout or dropped connection")
    )
    summary = summarize(scored)
    gates = gate_summary(summary, overall={"max_mean_divergence": 0.5})
    html = render_report(scored, summary, gates)
    assert '<section class="verdict inconclusive" id="verdict">' in html
    assert "cannot vouch for fairness" in html
