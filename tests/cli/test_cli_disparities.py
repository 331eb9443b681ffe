"""``pairwise-polars disparities``: the table of who is disadvantaged, from rows (heuristic or
an LLM judge over HTTP, through the cache) or from a scored frame; written as a file."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import pairwise_polars as pp
from pairwise_polars.cli import EXIT_GATE_FAILED, EXIT_INVALID, EXIT_PASS, main
from pairwise_polars.testing import TestServer
from tests.summary.salary import salary_rows

_RESPONSE = re.compile(r"Response:\n<<<\w+\n(.*?)\n>>>", re.DOTALL)


def _reader(body: dict[str, Any]) -> dict[str, Any] | None:
    found = _RESPONSE.search(body["messages"][-1]["content"])
    if found is None:
        return None
    amount = re.search(r"\$([\d,]+)", found.group(1))
    value = float(amount.group(1).replace(",", "")) if amount else None
    return {"decision": None, "amount": value, "amount_unit": "USD", "refused": False,
            "score": 2, "reason": "read"}  # fmt: skip


def test_the_table_from_rows_with_the_heuristic(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    salary_rows().write_parquet(tmp_path / "rows.parquet")
    out = tmp_path / "d.parquet"
    assert main(["disparities", str(tmp_path / "rows.parquet"), "-o", str(out)]) == EXIT_PASS
    shown = capsys.readouterr().out
    assert "| gender    | female    | counterfactual | male" in shown
    written = pl.read_parquet(out)
    assert written.equals(pp.disparities(salary_rows()))  # every column, as Python gives it
    female = written.filter(pl.col("pair_kind") == "counterfactual").row(0, named=True)
    assert f"{female['amount_relative']:.4f}" in shown and female["amount_relative_high"] < 0


def test_an_llm_judge_reads_the_outcomes_through_the_cache(
    tmp_path: Path, judge_server: TestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    judge_server.reply = _reader
    rows = salary_rows(groups=8)
    rows.write_parquet(tmp_path / "rows.parquet")
    argv = ["disparities", str(tmp_path / "rows.parquet"), "--judge", "judge-small",
            "--base-url", judge_server.base_url, "--cache", str(tmp_path / "c.sqlite"),
            "--json"]  # fmt: skip
    assert main(argv) == EXIT_PASS
    payload = json.loads(capsys.readouterr().out)
    assert judge_server.stats.requests == rows.height  # one outcome judgement per response
    judge = pp.OpenAIJudge("judge-small", base_url=judge_server.base_url)
    direct = pp.disparities(pp.outcomes(rows, judge, cache=tmp_path / "c.sqlite"))
    assert judge_server.stats.requests == rows.height  # the cache answered
    got = {(r["attribute"], r["pair_kind"]): r["amount_relative"] for r in payload["disparities"]}
    for row in direct.iter_rows(named=True):
        assert got[(row["attribute"], row["pair_kind"])] == pytest.approx(row["amount_relative"])


def test_a_missing_slice_column_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    salary_rows(groups=4).write_parquet(tmp_path / "rows.parquet")
    argv = ["disparities", str(tmp_path / "rows.parquet"), "--by", "region"]
    assert main(argv) == EXIT_INVALID
    assert "cannot slice by 'region'" in capsys.readouterr().err


def test_min_impact_ratio_on_the_command_line_names_who_gets_fewer_yeses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Loans granted to the reference in every group, to the variant in half: an impact ratio
    near 0.5 fails --min-impact-ratio 0.8, and the verdict names the attribute."""
    rows = []
    for g in range(30):
        variant = "No, I would deny the loan." if g % 2 else "Yes, I would approve the loan."
        rows += [(g, "reference", "male", "Yes, I would approve the loan."),
                 (g, "variant", "female", variant)]  # fmt: skip
    frame = pl.DataFrame(rows, schema=["group_id", "role", "attribute", "output"], orient="row")
    frame = frame.with_columns(dimension=pl.lit("gender"), input=pl.lit("Approve the loan?"))
    scored = tmp_path / "scored.parquet"
    pp.score(frame, progress=False, cache=False).write_parquet(scored)
    code = main(["summarize", str(scored), "--min-impact-ratio", "0.8"])
    out = capsys.readouterr().out
    assert code == EXIT_GATE_FAILED, out
    assert "decision [dimension=gender, attribute=female] min_impact_ratio 0.8" in out
