"""The report in a real browser: headless Chromium, driven over the DevTools protocol, renders it
at a desktop and a narrow width; a layout check measures the element boxes (nothing outside the
window, no text cut off, no label over a bar, a whisker or a gate mark, no chart text over
another), screenshots are taken, and the page logs nothing (no CSP violation, no error).

One browser serves the module (a start costs a second or two).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from browser import CHROMIUM, LAYOUT_CHECK, Chromium
from conftest import jobs

import pairwise_polars as pp
from pairwise_polars.report import write_report
from pairwise_polars.summary import gate_summary, summarize

DATA = Path(__file__).resolve().parents[2] / "data"
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed (Debian: apt-get install chromium; .ci/run installs it)",
)
WIDTHS = {"desktop": (1280, 900), "narrow": (390, 844)}
OPEN_ALL = "document.querySelectorAll('details').forEach(d => { d.open = true; })"
LONG_ERROR = (
    "HTTP 503 from the judge after 7 attempts: the upstream model server was overloaded and did "
    "not answer in time; try again later, or lower --max-concurrency and --requests-per-minute"
)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
    chromium = Chromium(tmp_path_factory.mktemp("chromium") / "profile")
    yield chromium
    chromium.close()


@pytest.fixture(scope="module")
def letters_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The letters sample scored in both orders: a failing gate, error rows with a long message,
    long letters (behind "read all")."""
    scored = pp.score(
        DATA / "letters_contrastive.parquet", ["pairwise-refusal-disparity", "pairwise-bias"],
        strategy="contrastive", both_orders=True, cache=False, progress=False,
    )  # fmt: skip
    broken = pl.col("pair_id").is_in(scored["pair_id"].unique().sort().head(3).implode())
    scored = scored.with_columns(
        score=pl.when(broken).then(None).otherwise(pl.col("score")),
        error=pl.when(broken).then(pl.lit(LONG_ERROR)).otherwise(pl.col("error")),
    )
    summary = summarize(scored)
    gates = gate_summary(summary, overall={"max_mean_divergence": 0.8},
                         per_slice={"max_mean_divergence": {"pairwise-bias": 0.06}})  # fmt: skip
    path = tmp_path_factory.mktemp("report") / "letters.html"
    return write_report(path, scored, summary=summary, gates=gates, title="Letters",
                        about={"data": str(DATA / "letters_contrastive.parquet")})  # fmt: skip


@pytest.fixture(scope="module")
def noise_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seven dimensions with long slice names, control pairs and the noise-floor figures, gates
    on every slice: the crowded case."""
    scored = pp.score(jobs(), "pairwise-bias", cache=False, progress=False)
    scored = scored.with_columns(
        dimension=pl.col("dimension") + " (a long slice name that has to wrap somewhere)"
    )
    controls = scored.with_columns(
        pair_id=pl.col("pair_id") + 1, score=(pl.col("score") / 2).round(2),
        pair_kind=pl.lit("control"),
    )  # fmt: skip
    both = pl.concat([scored.with_columns(pair_kind=pl.lit("counterfactual")), controls])
    summary = summarize(scored).with_columns(
        n_control=pl.col("n_pairs"),
        control_mean_divergence=pl.col("mean_divergence") / 2,
        excess_divergence=pl.col("mean_divergence") / 2,
        excess_divergence_low=pl.col("mean_divergence") / 2 - 0.1,
        excess_divergence_high=pl.col("mean_divergence") / 2 + 0.1,
    )
    gates = gate_summary(summarize(scored), per_slice={"max_mean_divergence": 0.3,
                                                       "max_divergence_rate": 0.35})  # fmt: skip
    path = tmp_path_factory.mktemp("report") / "noise.html"
    return write_report(path, both, summary=summary, gates=gates, title="Jobs with controls")


def _png(data: bytes) -> tuple[int, int, bytes]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    chunks, at = [], 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        if data[at + 4 : at + 8] == b"IDAT":
            chunks.append(data[at + 8 : at + 8 + length])
        at += 12 + length
    return width, height, zlib.decompress(b"".join(chunks))


@pytest.mark.parametrize("width", list(WIDTHS))
@pytest.mark.parametrize("report", ["letters_report", "noise_report"])
def test_nothing_overflows_or_overlaps(
    browser: Chromium, request: pytest.FixtureRequest, report: str, width: str, tmp_path: Path
) -> None:
    page: Path = request.getfixturevalue(report)
    w, h = WIDTHS[width]
    for prepare in ("", OPEN_ALL):  # as delivered, then with every "read all" and fold open
        visit = browser.visit(page.as_uri(), w, h, LAYOUT_CHECK, prepare=prepare)
        assert visit.problems == [], visit.problems[:10]
        assert visit.logged == []  # no CSP violation, no error
        assert visit.measured["pageWidth"] == w and visit.measured["charts"] >= 4
        (tmp_path / f"{report}-{width}.png").write_bytes(visit.screenshot)
        shot_w, shot_h, pixels = _png(visit.screenshot)
        assert (shot_w, shot_h) == (w, h)
        assert len(set(pixels)) > 50 and pixels.count(255) < 0.97 * len(pixels)  # drawn


def test_the_layout_check_finds_what_it_looks_for(browser: Chromium, tmp_path: Path) -> None:
    """A page with each fault the check exists for: it must report every one."""
    page = tmp_path / "broken.html"
    page.write_text(
        '<!DOCTYPE html><html><body style="margin:0">'
        '<div style="width:2000px">too wide</div>'
        '<div class="irow" style="display:grid;grid-template-columns:100px 200px 100px">'
        '<span class="ilabel">slice</span><span class="itrack" style="position:relative">'
        '<span class="igate" style="position:absolute;left:210px;top:0;height:20px;'
        'border-left:2px dashed red"></span></span><span class="ivalue">0.500</span></div>'
        '<svg class="chart" width="200" height="100"><text x="10" y="20">first label</text>'
        '<text x="20" y="22">second label</text><text x="190" y="50">outside</text></svg>'
        '<p style="width:60px;overflow:hidden;white-space:nowrap">a text that is cut off</p>'
        "</body></html>",
        encoding="utf-8",
    )
    problems = browser.visit(page.as_uri(), 800, 600, LAYOUT_CHECK).problems
    found = "\n".join(problems)
    assert "the page is 2000px wide in a 800px window" in found
    assert "a mark leaves its track" in found and "overlaps text" in found
    assert 'chart texts overlap: "first label" and "second label"' in found
    assert "chart text outside its chart" in found and '"outside"' in found
    assert 'text cut off: <p> "a text that is cut off"' in found


def test_console_errors_and_csp_violations_are_caught(browser: Chromium, tmp_path: Path) -> None:
    page = tmp_path / "noisy.html"
    page.write_text(
        '<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="default-src '
        '\'none\'"><p>x</p><img src="http://127.0.0.1:9/pixel.png"><script>boom();</script>',
        encoding="utf-8",
    )
    logged = browser.visit(page.as_uri(), 800, 600, LAYOUT_CHECK).logged
    assert any("violates the following Content Security Policy" in m for m in logged)
    unsafe = tmp_path / "unsafe.html"
    unsafe.write_text("<!DOCTYPE html><p>x</p><script>missingFunction();</script>")
    logged = browser.visit(unsafe.as_uri(), 800, 600, LAYOUT_CHECK).logged
    assert any("missingFunction is not defined" in m for m in logged)
