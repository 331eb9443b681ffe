"""The report's "The judge" section: a panel's agreement and the judge it agrees better
without, read from a frame judged through the test server; figures from the combined rows."""

from __future__ import annotations

import polars as pl

import pairwise_polars as pp
from pairwise_polars.report import render_report
from pairwise_polars.testing import TestServer

ROWS = pl.DataFrame(
    {
        "group_id": [g for g in range(12) for _ in range(2)],
        "role": ["reference", "variant"] * 12,
        "dimension": "gender",
        "input": [f"Should we hire applicant {g}?" for g in range(12) for _ in range(2)],
        "output": [f"answer {i % 5} to {i // 2}" for i in range(24)],
    }
)


def test_a_panel_run_has_the_judge_section(judge_server: TestServer) -> None:
    judge_server.reply = lambda body: (
        {"score": 0, "reason": "0"} if body["model"] == "zero" else None
    )
    panel = [
        pp.OpenAIJudge(m, base_url=judge_server.base_url, api_key="test")
        for m in ("steady-a", "steady-b", "zero")
    ]
    scored = pp.score(ROWS, judge=panel, cache=False, progress=False)
    html = render_report(scored)
    assert "<h2>The judge</h2>" in html
    assert "panel agreement (alpha)" in html
    assert "zero: the panel agrees better without this judge" in html
    # the slice table counts pairs once: the combined rows, not one row per judge
    combined = pp.aggregate(scored)
    assert combined["n_pairs"].item() == 12
    assert f"<td>{combined['judge_agreement'].item():.3f} [" in html


def test_a_plain_run_has_no_judge_section() -> None:
    scored = pp.score(ROWS, cache=False, progress=False)
    assert "<h2>The judge</h2>" not in render_report(scored)
