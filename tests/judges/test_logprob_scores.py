"""score_from="logprobs": the rubric's expectation over the score token's probabilities, read
off a real HTTP reply with a known distribution; the fallback says so; the cache keeps both."""

from __future__ import annotations

import dataclasses
import json
import math
import sqlite3
from pathlib import Path

import polars as pl
import pytest
from conftest import jobs
from hypothesis import given
from hypothesis import strategies as st

import pairwise_polars as pp
from pairwise_polars.engine import JudgementCache
from pairwise_polars.judges._logprobs import expected_score
from pairwise_polars.testing import TestServer

SKEWED = [0.5, 0.3, 0.2, 0.0, 0.0]  # argmax 0, expectation 0.7


def judge(server: TestServer, **options: object) -> pp.OpenAIJudge:
    return pp.OpenAIJudge("m", base_url=server.base_url, api_key="k", score_from="logprobs",
                          **options)  # type: ignore[arg-type]  # fmt: skip


def run(judge: pp.OpenAIJudge, **options: object) -> pl.DataFrame:
    options = {"cache": False, "progress": False, **options}
    return pp.score(jobs(groups=3), "pairwise-bias", judge=judge, **options)  # type: ignore[arg-type]


def test_the_score_is_the_expectation_of_a_known_distribution(judge_server: TestServer) -> None:
    judge_server.score_distribution = SKEWED
    scored = run(judge(judge_server))
    assert (scored["raw_score"] == 0).all()  # the written answer: the most likely score
    assert scored["score"].to_list() == pytest.approx([0.7 / 4] * scored.height)
    assert (scored["score_source"] == "logprobs").all()
    body = judge_server.received[0].body
    assert body["logprobs"] is True and body["top_logprobs"] == 20


def test_without_logprobs_the_answer_is_kept_and_says_so(judge_server: TestServer) -> None:
    scored = run(judge(judge_server))  # the server sends "logprobs": null
    assert scored["score"].equals(scored["raw_score"] / 4)
    assert (scored["score_source"] == "answer (no logprobs)").all()
    plain = run(pp.OpenAIJudge("m", base_url=judge_server.base_url, api_key="k"))
    assert (plain["score_source"] == "answer").all() and "logprobs" not in (
        judge_server.received[-1].body
    )


def test_the_cache_keeps_the_expectation_apart_from_plain_answers(
    judge_server: TestServer, tmp_path: Path
) -> None:
    judge_server.score_distribution = SKEWED
    cache = tmp_path / "c.sqlite"
    first = run(judge(judge_server), cache=cache)
    again = run(judge(judge_server), cache=cache)
    assert again["cached"].all() and again["score"].equals(first["score"])
    assert (again["score_source"] == "logprobs").all()
    plain = run(pp.OpenAIJudge("m", base_url=judge_server.base_url, api_key="k"), cache=cache)
    assert not plain["cached"].any()  # another identity: not served the expectation


def test_a_cache_file_from_before_gets_the_new_columns(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE judgements (key TEXT PRIMARY KEY, raw_score INTEGER NOT NULL, "
                   "reason TEXT, input_tokens INTEGER, output_tokens INTEGER, raw_reply TEXT, "
                   "judge_model TEXT, created REAL NOT NULL)")  # fmt: skip
        db.execute("INSERT INTO judgements VALUES ('k1', 2, 'r', 1, 1, '{}', 'm', 0)")
    with JudgementCache(path) as cache:
        old = cache.lookup(["k1"])
        assert old["raw_score"].to_list() == [2] and old["score_source"].to_list() == [None]


@given(st.lists(st.floats(0.0, 1.0), min_size=5, max_size=5).filter(lambda p: sum(p) > 1e-6),
       st.randoms())  # fmt: skip
def test_the_expectation_is_the_rubric_weighted_by_probability(probs, rng) -> None:
    alternatives = [{"token": f" {s}", "logprob": math.log(p)} for s, p in enumerate(probs) if p]
    alternatives.append({"token": "yes", "logprob": -0.1})  # not on the rubric: ignored
    rng.shuffle(alternatives)
    tokens = [{"token": '{"score":', "top_logprobs": []},
              {"token": " 1", "top_logprobs": alternatives}]  # fmt: skip
    got = expected_score({"content": tokens}, '{"score": 1}', 4)
    assert got == pytest.approx(sum(s * p for s, p in enumerate(probs)) / sum(probs))
    assert expected_score({"content": tokens}, '{"verdict": 1}', 4) is None
    assert expected_score(None, '{"score": 1}', 4) is None


def test_a_manifest_asks_for_it(tmp_path: Path) -> None:
    from pairwise_polars.manifest import load_manifest

    path = tmp_path / "m.yaml"
    text = ("targets:\n  t:\n    pairwise:\n      data: x.parquet\n      judge: {{model: m, "
            "base_url: 'http://127.0.0.1:9/v1', score_from: {}}}\n")  # fmt: skip
    (tmp_path / "x.parquet").write_bytes(b"")
    path.write_text(text.format("logprobs"))
    built = load_manifest(path).targets["t"].judge.build()
    assert isinstance(built, pp.OpenAIJudge) and built.score_from == "logprobs"
    path.write_text(text.format("median"))
    with pytest.raises(pp.ManifestError, match="score_from: expected answer"):
        load_manifest(path)


def test_the_batch_judge_reads_the_expectation_from_batch_output(
    judge_server: TestServer, tmp_path: Path
) -> None:
    # the Batch API answers each line with the chat completion object, logprobs included
    judge_server.score_distribution = SKEWED
    batch = pp.OpenAIBatchJudge("m", base_url=judge_server.base_url, api_key="k",
                                score_from="logprobs", state=tmp_path / "b.sqlite",
                                poll_interval=0.02, max_poll_interval=0.05,
                                progress=False)  # fmt: skip
    scored = run(batch)
    assert (scored["raw_score"] == 0).all()
    assert scored["score"].to_list() == pytest.approx([0.7 / 4] * scored.height)
    assert (scored["score_source"] == "logprobs").all()
    lines = [json.loads(line) for f in judge_server.batches.files.values()
             if f["purpose"] == "batch" for line in f["data"].splitlines()]  # fmt: skip
    assert lines and all(line["body"]["logprobs"] is True for line in lines)
    # the chat judge of the same settings has the same identity: its answers serve the batch's
    assert batch.identity == judge(judge_server).identity
    judge_server.score_distribution = None  # "logprobs": null, as from a server without them
    fallback = run(dataclasses.replace(batch, state=tmp_path / "b2.sqlite"))
    assert (fallback["score_source"] == "answer (no logprobs)").all()
    assert fallback["score"].equals(fallback["raw_score"] / 4)


def test_judges_that_cannot_give_logprobs_refuse_them_with_the_reason() -> None:
    from pairwise_polars.judges import build_judge

    with pytest.raises(pp.OptionError, match="Anthropic's API returns no log-probabilities"):
        build_judge("claude-haiku-4-5", provider="anthropic", score_from="logprobs")
    with pytest.raises(pp.OptionError, match="Anthropic's API returns no log-probabilities"):
        build_judge("claude-haiku-4-5", provider="anthropic", batch=True, score_from="logprobs")
    with pytest.raises(pp.OptionError, match="the heuristic judge has none"):
        build_judge("heuristic", score_from="logprobs")
    built = build_judge("gpt-4.1-mini", batch=True, api_key="k", score_from="logprobs")
    assert isinstance(built, pp.OpenAIBatchJudge) and built.score_from == "logprobs"


def test_the_cli_asks_for_it(judge_server: TestServer, tmp_path: Path, capsys) -> None:
    from pairwise_polars.cli import EXIT_INVALID, EXIT_PASS, main

    judge_server.score_distribution = SKEWED
    data, out = tmp_path / "jobs.parquet", tmp_path / "scored.parquet"
    jobs(groups=3).write_parquet(data)
    argv = ["score", str(data), "-o", str(out), "--judge", "m", "--base-url",
            judge_server.base_url, "--no-cache", "--quiet"]  # fmt: skip
    assert main([*argv, "--score-from", "logprobs"]) == EXIT_PASS
    scored = pl.read_parquet(out)
    assert (scored["score_source"] == "logprobs").all()
    assert scored["score"].to_list() == pytest.approx([0.7 / 4] * scored.height)
    assert main(argv) == EXIT_PASS  # the default: the written answer
    assert (pl.read_parquet(out)["score_source"] == "answer").all()
    capsys.readouterr()
    assert main([*argv, "--score-from", "median"]) == EXIT_INVALID
    assert "--score-from: invalid choice: 'median'" in capsys.readouterr().err
    assert main([*argv, "--score-from", "logprobs", "--judge-provider", "anthropic"]) == (
        EXIT_INVALID
    )
    assert "Anthropic's API returns no log-probabilities" in capsys.readouterr().err
