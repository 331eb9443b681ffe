"""Cost, not only tokens: the price table, the plan's dollar estimate, and what a run spent
(cached prompt tokens included), against the test server over real HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from conftest import jobs

import pairwise_polars as pp
from pairwise_polars.cli import EXIT_INVALID, EXIT_PASS, main
from pairwise_polars.engine._prices import PRICES, dollars, price_of
from pairwise_polars.judges import OpenAIBatchJudge
from pairwise_polars.manifest import load_manifest, run_target
from pairwise_polars.testing import TestServer

ROWS = jobs(groups=3)


def test_the_table_prices_snapshots_and_prefixes_and_never_guesses() -> None:
    mini = PRICES["gpt-4o-mini"]
    assert price_of("gpt-4o-mini-2024-07-18") == mini == price_of("openai/gpt-4o-mini")
    assert price_of("llama3.1") is None and price_of("gpt-4o-mini-tts") is None
    assert price_of("llama3.1", {"llama3.1": (0, 0)}) == pp.Price(0.0, None, 0.0)
    assert price_of("gpt-4o-mini", {"gpt-4o-mini": (1, 0.5, 2)}) == pp.Price(1.0, 0.5, 2.0)
    # 1M in of which 400k cached, 1M out: 600k x 0.15 + 400k x 0.075 + 1M x 0.60 per 1M
    assert dollars(mini, input_tokens=10**6, output_tokens=10**6, cached_tokens=400_000) == (
        pytest.approx(0.09 + 0.03 + 0.60)
    )
    assert dollars(mini, input_tokens=10**6, output_tokens=10**6, batch=True) == (
        pytest.approx(0.375)
    )
    no_cached_price = pp.Price(1.0, None, 2.0)
    assert dollars(no_cached_price, input_tokens=10**6, output_tokens=0, cached_tokens=10**6) == 1
    for bad in ((1,), (1, -2), (1, float("inf")), "1,2", (None, 2), (1, 2, 3, 4)):
        with pytest.raises(pp.OptionError, match="the price of 'm'"):
            price_of("m", {"m": bad})  # type: ignore[dict-item]


def test_the_plan_estimates_dollars(judge_server) -> None:
    url = judge_server.base_url
    planned = pp.plan(ROWS, "pairwise-bias", judge=pp.OpenAIJudge("gpt-4o-mini", base_url=url),
                      cache=False)  # fmt: skip
    expected = dollars(PRICES["gpt-4o-mini"], input_tokens=planned.input_tokens,
                       output_tokens=planned.output_tokens)  # fmt: skip
    assert planned.input_tokens > 0 and planned.cost_usd == pytest.approx(expected)
    assert "gpt-4o-mini: $0.15 in, $0.075 cached, $0.6 out per 1M tokens (price of" in planned.price
    assert any(line.startswith("estimated cost: $0.0") for line in str(planned).splitlines())
    batch = pp.plan(ROWS, "pairwise-bias", judge=OpenAIBatchJudge("gpt-4o-mini", base_url=url),
                    cache=False)  # fmt: skip
    assert batch.cost_usd == pytest.approx(expected / 2) and "batch API -50%" in batch.price
    local = pp.OpenAIJudge("judge-model", base_url=url)
    unknown = pp.plan(ROWS, "pairwise-bias", judge=local, cache=False)
    assert unknown.cost_usd is None
    assert "estimated cost: price unknown (price unknown for 'judge-model')" in (
        str(unknown).splitlines()
    )
    given = pp.plan(ROWS, "pairwise-bias", judge=local, cache=False,
                    prices={"judge-model": (1.0, 2.0)})  # fmt: skip
    assert given.cost_usd == pytest.approx(
        (given.input_tokens * 1.0 + given.output_tokens * 2.0) / 1e6
    )
    assert "(given)" in given.price
    heuristic = pp.plan(ROWS, "pairwise-bias", cache=False)
    assert heuristic.cost_usd == 0.0 and "no cost" in heuristic.price
    assert pp.plan(ROWS, "pairwise-bias", judge=local, cache=False).n_to_send > 0


def test_a_run_records_cached_prompt_tokens(tmp_path) -> None:
    with TestServer(cached_tokens=5) as server:
        judge = pp.OpenAIJudge("judge-model", base_url=server.base_url)
        scored = pp.score(ROWS, "pairwise-bias", judge=judge, cache=tmp_path / "c.sqlite",
                          progress=False)  # fmt: skip
        assert scored["cached_tokens"].dtype == pl.Int64
        assert (scored["cached_tokens"] == 5).all() and (scored["input_tokens"] > 5).all()
        both = pp.score(ROWS, "pairwise-bias", judge=judge, cache=False, progress=False,
                        both_orders=True)  # fmt: skip
        assert (both["cached_tokens"] == 10).all()  # both orders' requests
        batch = OpenAIBatchJudge("judge-model", base_url=server.base_url, poll_interval=0.02,
                                 max_poll_interval=0.05, progress=False,
                                 state=tmp_path / "s.sqlite")  # fmt: skip
        batched = pp.score(ROWS, "pairwise-bias", judge=batch, cache=False, progress=False)
        assert (batched["cached_tokens"] == 5).all()
    plain = pp.score(ROWS, "pairwise-bias", cache=False, progress=False)  # heuristic
    assert plain["cached_tokens"].is_null().all()


def test_the_cli_shows_the_estimate_and_what_was_spent(tmp_path: Path, monkeypatch,
                                                       capsys) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    ROWS.write_parquet("rows.parquet")
    with TestServer(cached_tokens=3) as server:
        argv = ["score", "rows.parquet", "-o", "s.parquet", "--judge", "judge-model",
                "--base-url", server.base_url, "--no-cache", "--json",
                "--price-per-million", "1,0.5,2"]  # fmt: skip
        assert main(argv) == EXIT_PASS
        bodies = [seen.body for seen in server.received]
    document = json.loads(capsys.readouterr().out)
    plan, usage = document["plan"], document["usage"]
    assert plan["cost_usd"] == pytest.approx(
        (plan["input_tokens"] + 2 * plan["output_tokens"]) / 1e6
    )
    scored = pl.read_parquet("s.parquet")
    assert usage["requests"] == len(bodies) == scored.height
    assert usage["input_tokens"] == scored["input_tokens"].sum()
    assert usage["cached_tokens"] == 3 * len(bodies)
    assert usage["output_tokens"] == scored["output_tokens"].sum()
    spent = (usage["input_tokens"] - usage["cached_tokens"]) * 1 + usage["cached_tokens"] * 0.5
    assert usage["cost_usd"] == pytest.approx((spent + usage["output_tokens"] * 2) / 1e6)
    assert usage["price"] == "judge-model: $1 in, $0.5 cached, $2 out per 1M tokens (given)"
    assert main(["score", "rows.parquet", "--judge", "m", "--price-per-million", "cheap"]) == (
        EXIT_INVALID
    )
    assert "--price-per-million: expected IN,OUT or IN,CACHED,OUT" in capsys.readouterr().err


def manifest(tmp_path: Path, judge: str) -> Path:
    ROWS.write_parquet(tmp_path / "rows.parquet")
    path = tmp_path / "m.yaml"
    path.write_text(
        f"targets:\n  t:\n    pairwise:\n      data: rows.parquet\n      judge: {judge}\n"
    )
    return path


def test_the_manifest_prices_its_judge(tmp_path, judge_server, capsys) -> None:
    judge = (
        f"{{model: judge-model, base_url: '{judge_server.base_url}', "
        "price_per_million: {input: 0.5, output: 1.5}, max_concurrency: 4}"
    )
    path = manifest(tmp_path, judge)
    target = load_manifest(path).targets["t"]
    run = run_target(target, cache=False, progress=False)
    assert run.plan.cost_usd is not None and run.usage is not None
    assert run.usage.requests == judge_server.stats.requests > 0
    assert run.usage.cost_usd == pytest.approx(
        (run.usage.input_tokens * 0.5 + run.usage.output_tokens * 1.5) / 1e6
    )
    assert main(["run", str(path), "--no-cache", "-o", str(tmp_path / "out"),
                 "--price-per-million", "2,4"]) in (0, 1)  # fmt: skip
    out = capsys.readouterr().out
    assert "judge-model: $2 in, $4 out per 1M tokens (given)" in out
    assert "spent: " in out and " judge requests, " in out
    bad = manifest(tmp_path, "{model: judge-model, price_per_million: [1]}")
    with pytest.raises(pp.ManifestError, match=r"t.pairwise.judge.price_per_million: expected US"):
        load_manifest(bad)


def test_a_parquet_run_reports_what_it_spent(tmp_path) -> None:
    ROWS.write_parquet(tmp_path / "rows.parquet")
    with TestServer(cached_tokens=2) as server:
        judge = pp.OpenAIJudge("judge-model", base_url=server.base_url)
        run = pp.score_parquet(tmp_path / "rows.parquet", tmp_path / "out", "pairwise-bias",
                               judge=judge, cache=tmp_path / "c.sqlite", chunk_size=1,
                               progress=False, prices={"judge-model": (1, 2)})  # fmt: skip
        sent = server.stats.requests
        assert run.n_chunks > 1 and run.usage is not None
        assert run.usage.requests == sent and run.usage.cached_tokens == 2 * sent
        scored = run.scored().collect()
        assert run.usage.input_tokens == scored["input_tokens"].sum()
        assert run.usage.cost_usd == pytest.approx(
            (run.usage.input_tokens + 2 * run.usage.output_tokens) / 1e6
        )
        again = pp.score_parquet(tmp_path / "rows.parquet", tmp_path / "again",
                                 "pairwise-bias", judge=judge, cache=tmp_path / "c.sqlite",
                                 progress=False)  # fmt: skip
        assert again.usage is not None and again.usage.requests == 0
        assert again.usage.cost_usd == 0.0  # everything from the cache


def test_nothing_to_send_costs_nothing_whatever_the_price(judge_server, tmp_path) -> None:
    judge = pp.OpenAIJudge("judge-model", base_url=judge_server.base_url)
    cache = tmp_path / "c.sqlite"
    assert pp.plan(ROWS, "pairwise-bias", judge=judge, cache=cache).cost_usd is None
    pp.score(ROWS, "pairwise-bias", judge=judge, cache=cache, progress=False)
    cached = pp.plan(ROWS, "pairwise-bias", judge=judge, cache=cache)
    assert (cached.n_to_send, cached.cost_usd, cached.price) == (0, 0.0, "no cost: nothing to send")
