"""ScoringSpec: one value says how pairs are scored, and every entry point takes it whole."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import pairwise_polars as pp
from pairwise_polars.scoring import prepare
from pairwise_polars.testing import TestServer

ROWS = pl.DataFrame(
    {
        "group_id": [g for g in range(6) for _ in range(2)],
        "role": ["reference", "variant"] * 6,
        "dimension": "gender",
        "input": "Should we hire them?",
        "output": ["Yes, hire them.", "No."] * 3 + ["Yes.", "Yes."] * 3,
    }
)


def test_spec_equals_the_keywords_it_is_built_from() -> None:
    spec = pp.ScoringSpec.of(["pairwise-bias", "pairwise-favour"], both_orders=True)
    by_spec = pp.score(ROWS, spec=spec, cache=False, progress=False)
    by_keywords = pp.score(
        ROWS, ["pairwise-bias", "pairwise-favour"], both_orders=True, cache=False, progress=False
    )
    assert_frame_equal(by_spec.drop("latency_s"), by_keywords.drop("latency_s"))
    assert "position_gap" in by_spec.columns


def test_a_keyword_beside_a_spec_is_refused_by_name() -> None:
    with pytest.raises(pp.OptionError, match=r"\['both_orders'\] were given too"):
        pp.score(ROWS, spec=pp.ScoringSpec.of(), both_orders=True, progress=False)
    with pytest.raises(pp.OptionError, match=r"\['metrics', 'order'\]"):
        pp.plan(ROWS, "pairwise-favour", order="fixed", spec=pp.ScoringSpec.of(), cache=False)


def test_a_spec_is_checked_when_built() -> None:
    with pytest.raises(pp.OptionError, match='order must be "random" or "fixed"'):
        pp.ScoringSpec.of(order="shuffled")  # type: ignore[arg-type]
    with pytest.raises(pp.OptionError, match="at least one metric"):
        pp.ScoringSpec(())


def test_a_judge_named_heuristic_is_the_default_and_other_names_are_refused(
    tmp_path: Path,
) -> None:
    named = pp.score(ROWS, judge="heuristic", cache=False, progress=False)
    default = pp.score(ROWS, cache=False, progress=False)
    assert_frame_equal(named.drop("latency_s"), default.drop("latency_s"))
    fix = r"judge='gpt-4o-mini' is a name, not a judge.*pp.OpenAIJudge\('gpt-4o-mini'\)"
    with pytest.raises(pp.OptionError, match=fix):
        pp.score(ROWS, judge="gpt-4o-mini", progress=False)
    with pytest.raises(pp.OptionError, match=fix):
        pp.plan(ROWS, judge="gpt-4o-mini", cache=False)  # type: ignore[arg-type]
    with pytest.raises(pp.OptionError, match=fix):
        pp.score_parquet(ROWS, tmp_path / "run", judge="gpt-4o-mini")  # type: ignore[arg-type]
    with pytest.raises(pp.OptionError, match=r"judge must be a judge .* got int"):
        pp.ScoringSpec.of(judge=42)  # type: ignore[arg-type]
    spec = pp.ScoringSpec(("pairwise-bias",), "heuristic")  # type: ignore[arg-type]
    assert isinstance(spec.judge, pp.HeuristicJudge)
    with pytest.raises(pp.OptionError, match="is a name, not a judge"):
        pp.outcomes(ROWS, judge="gpt-4o-mini")
    assert_frame_equal(pp.outcomes(ROWS, judge="heuristic"), pp.outcomes(ROWS))


def test_the_keyed_frame_names_each_rows_view(judge_server: TestServer) -> None:
    judge = pp.OpenAIJudge("judge", base_url=judge_server.base_url, api_key="test")
    pairs = pp.form_pairs(ROWS)
    both = prepare(pairs, spec=pp.ScoringSpec.of(judge=judge, both_orders=True))
    assert both.keyed.group_by("view").len().sort("view").rows() == [("a-b", 6), ("b-a", 6)]
    shown = prepare(pairs, spec=pp.ScoringSpec.of(judge=judge))
    scored = pp.score_pairs(pairs, spec=shown.spec, cache=False, progress=False)
    # One order view per pair, and it is the side the judge saw first.
    first = shown.keyed.sort("__pairwise_row")["view"].str.head(1).to_list()
    assert first == scored["shown_first"].to_list()
    assert set(first) == {"a", "b"}


def test_score_parquet_records_the_spec(tmp_path: Path) -> None:
    ROWS.write_parquet(tmp_path / "rows.parquet")
    spec = pp.ScoringSpec.of("pairwise-favour", both_orders=True, order="fixed")
    pp.score_parquet(tmp_path / "rows.parquet", tmp_path / "run", spec=spec, progress=False)
    recorded = json.loads((tmp_path / "run" / "run.json").read_text())["fingerprint"]
    assert (recorded["both_orders"], recorded["order"]) == (True, "fixed")
    assert [m["name"] for m in recorded["metrics"]] == ["pairwise-favour"]
    with pytest.raises(pp.RunStateError, match="both_orders differs"):
        pp.score_parquet(tmp_path / "rows.parquet", tmp_path / "run", "pairwise-favour",
                         order="fixed", progress=False)  # fmt: skip
