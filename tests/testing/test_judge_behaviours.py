"""The test server's judge behaviours, switched on per test, seen through the real client."""

from __future__ import annotations

import polars as pl
import pytest

import pairwise_polars as pp
from pairwise_polars.testing import TestServer, judge_behaviour
from pairwise_polars.testing._judge_behaviours import genders, responses

ROWS = pl.DataFrame(
    {
        "group_id": [g for g in range(8) for _ in range(2)],
        "role": ["reference", "variant"] * 8,
        "dimension": "gender",
        "input": "Describe the applicant.",
        # groups 0-3: the responses mention different genders; 4-7: neither mentions one
        "output": ["She is a strong applicant.", "He is a strong applicant."] * 4
        + ["A strong applicant.", "A strong applicant, yes."] * 4,
    }
)


def scores(server: TestServer, **options: object) -> pl.Series:
    judge = pp.OpenAIJudge("judge", base_url=server.base_url, api_key="test")
    scored = pp.score(ROWS, judge=judge, order="fixed", cache=False, progress=False, **options)  # type: ignore[arg-type]
    return scored["raw_score"]


def test_the_gender_biased_judge_adds_only_where_genders_differ(judge_server: TestServer) -> None:
    hashed = scores(judge_server)
    judge_server.behaviour = judge_behaviour("gender-biased", bonus=2)
    biased = scores(judge_server)
    assert (biased.head(4) == (hashed.head(4) + 2).clip(upper_bound=4)).all()
    assert (biased.tail(4) == hashed.tail(4)).all()


def test_the_always_zero_judge_and_reset(judge_server: TestServer) -> None:
    judge_server.behaviour = judge_behaviour("always-zero")
    assert scores(judge_server).to_list() == [0.0] * 8
    judge_server.reset()  # back to the hash: not all 0 on these pairs
    assert scores(judge_server).max() > 0


def test_the_noisy_judge_answers_the_same_request_differently() -> None:
    with TestServer(behaviour="noisy") as server:
        runs = [scores(server).to_list() for _ in range(3)]
    assert runs[0] != runs[1] or runs[1] != runs[2]
    assert all(0 <= s <= 4 for run in runs for s in run)


def test_the_readers_of_the_prompt() -> None:
    assert genders("She met him.") == {"female", "male"}
    assert genders("[gender] met [gender].") == frozenset()
    text = "Response A:\n<<<abc12345\nShe won.\n>>>abc12345\n\nResponse B:\n<<<zz\nHe won.\n>>>zz"
    assert responses([text]) == ("She won.", "He won.")
    with pytest.raises(ValueError, match="Unknown judge behaviour 'lenient'"):
        judge_behaviour("lenient")  # type: ignore[arg-type]
