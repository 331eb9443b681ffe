"""Reasoning models and pass-through settings, checked on the bodies and headers the test
server receives (real openai client, real HTTP)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from conftest import jobs

import pairwise_polars as pp
from pairwise_polars.counterfactual import OpenAITarget, collect_responses
from pairwise_polars.judges import OpenAIBatchJudge
from pairwise_polars.manifest import load_manifest
from pairwise_polars.testing import TestServer

ROWS = jobs(groups=1)
KEY = "sk-test-SECRET-77"
SAMPLING = ("temperature", "max_tokens", "max_completion_tokens", "top_p")


@pytest.fixture(scope="module")
def server():
    with TestServer(reasoning_models=["o3-mini", "gpt-5-mini", "my-deployment"]) as server:
        yield server


def judged(server: TestServer, model: str, **options: Any) -> list[dict[str, Any]]:
    """The chat bodies the server received for one scoring call."""
    server.reset()
    judge = pp.OpenAIJudge(model, base_url=server.base_url, api_key=KEY, **options)
    scored = pp.score(ROWS, "pairwise-bias", judge=judge, cache=False, progress=False)
    assert scored["error"].is_null().all(), scored["error"].to_list()
    return [seen.body for seen in server.received]


def sampling_of(body: dict[str, Any]) -> dict[str, Any]:
    return {k: body[k] for k in SAMPLING if k in body}


@pytest.mark.parametrize("model", ["o3-mini", "gpt-5-mini"])
def test_a_reasoning_model_gets_max_completion_tokens_and_no_temperature(server, model) -> None:
    bodies = judged(server, model)
    assert bodies and all(sampling_of(b) == {"max_completion_tokens": 300} for b in bodies)
    with pytest.raises(pp.JudgeError, match="'max_tokens' is not supported"):
        judged(server, model, reasoning=False, max_concurrency=1)  # what the server refuses


def test_a_plain_model_keeps_temperature_and_max_tokens(server) -> None:
    bodies = judged(server, "gpt-4o-mini", temperature=0.2, max_tokens=50)
    assert all(sampling_of(b) == {"temperature": 0.2, "max_tokens": 50} for b in bodies)


def test_the_switch_overrides_the_name(server) -> None:
    bodies = judged(server, "my-deployment", reasoning=True)
    assert all(sampling_of(b) == {"max_completion_tokens": 300} for b in bodies)
    bodies = judged(server, "o1-imitation", reasoning=False)
    assert all(sampling_of(b) == {"temperature": 0.0, "max_tokens": 300} for b in bodies)


def test_extra_body_is_merged_last(server) -> None:
    extra = {"reasoning_effort": "low", "max_completion_tokens": 2000, "metadata": {"run": "7"}}
    bodies = judged(server, "o3-mini", extra_body=extra)
    for body in bodies:
        assert body["reasoning_effort"] == "low" and body["metadata"] == {"run": "7"}
        assert body["max_completion_tokens"] == 2000  # the user's value wins
        assert body["response_format"]["type"] == "json_schema"  # the rest stays


def test_organization_project_and_default_headers_are_sent(server, monkeypatch) -> None:
    judged(server, "gpt-4o-mini", organization="org-1", project="proj-1",
           default_headers={"X-Team": "fairness", "OpenAI-Project": "proj-2"})  # fmt: skip
    headers = [seen.headers for seen in server.received]
    assert all(h["openai-organization"] == "org-1" for h in headers)
    assert all(h["openai-project"] == "proj-2" for h in headers)  # default_headers win
    assert all(h["x-team"] == "fairness" and h["authorization"] == "Bearer ***" for h in headers)
    monkeypatch.setenv("OPENAI_ORG_ID", "org-env")
    judged(server, "gpt-4o-mini")
    assert {seen.headers.get("openai-organization") for seen in server.received} == {"org-env"}


def test_headers_stay_out_of_reprs_and_cache_keys(server, tmp_path) -> None:
    base = {"base_url": server.base_url, "api_key": KEY}
    plain = pp.OpenAIJudge("gpt-4o-mini", **base)
    headed = pp.OpenAIJudge("gpt-4o-mini", **base, default_headers={"X-Token": "hdr-SECRET"})
    assert "hdr-SECRET" not in repr(headed) and headed.identity == plain.identity
    cache = tmp_path / "c.sqlite"
    server.reset()
    for judge in (plain, headed):
        pp.score(ROWS, "pairwise-bias", judge=judge, cache=cache, progress=False)
    sent = server.stats.requests
    assert sent == pp.form_pairs(ROWS).height  # the headers did not change the answers' keys
    for changed in ({"extra_body": {"reasoning_effort": "high"}}, {"reasoning": True}):
        judge = pp.OpenAIJudge("gpt-4o-mini", **base, **changed)
        assert judge.identity != plain.identity
    assert b"hdr-SECRET" not in cache.read_bytes()


def test_the_target_follows_the_same_conventions(server) -> None:
    rows = pl.DataFrame({"group_id": ["g", "g"], "role": ["reference", "variant"],
                         "dimension": "gender", "input": ["He asks.", "She asks."]})  # fmt: skip
    server.reset()
    target = OpenAITarget("o3-mini", base_url=server.base_url, api_key=KEY, seed=3,
                          extra_body={"reasoning_effort": "minimal"},
                          organization="org-9")  # fmt: skip
    answered = collect_responses(rows, target, cache=False, progress=False)
    assert answered["output"].is_not_null().all()
    for seen in server.received:
        assert sampling_of(seen.body) == {"max_completion_tokens": 1024}
        assert seen.body["reasoning_effort"] == "minimal" and seen.body["seed"] == 3
        assert seen.headers["openai-organization"] == "org-9"
    with pytest.raises(pp.PairwiseError, match="refuse top_p"):
        OpenAITarget("o3-mini", top_p=0.9)
    assert OpenAITarget("o3-mini", top_p=0.9, reasoning=False).top_p == 0.9


def test_batch_lines_follow_the_same_conventions(server, tmp_path) -> None:
    server.reset()
    judge = OpenAIBatchJudge("o3-mini", base_url=server.base_url, api_key=KEY,
                             extra_body={"reasoning_effort": "low"}, poll_interval=0.02,
                             max_poll_interval=0.05, progress=False,
                             state=tmp_path / "s.sqlite")  # fmt: skip
    scored = pp.score(ROWS, "pairwise-bias", judge=judge, cache=False, progress=False)
    assert scored["error"].is_null().all()
    (upload,) = [f for f in server.batches.files.values() if f.get("purpose") == "batch"]
    lines = [json.loads(line) for line in upload["data"].decode().splitlines()]
    assert lines
    for line in lines:
        assert sampling_of(line["body"]) == {"max_completion_tokens": 300}
        assert line["body"]["reasoning_effort"] == "low"
    chat = pp.OpenAIJudge(
        "o3-mini", base_url=server.base_url, extra_body={"reasoning_effort": "low"}
    )
    assert judge.identity == chat.identity


def write(tmp_path: Path, judge: str) -> Path:
    ROWS.write_parquet(tmp_path / "rows.parquet")
    path = tmp_path / "m.yaml"
    path.write_text(
        f"targets:\n  t:\n    pairwise:\n      data: rows.parquet\n      judge: {judge}\n"
    )
    return path


def test_the_manifest_judge_block_takes_the_settings(tmp_path) -> None:
    path = write(tmp_path, "{model: my-deployment, reasoning: true, organization: org-1, "
                 "project: p-1, extra_body: {reasoning_effort: low}, "
                 "default_headers: {X-Team: fairness}}")  # fmt: skip
    judge = load_manifest(path).targets["t"].judge.build(need_key=False)
    assert isinstance(judge, pp.OpenAIJudge)
    assert (judge.reasoning, judge.organization, judge.project) == (True, "org-1", "p-1")
    assert judge.extra_body == {"reasoning_effort": "low"}
    assert judge.default_headers == {"X-Team": "fairness"}


def test_the_manifest_refuses_bad_settings(tmp_path) -> None:
    path = write(tmp_path, "{model: m, reasonning: true, extra_body: [1], reasoning: maybe, "
                 "default_headers: {Authorization: Bearer sk-x}}")  # fmt: skip
    with pytest.raises(pp.ManifestError) as info:
        load_manifest(path)
    text = str(info.value)
    assert "unknown key 'reasonning'; did you mean 'reasoning'?" in text
    assert "t.pairwise.judge.extra_body: expected a mapping of request body fields" in text
    assert "t.pairwise.judge.reasoning: expected true or false" in text
    assert "judge.default_headers.Authorization: a credential header must never be written" in text
