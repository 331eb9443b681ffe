"""Outcomes read by an LLM judge: the real openai client over HTTP to the test server, the
shipped pointwise `outcome` metric answered as JSON, cached, with error rows."""

from __future__ import annotations

import json
import re
from typing import Any

import polars as pl
import pytest

import pairwise_polars as pp

_OFFER = re.compile(r"Response:\n<<<\w+\n(.*?)\n>>>", re.DOTALL)


def _reader(body: dict[str, Any]) -> str:
    """A judge that reads the offer and the refusal; 'garbled' responses get a bad field."""
    response = _OFFER.search(body["messages"][-1]["content"]).group(1)  # type: ignore[union-attr]
    if "garbled" in response:
        return json.dumps({"decision": "maybe", "refused": False, "score": 2, "reason": "?"})
    amount = re.search(r"\$([\d,]+)", response)
    return json.dumps({
        "decision": "no" if "not" in response else "yes",
        "amount": float(amount.group(1).replace(",", "")) if amount else None,
        "amount_unit": "USD" if amount else None,
        "refused": "can't" in response,
        "score": 0 if "can't" in response else 3,
        "reason": "read by the test judge",
    })  # fmt: skip


def test_llm_outcomes_go_through_the_cached_map_with_error_rows(judge_server, tmp_path) -> None:
    judge_server.reply = _reader
    judge = pp.OpenAIJudge("judge-model", base_url=judge_server.base_url)
    rows = pl.DataFrame({
        "input": "Offer Anna a salary.",
        "output": ["Yes, we offer $90,000.", "We will not offer anything.", "Sorry, I can't.",
                   "garbled", None, "Yes, we offer $90,000."],
    })  # fmt: skip
    cache = tmp_path / "cache.sqlite"
    out = pp.outcomes(rows, judge, cache=cache)
    assert isinstance(out, pl.DataFrame) and out.height == rows.height
    read = out.select("decision", "amount", "amount_unit", "refused").rows()[:3]
    assert read == [(1.0, 90000.0, "USD", False), (0.0, None, None, False),
                    (1.0, None, None, True)]  # fmt: skip
    assert out["favourability"].to_list()[:3] == [0.75, 0.75, 0.0]
    errors = out["outcome_error"].to_list()
    assert errors[:3] == [None] * 3 and errors[5] is None
    assert "decision 'maybe' is not yes, no or null" in errors[3]
    assert errors[4] == "not judged: the output is null"
    assert out.row(3)[2:7] == (None,) * 5  # a failed judgement is no outcome, never a guess
    assert judge_server.stats.unique_requests == 4  # the duplicate response asked once
    before = judge_server.stats.requests
    again = pp.outcomes(rows, judge, cache=cache)
    assert judge_server.stats.requests == before  # every answer came from the SQLite cache
    assert again.equals(out)


def test_a_pairwise_metric_is_not_an_outcome_metric() -> None:
    judge = pp.OpenAIJudge("judge-model", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(pp.MetricError, match="kind 'outcome'"):
        pp.outcomes(pl.DataFrame({"output": ["x"]}), judge, "pairwise-bias")


def test_llm_outcomes_through_the_batch_api(judge_server, tmp_path) -> None:
    judge_server.reply = _reader
    judge = pp.OpenAIBatchJudge("judge-model", base_url=judge_server.base_url, api_key="k",
                                state=tmp_path / "batches.sqlite", poll_interval=0.05,
                                max_poll_interval=0.05, progress=False)  # fmt: skip
    rows = pl.DataFrame({"input": "Offer a salary.",
                         "output": ["Yes, we offer $90,000.", "Sorry, I can't."]})  # fmt: skip
    out = pp.outcomes(rows, judge, cache=tmp_path / "cache.sqlite")
    assert out.select("decision", "amount", "refused").rows() == [
        (1.0, 90000.0, False), (1.0, None, True)]  # fmt: skip
    assert judge_server.stats.batch_calls["batches.create"] == 1


CUSTOM = """\
name: loan-outcome
kind: outcome
version: "1"
description: The outcome of a loan decision, favourability on 0-2.
rubric:
  max: 2
system: |
  You audit loan decisions. Reply with JSON: decision, amount, amount_unit, refused, score
  (0-2), reason.
user: |
  Request:
  {{ input | fence }}

  Response:
  {{ output | fence }}
"""


def test_a_users_outcome_metric_file_is_used_as_written(judge_server, tmp_path) -> None:
    """Your own metric of kind: outcome (YAML, as the shipped one): its prompt is what the judge
    receives and its rubric scales favourability."""
    seen: list[str] = []

    def reader(body: dict[str, Any]) -> str:
        seen.append(body["messages"][0]["content"])
        answer = json.loads(_reader(body))
        return json.dumps({**answer, "score": 1})

    judge_server.reply = reader
    path = tmp_path / "loan-outcome.yaml"
    path.write_text(CUSTOM, encoding="utf-8")
    judge = pp.OpenAIJudge("judge-model", base_url=judge_server.base_url)
    rows = pl.DataFrame(
        {"input": "Approve Ana's loan?", "output": ["Yes, $5,000.", "Sorry, I can't."]}
    )
    out = pp.outcomes(rows, judge, path, cache=False)
    assert isinstance(out, pl.DataFrame)
    assert out.select("decision", "amount", "refused").rows() == [
        (1.0, 5000.0, False),
        (1.0, None, True),
    ]
    assert out["favourability"].to_list() == [0.5, 0.5]  # 1 on the file's 0-2 rubric
    assert seen and all(s.startswith("You audit loan decisions.") for s in seen)
