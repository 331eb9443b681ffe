"""Request keys and messages are the bytes they were before templates were compiled: a cache
written by an earlier version is hit in full. The expected keys were written by the package
before metrics/_compiled.py existed (data/keys_before_compiled_templates.json)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

import pairwise_polars as pp
from pairwise_polars._schemas import result_frame
from pairwise_polars.engine._cache import JudgementCache
from pairwise_polars.scoring._prepare import prepare
from pairwise_polars.scoring._requests import _request_key, _request_keys

FROZEN = Path(__file__).with_name("data") / "keys_before_compiled_templates.json"


def test_keys_and_messages_match_the_earlier_version() -> None:
    frozen = json.loads(FROZEN.read_text(encoding="utf-8"))
    judge = pp.OpenAIJudge(frozen["model"], base_url=frozen["base_url"], api_key="k")
    pairs = pl.DataFrame(frozen["pairs"])
    prepared = prepare(pairs, frozen["metrics"], judge=judge, both_orders=True)
    assert prepared.requests.select("key", "messages").to_dicts() == frozen["requests"]


def test_a_cache_written_before_resumes_with_every_request_a_hit(tmp_path: Path) -> None:
    frozen = json.loads(FROZEN.read_text(encoding="utf-8"))
    path = tmp_path / "cache.sqlite"
    with JudgementCache(path) as cache:  # what the earlier version stored, by its keys
        rows = [{"key": r["key"], "raw_score": 1, "reason": "earlier", "judge_model": "m"}
                for r in frozen["requests"]]  # fmt: skip
        cache.store(result_frame(rows))
    # Nothing listens on port 9: a single miss would be an unreachable-judge error.
    judge = pp.OpenAIJudge(frozen["model"], base_url=frozen["base_url"], api_key="k")
    scored = pp.score_pairs(pl.DataFrame(frozen["pairs"]), frozen["metrics"], judge=judge,
                            both_orders=True, cache=path, progress=False)  # fmt: skip
    assert scored.height == 6 * 4
    assert scored["error"].null_count() == scored.height
    assert (scored["reason"].str.contains("earlier")).all()


def test_keys_hashed_from_the_bytes_are_those_of_the_text() -> None:
    metrics = [pp.get_metric("pairwise-bias"), pp.get_metric("pairwise-favour")]
    names = pl.Series(["pairwise-bias", "pairwise-favour", "pairwise-bias", "pairwise-favour"])
    texts = ['[{"role": "user", "content": "é 😀 \\u00e9"}]', "[]", None, "x"]
    identity = json.dumps({"model": "m", "endpoint": "http://h/v1"}, sort_keys=True)
    by_name = {m.name: m for m in metrics}
    expected = [
        _request_key(identity, by_name[name], text)  # type: ignore[arg-type]  # None as written
        for name, text in zip(names, texts, strict=True)
    ]
    got = _request_keys(identity, metrics, names, pl.Series(texts, dtype=pl.String))
    assert got == expected


def test_keys_of_messages_sharing_a_beginning_are_those_of_the_text() -> None:
    # The shared beginning ends inside a character ("é" is two bytes) and the column is a
    # slice of a longer one: each key is still the hash of its whole text.
    metric = pp.get_metric("pairwise-bias")
    texts = ["before", "[pré-é 1]", "[pré-è 2]", "[pré-é 1]", "[pré-", "after"]
    column = pl.Series(texts, dtype=pl.String).slice(1, 4)
    identity = json.dumps({"model": "m"}, sort_keys=True)
    names = pl.Series([metric.name] * column.len())
    expected = [_request_key(identity, metric, text) for text in texts[1:5]]
    assert _request_keys(identity, [metric], names, column) == expected
