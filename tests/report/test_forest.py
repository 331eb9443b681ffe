"""The report's forest plots: per dimension and outcome, each attribute's disparity around the
zero line, labelled with who is favoured, and the control beside it."""

from __future__ import annotations

import numpy as np
import polars as pl

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


def test_outcome_labels_add_the_corrected_row_under_the_judges() -> None:
    """People read 20 of the cut salaries as paid alike: the corrected row sits under the
    judge's, near zero, and says it is corrected and by how many labels."""
    rows = salary_rows()
    pairs = pp.form_pairs(rows).filter(pl.col("pair_kind") == "counterfactual").head(20)
    alike = 100_000 * (1 + np.random.default_rng(3).uniform(-0.02, 0.02, pairs.height))
    labels = pairs.select(
        "pair_id", metric=pl.lit("amount"), label_a=pl.lit(100_000.0), label_b=pl.Series(alike)
    )
    amount = forest_charts(pp.disparities(rows, labels=labels))[0]
    assert [r.label for r in amount.rows] == [
        "female vs male", "female vs male, corrected by labels", "control: male vs male"
    ]  # fmt: skip
    judged, corrected = amount.rows[0], amount.rows[1]
    assert "corrected by human labels (n_labelled=20)" in corrected.hover
    assert judged.bar_width > 5 * corrected.bar_width  # -7.8% by the judge, about 0 by people
