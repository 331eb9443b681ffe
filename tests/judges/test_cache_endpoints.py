"""The cache tells endpoints apart: answers of one server are never served for another server
with a model of the same name (two real test servers, the real openai client, a real SQLite
cache)."""

from __future__ import annotations

import sqlite3

import polars as pl
import pytest
from conftest import jobs

import pairwise_polars as pp
from pairwise_polars.counterfactual import OpenAITarget, collect_responses
from pairwise_polars.testing import TestServer

KEY = "sk-test-SECRET-4242"


def judge_at(url: str, **options) -> pp.OpenAIJudge:
    return pp.OpenAIJudge("same-model", base_url=url, api_key=KEY, backoff_base=0.01, **options)


def test_a_second_server_with_the_same_model_gets_its_own_requests(tmp_path) -> None:
    rows, cache = jobs(groups=6), tmp_path / "cache.sqlite"
    with TestServer() as first, TestServer() as second:
        assert first.port != second.port
        scored_first = pp.score(rows, "pairwise-bias", judge=judge_at(first.base_url),
                                cache=cache, progress=False)  # fmt: skip
        sent = first.stats.requests
        assert sent > 0 and not scored_first["cached"].any()
        scored_second = pp.score(rows, "pairwise-bias", judge=judge_at(second.base_url),
                                 cache=cache, progress=False)  # fmt: skip
        assert second.stats.requests == sent  # nothing served from the first server's answers
        assert not scored_second["cached"].any()
        # the same server again: everything from the cache
        again = pp.score(rows, "pairwise-bias", judge=judge_at(first.base_url + "/"),
                         cache=cache, progress=False)  # fmt: skip
        assert again["cached"].all() and first.stats.requests == sent
    text = cache.read_bytes() + b"".join(p.read_bytes() for p in tmp_path.glob("cache.sqlite*"))
    assert KEY.encode() not in text


def test_a_server_that_refuses_the_key_is_asked_not_answered_from_the_cache(tmp_path) -> None:
    rows, cache = jobs(groups=3), tmp_path / "cache.sqlite"
    with TestServer() as open_server, TestServer(api_key="another-key") as locked:
        pp.score(rows, "pairwise-bias", judge=judge_at(open_server.base_url), cache=cache,
                 progress=False)  # fmt: skip
        with pytest.raises(pp.JudgeError, match="refused the API key"):
            pp.score(rows, "pairwise-bias", judge=judge_at(locked.base_url, max_concurrency=1),
                     cache=cache, progress=False)  # fmt: skip
        assert locked.stats.outcomes["401"] >= 1


def test_the_endpoint_is_in_the_identity_and_the_key_is_not() -> None:
    a = judge_at("http://LOCALHOST:8000/v1/")
    b = pp.OpenAIJudge("same-model", base_url="http://localhost:8000/v1", api_key="other")
    assert a.identity == b.identity
    assert a.identity["endpoint"] == "http://localhost:8000/v1"
    assert judge_at("http://localhost:8001/v1").identity != a.identity
    assert judge_at("https://localhost:8000/v1").identity != a.identity
    assert judge_at("http://localhost:8000/openai/v1").identity != a.identity
    secret = judge_at("http://user:hunter2@localhost:8000/v1?token=abc")
    assert secret.identity == a.identity  # credentials and query in the URL stay out of keys
    assert KEY not in repr(a.identity)
    default = pp.OpenAIJudge("same-model", api_key=KEY)
    assert default.identity["endpoint"] == "https://api.openai.com:443/v1"
    batch = pp.OpenAIBatchJudge("same-model", base_url="http://localhost:8000/v1", api_key=KEY)
    assert batch.identity == a.identity  # batch and chat answers serve each other per endpoint


def test_openai_base_url_is_the_endpoint_when_no_base_url_is_given(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert pp.OpenAIJudge("m", api_key=KEY).identity["endpoint"] == "http://127.0.0.1:9/v1"


def test_responses_are_cached_per_endpoint(tmp_path) -> None:
    rows = pl.DataFrame({"group_id": ["g1", "g1"], "role": ["reference", "variant"],
                         "dimension": "gender", "input": ["He asks.", "She asks."]})  # fmt: skip
    cache = tmp_path / "responses.sqlite"
    with TestServer() as first, TestServer() as second:
        for server in (first, second):
            target = OpenAITarget("same-model", base_url=server.base_url, api_key=KEY)
            collect_responses(rows, target, cache=cache, progress=False)
        assert first.stats.requests == second.stats.requests == 2
    with sqlite3.connect(cache) as db:
        assert db.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 4
