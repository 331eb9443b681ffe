"""Prices that age: the shipped, dated prices file, a user's file over it (Python, manifest,
command line), and what a plan says about the price it used."""

from __future__ import annotations

import csv
import textwrap
from datetime import date, timedelta
from pathlib import Path

import pytest
from conftest import jobs

import pairwise_polars as pp
from pairwise_polars.cli import EXIT_INVALID, EXIT_PASS, main
from pairwise_polars.engine._prices import PRICE_COLUMNS, PRICES, PRICES_FILE, price_of
from pairwise_polars.manifest import load_manifest

TODAY = date.today()


def prices_file(path: Path, *rows: dict[str, object]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=PRICE_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return path


def row(model: str, **fields: object) -> dict[str, object]:
    return {"provider": "openai", "model": model, "input": 1.0, "cached_input": 0.1,
            "output": 2.0, "batch_discount": 0.5, "as_of": TODAY.isoformat(), **fields}  # fmt: skip


def test_the_shipped_file_is_dated_and_covers_both_families() -> None:
    with PRICES_FILE.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0]) == PRICE_COLUMNS and len(PRICES) == len(rows)
    assert {r["provider"] for r in rows} == {"openai", "anthropic"}
    assert all(price.as_of is not None for price in PRICES.values())
    haiku = price_of("anthropic/claude-haiku-4-5-20251001")
    assert haiku is not None and haiku.provider == "anthropic" and haiku.input == 1.0
    assert all(r["source"] for r in rows)  # every row says where it was checked
    # a judge retired before the run is said to be: 3.5 Sonnet retired on 2025-10-28
    retired = price_of("claude-3-5-sonnet-20241022")
    assert retired is not None and retired.retires is not None
    assert retired.retires.isoformat() == "2025-10-28"


def test_the_plan_states_the_date_and_warns_when_stale_or_unknown() -> None:
    def plan(model: str, **options: object) -> pp.Plan:
        judge = pp.OpenAIJudge(model, base_url="http://127.0.0.1:9/v1")
        return pp.plan(jobs(groups=2), "pairwise-bias", judge=judge, cache=False, **options)

    shipped = plan("gpt-4o-mini")
    as_of = PRICES["gpt-4o-mini"].as_of
    assert as_of is not None and f"(price of {as_of})" in shipped.price
    stale = (TODAY - as_of).days > 183
    assert any("months old" in w for w in shipped.price_warnings) == stale
    unknown = plan("my-local-model")
    assert unknown.cost_usd is None
    assert unknown.price_warnings == (
        "no price for 'my-local-model': the cost is unknown (give one with prices=..., a prices "
        "file or --price-per-million)",
    )
    assert "warning: no price for 'my-local-model'" in str(unknown)


def test_a_prices_file_overrides_and_a_retired_judge_is_flagged(tmp_path: Path) -> None:
    path = prices_file(tmp_path / "prices.csv",
                       row("gpt-4o-mini", input=9.0, as_of=(TODAY - timedelta(400)).isoformat()),
                       row("judge-x", retires=(TODAY - timedelta(1)).isoformat()),
                       row("judge-y", retires=(TODAY + timedelta(30)).isoformat()))  # fmt: skip
    judge = pp.OpenAIJudge("judge-x", base_url="http://127.0.0.1:9/v1")
    planned = pp.plan(jobs(groups=2), "pairwise-bias", judge=judge, cache=False, prices=path)
    assert planned.cost_usd is not None and planned.cost_usd > 0
    (warning,) = planned.price_warnings  # retired, but the price itself is fresh
    assert f"judge-x was retired by its provider on {TODAY - timedelta(1)}" in warning
    assert "breaks comparability with earlier runs" in warning
    mini = price_of("gpt-4o-mini", path)
    assert mini is not None and mini.input == 9.0  # the user's file wins over the shipped one
    judge_y = pp.OpenAIJudge("judge-y", base_url="http://127.0.0.1:9/v1")
    later = pp.plan(jobs(groups=2), "pairwise-bias", judge=judge_y, cache=False, prices=path)
    assert later.price_warnings == () and f"retires {TODAY + timedelta(30)}" in later.price


def test_a_bad_prices_file_names_the_row_and_column(tmp_path: Path) -> None:
    path = prices_file(tmp_path / "bad.csv", row("a"), row("b", output="cheap"))
    with pytest.raises(pp.OptionError, match=r"bad.csv, row 3, column output: expected a price"):
        price_of("a", path)
    dated = prices_file(tmp_path / "dated.csv", row("a", as_of="last year"))
    with pytest.raises(pp.OptionError, match=r"row 2, column as_of: expected a date as YYYY-MM"):
        price_of("a", dated)


def test_manifest_and_command_line_take_a_prices_file(tmp_path: Path, capsys) -> None:
    prices_file(tmp_path / "prices.csv", row("heuristic-free-model", input=4.0))
    jobs(2).write_parquet(tmp_path / "jobs.parquet")
    block = """
        targets:
          t:
            pairwise:
              data: jobs.parquet
              judge: {{model: heuristic-free-model, base_url: "http://127.0.0.1:9/v1",
                       prices: {prices}}}
        """
    (tmp_path / "m.yaml").write_text(textwrap.dedent(block.format(prices="prices.csv")))
    spec = load_manifest(tmp_path / "m.yaml").targets["t"].judge
    assert spec.prices["heuristic-free-model"].input == 4.0
    (tmp_path / "m.yaml").write_text(textwrap.dedent(block.format(prices="nowhere.csv")))
    with pytest.raises(pp.ManifestError, match=r"t.pairwise.judge.prices: Cannot read the prices"):
        load_manifest(tmp_path / "m.yaml")

    args = ["score", str(tmp_path / "jobs.parquet"), "--judge", "heuristic-free-model",
            "--base-url", "http://127.0.0.1:9/v1", "--dry-run",
            "-o", str(tmp_path / "s.parquet")]  # fmt: skip
    assert main([*args, "--prices", str(tmp_path / "prices.csv")]) == EXIT_PASS
    out = capsys.readouterr()
    assert "(given)" not in out.out + out.err and f"price of {TODAY}" in out.out + out.err
    assert main([*args, "--prices", str(tmp_path / "nowhere.csv")]) == EXIT_INVALID
    assert "Cannot read the prices file" in capsys.readouterr().err


def test_the_anthropic_judges_are_priced_from_the_file_the_batch_at_its_discount() -> None:
    def plan(kind: type) -> pp.Plan:
        judge = kind("claude-haiku-4-5", base_url="http://127.0.0.1:9/v1", api_key="k")
        return pp.plan(jobs(groups=2), "pairwise-bias", judge=judge, cache=False)

    chat, batch = plan(pp.AnthropicJudge), plan(pp.AnthropicBatchJudge)
    row = PRICES["claude-haiku-4-5"]
    assert f"(price of {row.as_of})" in chat.price and "batch API -50%" in batch.price
    assert chat.cost_usd is not None and batch.cost_usd is not None
    assert batch.cost_usd == pytest.approx(chat.cost_usd * (1 - row.batch_discount))
