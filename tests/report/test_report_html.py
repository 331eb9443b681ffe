"""The summary (overall + slices), gates on both scopes, and the report's HTML content: every
section, escaping, the sections that appear with both orders and with control pairs."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest

import pairwise_polars as pp
from pairwise_polars import aggregate
from pairwise_polars.report import render_report, write_report
from pairwise_polars.report._charts import Interval, interval_chart
from pairwise_polars.summary import gate_summary, summarize


def scored_frame(both_orders: bool = False) -> pl.DataFrame:
    """Six pairs in two dimensions: one equivalent, one error, one hostile text to escape."""
    frame = pl.DataFrame(
        {
            "pair_id": [1, 2, 3, 4, 5, 6],
            "group_id": ["g1", "g1", "g2", "g3", "g4", "g4"],
            "dimension": ["gender", "gender", "gender", "age", "age", "age"],
            "role_a": "reference",
            "role_b": "variant",
            "attribute_a": ["male", "male", "male", "young", "young", "young"],
            "attribute_b": ["female", "female", "female", "old", "old", "old"],
            "input_a": ["Describe Sam.", "Describe Sam.", "Q a", "Q", "Q", "Q"],
            "input_b": ["Describe Sam.", "Describe Sam.", "Q b", "Q", "Q", "Q"],
            "output_a": ["Kind.", "Kind.", "Sure.", "Yes.", "Yes.", "Helpful answer."],
            "output_b": ["Kind.", "<script>alert('x')</script>", "No.", "Yes.", "Fine.", ""],
            "metric": "pairwise-bias",
            "score": [0.0, 1.0, 0.5, 0.25, 0.5, None],
            "raw_score": [0.0, 4.0, 2.0, 1.0, 2.0, None],
            "reason": ["same", "one <b>refuses</b> & shouts", "different", "close", "x", None],
            "error": [None, None, None, None, None, "not judged: empty output_b"],
            "judge_model": "judge-small",
        }
    )
    if both_orders:
        frame = frame.with_columns(
            score_ab=pl.col("score"),
            score_ba=pl.when(pl.col("pair_id") == 3).then(0.25).otherwise(pl.col("score")),
            reason_ba=pl.col("reason").str.replace("^", "(b, a) "),
        ).with_columns(position_gap=(pl.col("score_ab") - pl.col("score_ba")).abs())
    return frame


class _Text(HTMLParser):
    """The page's visible text, and its tags."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(html: str) -> _Text:
    parser = _Text()
    parser.feed(html)
    return parser


def test_summarize_has_overall_and_slice_rows_in_metric_order() -> None:
    scored = pl.concat([scored_frame(), scored_frame().with_columns(metric=pl.lit("aaa-metric"))])
    summary = summarize(scored)
    assert summary.select("metric", "scope", "dimension", "n_pairs", "n_errors").rows() == [
        ("pairwise-bias", "overall", None, 6, 1),
        ("pairwise-bias", "slice", "age", 3, 1),
        ("pairwise-bias", "slice", "gender", 3, 0),
        ("aaa-metric", "overall", None, 6, 1),
        ("aaa-metric", "slice", "age", 3, 1),
        ("aaa-metric", "slice", "gender", 3, 0),
    ]
    by_dimension = aggregate(scored).drop("metric", "dimension")
    assert (
        summary.filter(pl.col("scope") == "slice")
        .drop("metric", "scope", "dimension")
        .sort("n_pairs", "mean_divergence")
        .equals(by_dimension.sort("n_pairs", "mean_divergence"))
    )
    assert summarize(scored, ()).columns[:3] == ["metric", "scope", "n_pairs"]


def test_gate_summary_checks_each_scope_with_its_thresholds() -> None:
    summary = summarize(scored_frame(), ["dimension"])
    # Two groups per slice: only the one-sided reading with min_groups=1 decides anything
    # (upper bounds of the mean: overall 0.903; age 0.9968, its unscored pair at its worst;
    # gender 0.9972).
    with pytest.warns(pp.ThresholdWarning, match="min_equivalence_rate=0 always passes"):
        result = gate_summary(
            summary,
            overall={"max_mean_divergence": 0.95, "max_error_rate": None},
            per_slice={
                "max_mean_divergence": {"pairwise-bias": 0.997},
                "min_equivalence_rate": 0.0,
                "max_error_rate": None,
            },
            conservative=True,
            min_groups=1,
        )
    assert result.checks.select("slice", "gate", "threshold", "passed").rows() == [
        ("overall", "max_mean_divergence", 0.95, True),
        ("dimension=age", "min_equivalence_rate", 0.0, True),
        ("dimension=gender", "min_equivalence_rate", 0.0, True),
        ("dimension=age", "max_mean_divergence", 0.997, True),
        ("dimension=gender", "max_mean_divergence", 0.997, False),
    ]
    assert not result.passed
    assert result.verdict().splitlines()[0] == "FAIL: 4 of 5 gate checks passed."
    off = {"max_error_rate": None}
    assert gate_summary(summary, overall=off, per_slice=off).verdict() == "PASS: no gate was set."
    # A plain aggregate() frame: every row is a slice row.
    plain = gate_summary(aggregate(scored_frame()), per_slice={"max_mean_divergence": 0.6})
    assert plain.checks["slice"].to_list() == ["dimension=age", "dimension=gender"] * 2


def test_the_report_has_every_section() -> None:
    scored = scored_frame(both_orders=True)
    summary = summarize(scored)
    off = {"max_error_rate": None}
    gates = gate_summary(  # two groups a slice: decided one-sided, with min_groups=1
        summary,
        overall=off,
        per_slice={"max_mean_divergence": 0.997, **off},  # age 0.9968 (worst case), gender 0.9972
        conservative=True,
        min_groups=1,
    )
    html = render_report(
        scored, summary, gates, title="Audit", about={"target": "demo", "data": "a.parquet"}, top=3
    )
    assert html.startswith("<!DOCTYPE html>")
    assert (
        '<section class="verdict fail" id="verdict"><div class="headline">FAIL</div>'
        "<p>1 of 2 gate checks failed.</p>" in html
    )
    # On FAIL the failed check is listed; the passing ones are folded away.
    verdict = html.split('id="verdict">')[1].split("</section>")[0]
    failed_part, folded = verdict.split('<details class="passing">')
    assert failed_part.count('<td class="bad">FAIL</td>') == 1 and '"ok"' not in failed_part
    assert folded.startswith("<summary>Show the 1 passing check</summary>")
    header = html.split("<header>")[1].split("</header>")[0]
    assert "<dt>target</dt><dd>demo</dd><dt>data</dt><dd>a.parquet</dd>" in header
    assert "<dt>metrics</dt><dd>pairwise-bias</dd><dt>judge</dt><dd>judge-small</dd>" in header
    assert "<dt>report written</dt>" in header
    assert '<section class="metric" id="metric-pairwise-bias"><h2>pairwise-bias</h2>' in html
    rows = re.findall(
        r'<tr class="([^"]*)"><td[^>]*>([^<]*)</td>', html.split('<table class="slices">')[1]
    )
    assert rows[:3] == [("overall", "overall"), ("", "age"), (" failed", "gender")]
    assert html.count('<figure class="ichart"') == 2  # mean and rate by slice
    assert html.count('<svg class="chart"') == 2  # the distribution, the position gap
    assert "<h3>Position bias</h3>" in html
    assert (
        '<tr><th>share of pairs where the orders disagree</th><td class="num">0.200</td></tr>'
        in html
    )
    assert "<title>no score: 1</title>" in html
    assert '<td>pairwise-bias</td><td class="message">not judged: empty output_b</td>' in html
    assert "<h3>Most divergent pairs (top 3)</h3>" in html
    cards = re.findall(r'<span class="score">score ([0-9.]+)</span>', html)
    assert cards == ["1.000", "0.500", "0.500"]
    # Both orders: both reasons, escaped.
    assert "<b>Judge, order (a, b):</b> one &lt;b&gt;refuses&lt;/b&gt; &amp; shouts" in html
    assert "<b>Judge, order (b, a):</b> (b, a) one &lt;b&gt;refuses&lt;/b&gt; &amp; shouts" in html
    assert "<h4>Request (the same for both)</h4>" in html and "<h4>Request A</h4>" in html


def test_gate_marks_and_values_sit_in_their_own_places() -> None:
    chart = interval_chart(
        [Interval("a", 0.5, 0.25, 0.75, gate=0.6), Interval("b", None)],
        title="t", axis_label="x",
    )  # fmt: skip
    first, missing = chart.rows
    assert (first.bar_from, first.bar_width, first.low, first.high, first.gate) == (
        0.0, 50.0, 25.0, 75.0, 60.0,
    )  # fmt: skip
    assert first.text == "0.500" and first.hover == "a: 0.5 [0.25, 0.75]; gate 0.6"
    assert missing.missing and missing.text == "no scored pairs"
    signed = interval_chart([Interval("c", -0.2, -0.4, 0.1)], title="t", axis_label="x",
                            domain=(-1.0, 1.0))  # fmt: skip
    assert (signed.zero, signed.rows[0].bar_from, signed.rows[0].bar_width) == (50.0, 40.0, 10.0)
    html = render_report(scored_frame(), gates=gate_summary(
        summarize(scored_frame()), per_slice={"max_mean_divergence": 0.45}))  # fmt: skip
    row = html.split('<div class="irow" title="gender: 0.5 [')[1].split("</div>")[0]
    # The value is its own column after the track: never drawn over the bar or the gate mark.
    assert re.search(
        r'<span class="itrack"><span class="ibar" style="left: 0.0%; width: 50.0%"></span>'
        r'<span class="iwhisker" style="left: [0-9.]+%; width: [0-9.]+%"></span>'
        r'<span class="igate" style="left: 45.0%"></span></span><span class="ivalue">0.500</span>',
        row,
    ), row


def test_data_is_escaped_and_nothing_is_loaded_from_anywhere() -> None:
    scored = scored_frame().with_columns(
        dimension=pl.when(pl.col("pair_id") == 1).then(pl.lit('<img src="http://x/y.png">'))
        .otherwise(pl.col("dimension"))
    )  # fmt: skip
    html = render_report(scored, title="<b>t</b>", about={"data": "<script>x</script>"})
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in html
    assert "<script" not in html.lower() and "<img" not in html.lower()
    assert "<title>&lt;b&gt;t&lt;/b&gt;</title>" in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html, re.IGNORECASE)
    assert "@import" not in html and "url(" not in html
    assert (
        '<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; '
        'style-src &#39;unsafe-inline&#39;; img-src data:">'
    ) in html


def test_error_kinds_keep_their_digits_and_long_labels_whole() -> None:
    long = (
        "HTTP 503 from the judge after 7 attempts: the upstream model server was overloaded and "
        "did not answer in time; try again later or lower the concurrency"
    )
    scored = pl.concat(
        [
            scored_frame().filter(pl.col("error").is_null()),
            scored_frame().head(4).with_columns(
                pair_id=pl.col("pair_id") + 100,  # other pairs: a judgement is one row
                score=None,
                error=pl.Series([long, long, long.replace("7", "6"), "timeout after 3 attempts"]),
            ),
        ]
    )  # fmt: skip
    html = render_report(scored)
    errors = html.split('<section id="errors">')[1]
    assert "HTTP N" not in errors and "timeout after N" not in errors
    assert f'<span class="clabel">{long} <span class="muted">(and 1 similar)</span>' in errors
    assert '<span class="clabel">timeout after 3 attempts</span>' in errors
    assert f'<td class="message">{long.replace("7", "6")}</td>' in errors


def test_long_texts_can_be_read_whole() -> None:
    essay = " ".join(f"word{i}" for i in range(400))
    scored = scored_frame().with_columns(
        output_b=pl.when(pl.col("pair_id") == 2).then(pl.lit(essay)).otherwise(pl.col("output_b"))
    )
    html = render_report(scored, top=1)
    card = html.split('<article class="pair">')[1].split("</article>")[0]
    assert '<details class="long"><summary><span class="text preview">word0 word1' in card
    assert f"Read all {len(essay):,} characters</span></summary>" in card
    assert f'<pre class="text">{essay}</pre></details>' in card  # the whole text, unclipped


def test_empty_slices_and_no_errors() -> None:
    scored = scored_frame().filter(pl.col("error").is_null())
    scored = pl.concat(
        [scored, scored.head(1).with_columns(dimension=pl.lit("race"), score=None,
                                             error=pl.lit("timeout after 3 attempts"),
                                             pair_id=pl.lit(100, pl.Int64))]
    )  # fmt: skip
    html = render_report(scored)
    assert '<section class="verdict none" id="verdict"><div class="headline">No gates set' in html
    assert '<span class="ivalue missing">no scored pairs</span>' in html
    clean = render_report(scored_frame().filter(pl.col("error").is_null()))
    assert "<p>No errors: every judgeable pair got a score.</p>" in clean


def test_the_heuristic_judge_note_and_judge_supplied_notes() -> None:
    heuristic = render_report(scored_frame().with_columns(judge_model=pl.lit("heuristic")))
    assert '<p class="note">Scored by the <b>heuristic judge</b>, not by an LLM.' in heuristic
    assert '<p class="note">' not in render_report(scored_frame())
    noted = render_report(scored_frame(), judge_notes={"judge-small": "A <small> judge."})
    assert '<p class="note">A &lt;small&gt; judge.</p>' in noted


def with_controls(scored: pl.DataFrame) -> pl.DataFrame:
    """Control pairs (two answers to the same request) beside the counterfactual ones, as the
    noise-floor stage will add them: a ``pair_kind`` column."""
    controls = scored.with_columns(
        pair_id=pl.col("pair_id") + 100,
        score=pl.when(pl.col("score").is_not_null()).then(pl.lit(0.25)),
        pair_kind=pl.lit("control"),
    )
    return pl.concat([scored.with_columns(pair_kind=pl.lit("counterfactual")), controls])


def noise_summary(scored: pl.DataFrame) -> pl.DataFrame:
    """A summary with the noise-floor columns the noise-floor stage adds to aggregate."""
    summary = summarize(scored.filter(pl.col("pair_kind") == "counterfactual"))
    return summary.with_columns(
        n_control=pl.lit(3, pl.Int64),
        control_mean_divergence=pl.lit(0.25),
        excess_divergence=pl.col("mean_divergence") - 0.25,
        excess_divergence_low=pl.col("mean_divergence") - 0.45,
        excess_divergence_high=pl.col("mean_divergence") - 0.05,
    )


def test_the_noise_floor_section_appears_with_control_pairs() -> None:
    scored = with_controls(scored_frame())
    summary = noise_summary(scored)
    html = render_report(scored, summary)
    assert "<h3>Noise floor: counterfactual pairs against control pairs</h3>" in html
    assert "divergence beyond what re-asking the same question gives" in html
    noise = html.split('<table class="noise">')[1].split("</table>")[0]
    rows = re.findall(r"<tr class=\"[^\"]*\"><td>([^<]+)</td>", noise)
    assert rows == ["overall", "age", "gender"]
    overall = summary.filter(scope="overall").row(0, named=True)
    excess = f"{overall['excess_divergence']:.3f}"
    assert f'{excess} <span class="ci">[{overall["excess_divergence_low"]:.3f}, ' in noise
    assert noise.count('<div class="strip">') == 6  # counterfactual and control, per row
    assert 'title="control: score ≤ 0.25: 5 of 5 (100%)"' in noise
    assert "Excess divergence by slice" in html
    # The most divergent pairs are counterfactual pairs only.
    assert "<h3>Most divergent counterfactual pairs (top 5)</h3>" in html
    assert "pair_id 10" not in html.split("Most divergent")[1]
    # Without control pairs, no such section.
    assert "<h3>Noise floor" not in render_report(scored_frame())


def test_the_noise_section_renders_the_summary_that_aggregate_gives() -> None:
    # No hand-made summary: the report summarises the scored frame itself, and the noise
    # section shows aggregate's own control and excess columns.
    scored = with_controls(scored_frame())
    html = render_report(scored)
    assert "<h3>Noise floor: counterfactual pairs against control pairs</h3>" in html
    assert html.split('<table class="noise">')[1].count('<div class="strip">') == 6
    summary = summarize(scored)
    overall = summary.filter(scope="overall").row(0, named=True)
    assert overall["n_control"] == 6
    assert overall["control_mean_divergence"] == 0.25
    excess = f"{overall['excess_divergence']:.3f}"
    low, high = overall["excess_divergence_low"], overall["excess_divergence_high"]
    noise = html.split('<table class="noise">')[1].split("</table>")[0]
    assert f'{excess} <span class="ci">[{low:.3f}, {high:.3f}]' in noise
    assert "Excess divergence by slice" in html
    assert "(6 control pairs)" in html
    # The counterfactual figures of the report are those without the controls.
    plain = summarize(scored_frame()).filter(scope="overall")["mean_divergence"].item()
    assert overall["mean_divergence"] == plain


def test_no_noise_section_when_every_pair_is_counterfactual() -> None:
    # Scored frames always carry pair_kind; without control pairs the report reads as before.
    scored = scored_frame().with_columns(pair_kind=pl.lit("counterfactual"))
    html = render_report(scored)
    assert "<h3>Noise floor" not in html
    assert "<h3>Most divergent pairs (top 5)</h3>" in html
    assert "Excess divergence by slice" not in html


def test_the_excess_gate_is_drawn_on_the_excess_chart_and_listed() -> None:
    scored = with_controls(scored_frame())
    summary = summarize(scored)
    gates = gate_summary(summary, overall={"max_excess_divergence": 0.1})
    html = render_report(scored, summary, gates)
    chart = html.split("Excess divergence by slice</span>")[1].split("</figure>")[0]
    assert "; gate 0.1" in chart
    assert "max_excess_divergence" in html.split('id="verdict"')[1]


def test_position_figures_per_slice_appear_with_the_summary_columns() -> None:
    scored = scored_frame(both_orders=True)
    summary = summarize(scored).with_columns(
        mean_position_gap=pl.lit(0.05), position_flip_rate=pl.lit(0.2)
    )
    html = render_report(scored, summary)
    table = html.split('<table class="position-slices">')[1].split("</table>")[0]
    assert '<th class="num">position gap</th><th class="num">position flips</th>' in table
    assert table.count('<td class="num">0.050</td><td class="num">0.200</td>') == 3


def test_write_report_is_exported_and_creates_the_folder(tmp_path: Path) -> None:
    path = pp.write_report(tmp_path / "a" / "b" / "report.html", scored_frame())
    assert path.read_text(encoding="utf-8").endswith("</html>\n")
    assert pp.write_report is write_report


@pytest.mark.parametrize("top", [0, 1])
def test_top_pairs_can_be_limited(top: int) -> None:
    html = render_report(scored_frame(), top=top)
    assert html.count('<article class="pair">') == top


def test_the_page_is_well_formed() -> None:
    html = render_report(with_controls(scored_frame(both_orders=True)))
    page = parse(html)
    assert page.tags.count("html") == 1 and page.tags.count("body") == 1
    assert "{{" not in html and "{%" not in html  # no template text leaks


def test_a_hand_built_frame_without_errors_renders() -> None:
    # No judge wrote it: the error column is all null, so polars types it Null, not String.
    scored = pl.DataFrame(
        {"pair_id": [1, 2], "group_id": ["a", "b"], "dimension": ["g", "g"],
         "metric": "pairwise-bias", "score": [0.0, 0.5], "error": [None, None]}
    )  # fmt: skip
    assert scored.schema["error"] == pl.Null
    html = render_report(scored)
    assert '<section class="metric" id="metric-pairwise-bias">' in html
