"""A judge reply that says two things at once is malformed (issue 30, item 9): over real HTTP."""

from __future__ import annotations

import pytest
from conftest import jobs

import pairwise_polars as pp
from pairwise_polars.judges._parse import ReplyError, parse_judgement
from pairwise_polars.testing import TestServer


def test_duplicate_keys_are_malformed() -> None:
    with pytest.raises(ReplyError, match="reply gives the key 'score' twice"):
        parse_judgement('{"score": 4, "reason": "r", "score": 0}', 4)


@pytest.mark.parametrize("transport", ["fast", "sdk"])
def test_a_reply_with_a_duplicate_score_is_an_error_row(
    judge_server: TestServer, transport: str
) -> None:
    judge_server.reply = lambda body: '{"score": 4, "reason": "differs", "score": 0}'
    judge = pp.OpenAIJudge("judge", base_url=judge_server.base_url, transport=transport)
    scored = pp.score(jobs(groups=1), "pairwise-bias", judge=judge, cache=False, progress=False)
    assert scored["score"].is_null().all()  # never 0 (nor 4): the reply is not a judgement
    assert scored["error"].str.contains("reply gives the key 'score' twice").all()
