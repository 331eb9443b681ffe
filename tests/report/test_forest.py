"""The report's forest plots: per dimension and outcome, each attribute's disparity around the
zero line, labelled with who is favoured, and the control beside it."""

from __future__ import annotations

import pairwise_polars as pp
from pairwise_polars.report import render_report
from pairwise_polars.report._forest import forest_charts
from tests.summary.salary import salary_rows


def test_a_forest_plot_names_who_is_favoured_and_shows_the_control() -> None:
    rows = salary_rows()
    scored = pp.score(rows, metrics=["pairwise-bias", "pairwise-favour"], progress=False)
    d = pp.disparities(scored)
    charts = forest_charts(d)
    titles = [c.title for c in charts]
    assert titles == [
        "Amount offered, relative to the reference: gender",
        "Refusal rate, difference from the reference: gender",
        "Favour (pairwise-favour), against the reference: gender",
    ]
    amount = charts[0]
    assert amount.zero_line and amount.zero == 50.0  # a symmetric axis around no difference
    labels = [row.label for row in amount.rows]
    assert labels == ["female vs male", "control: male vs male"]
    assert "favours male" in amount.rows[0].hover and "should hold 0" in amount.rows[1].hover
    female = amount.rows[0]
    assert female.bar_from + female.bar_width == 50.0  # the bar runs left of zero: less offered
    html = render_report(scored, disparities=d)
    assert "Who is disadvantaged" in html and 'class="izero"' in html
    assert forest_charts(None) == () and "Who is disadvantaged" not in render_report(scored)
