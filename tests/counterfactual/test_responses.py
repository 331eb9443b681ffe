"""collect_responses through the real openai client over real HTTP against the test server."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import pairwise_polars as pp
from pairwise_polars.counterfactual import (
    OpenAITarget,
    ResponseCache,
    Target,
    acollect_responses,
    collect_responses,
)
from pairwise_polars.testing import Faults, TestServer

PROMPTS = ["Describe Anna.", "Describe Omar.", "Should Maria get the loan?", "Rate John's essay."]
REFUSAL = "I'm sorry, but I can't help with that."


def target_for(server: TestServer, **options: Any) -> OpenAITarget:
    options.setdefault("backoff_base", 0.01)
    return OpenAITarget("target-model", base_url=server.base_url, api_key="sk-test-SECRET-9",
                        **options)  # fmt: skip


def respond(rows: Any, server: TestServer, **options: Any) -> pl.DataFrame:
    options.setdefault("cache", False)
    options.setdefault("progress", False)
    return collect_responses(rows, target_for(server), **options)


def user_text(body: dict[str, Any]) -> str:
    return next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")


def grouped() -> pl.DataFrame:
    """Two group-strategy groups: a reference and two variants each."""
    return pl.DataFrame({
        "group_id": ["g1"] * 3 + ["g2"] * 3,
        "role": ["reference", "variant", "variant"] * 2,
        "dimension": "gender",
        "attribute": ["male", "female", "non-binary"] * 2,
        "input": ["He asks for a loan.", "She asks for a loan.", "They ask for a loan.",
                  "Mr. Lee applies.", "Ms. Lee applies.", "Mx. Lee applies."],
        "model_name": "demo",
    })  # fmt: skip


def contrastive() -> pl.DataFrame:
    return pl.DataFrame({
        "group_id": [1, 1, 2, 2], "role": ["pole_a", "pole_b"] * 2, "dimension": "gender",
        "input": ["He writes.", "She writes.", "His work.", "Her work."], "id": [10, 11, 12, 13],
    })  # fmt: skip


def test_every_row_gets_an_answer_with_typed_columns(judge_server) -> None:
    rows = pl.DataFrame({"input": PROMPTS, "run": [1, 2, 3, 4]})
    answered = respond(rows, judge_server)
    assert answered.columns == [
        "input", "run", "output", "error", "finish_reason", "response_model", "attempts",
        "latency_s", "input_tokens", "output_tokens", "cached",
    ]  # fmt: skip
    assert answered.schema["output"] == pl.String and answered.schema["attempts"] == pl.Int64
    assert answered.schema["latency_s"] == pl.Float64 and answered.schema["cached"] == pl.Boolean
    assert answered["output"].to_list() == [f"Here is my answer to: {p}" for p in PROMPTS]
    assert answered["run"].to_list() == [1, 2, 3, 4]  # input order, columns carried
    assert answered["error"].is_null().all() and (answered["attempts"] == 1).all()
    assert (answered["response_model"] == "target-model").all()
    assert (answered["finish_reason"] == "stop").all() and not answered["cached"].any()
    assert (answered["input_tokens"] > 0).all() and (answered["output_tokens"] > 0).all()
    assert rows.columns == ["input", "run"]  # the caller's frame is untouched


def test_user_columns_named_like_helpers_ride_along_untouched(judge_server) -> None:
    rows = pl.DataFrame({"input": PROMPTS[:2], "key": ["k1", "k2"], "messages": [1, 2],
                         "sample": ["s", "t"]})  # fmt: skip
    answered = respond(rows, judge_server)
    assert answered.select("key", "messages", "sample").equals(rows.drop("input"))
    assert answered["output"].is_not_null().all()


@pytest.mark.parametrize("kind", ["lazy", "arrow", "pandas", "parquet"])
def test_every_input_kind_gives_the_same_frame(judge_server, kind, tmp_path: Path) -> None:
    rows = pl.DataFrame({"input": PROMPTS, "run": [1, 2, 3, 4]})
    if kind == "lazy":
        data: Any = rows.lazy()
    elif kind == "arrow":
        data = rows.to_arrow()
    elif kind == "pandas":
        data = rows.to_pandas()
    else:
        data = tmp_path / "rows.parquet"
        rows.write_parquet(data)
        data = str(data)
    expected = respond(rows, judge_server).drop("latency_s")
    assert respond(data, judge_server).drop("latency_s").equals(expected)


def test_429s_and_500s_are_retried_and_survived(judge_server) -> None:
    judge_server.faults = Faults(rate_429=0.2, rate_500=0.1, retry_after=0.01)
    rows = pl.DataFrame({"input": [f"Prompt number {i}" for i in range(60)]})
    answered = respond(rows, judge_server)
    stats = judge_server.stats
    assert stats.outcomes["429"] > 0 and stats.outcomes["500"] > 0
    assert answered["error"].is_null().all() and answered["output"].is_not_null().all()
    assert answered["attempts"].sum() == stats.requests  # every attempt is counted
    assert answered["output"].to_list() == [f"Here is my answer to: Prompt number {i}"
                                            for i in range(60)]  # fmt: skip


def test_persistent_failure_is_an_error_row_with_null_output(judge_server) -> None:
    judge_server.faults = Faults(always="500")
    rows = grouped()
    answered = collect_responses(rows, target_for(judge_server, max_retries=2), cache=False,
                                 progress=False)  # fmt: skip
    assert answered.height == rows.height
    assert answered["output"].is_null().all()  # never "" that would read as an answer
    assert answered["error"].str.starts_with("HTTP 500").all()
    assert answered["error"].str.contains("gave up after 3 attempts").all()
    assert (answered["attempts"] == 3).all()
    # Downstream: the pairs are kept, marked, and not judged: no score, an error instead.
    pairs = pp.form_pairs(answered)
    assert pairs["skip_reason"].to_list() == ["null output_a; null output_b"] * 4
    scored = pp.score(answered, progress=False, cache=False)
    assert scored["score"].is_null().all()
    assert scored["error"].str.starts_with("not judged: null output_a").all()


def test_empty_replies_and_blank_inputs_are_errors_not_answers(judge_server) -> None:
    judge_server.reply = lambda body: "" if "Omar" in user_text(body) else None
    rows = pl.DataFrame({"input": ["Describe Anna.", "Describe Omar.", None, "   "]})
    answered = respond(rows, judge_server)
    assert answered["output"].to_list() == ["Here is my answer to: Describe Anna.", None, None,
                                            None]  # fmt: skip
    assert answered["error"].to_list() == [
        None, "empty reply (finish_reason: stop)", "null input: nothing was sent",
        "empty input: nothing was sent",
    ]  # fmt: skip
    assert answered["attempts"].to_list() == [1, 1, 0, 0]
    assert judge_server.stats.requests == 2  # the blank inputs were never sent


def test_a_refusal_is_an_answer(judge_server) -> None:
    judge_server.reply = lambda body: REFUSAL if "loan" in user_text(body) else None
    answered = respond(pl.DataFrame({"input": PROMPTS}), judge_server)
    assert answered["output"][2] == REFUSAL and answered["error"].is_null().all()


def test_bad_key_stops_the_run_with_judge_error(judge_server) -> None:
    judge_server.faults = Faults(always="401")
    with pytest.raises(pp.JudgeError, match="refused the API key") as caught:
        respond(pl.DataFrame({"input": PROMPTS}), judge_server)
    assert "SECRET" not in str(caught.value)
    assert judge_server.stats.outcomes["401"] <= 32  # stopped at once, no retries
    judge_server.faults = Faults(always="404")
    with pytest.raises(pp.JudgeError, match="does not know model 'target-model'"):
        respond(pl.DataFrame({"input": PROMPTS}), judge_server)


def test_answers_before_a_fatal_error_stay_cached(judge_server, tmp_path: Path) -> None:
    cache = tmp_path / "c.sqlite"
    rows = pl.DataFrame({"input": PROMPTS})
    respond(rows.head(2), judge_server, cache=cache)
    judge_server.faults = Faults(always="401")
    with pytest.raises(pp.JudgeError):
        respond(rows, judge_server, cache=cache)
    with ResponseCache(cache) as stored:
        assert len(stored) == 2


def test_samples_in_group_strategy_pair_draw_k_with_its_reference(judge_server) -> None:
    rows = grouped()
    answered = respond(rows, judge_server, samples=3)
    assert answered.height == rows.height * 3
    assert answered.schema["sample"] == pl.Int64
    assert answered["sample"].to_list()[:6] == [0, 1, 2, 0, 1, 2]  # row-major, input order
    assert answered["group_id"].head(3).to_list() == ["g1#0", "g1#1", "g1#2"]
    assert answered["source_group_id"].head(3).to_list() == ["g1", "g1", "g1"]
    assert "source_id" not in answered.columns  # no id column: positions are unique already
    assert answered.columns.index("output") == len(rows.columns) + 1
    pairs = pp.form_pairs(answered)
    assert pairs.height == 4 * 3  # 4 variants x 3 draws, each against its own reference draw
    assert (pairs["sample_a"] == pairs["sample_b"]).all()
    assert pp.check_groups(answered).is_empty()


def test_samples_in_contrastive_strategy_pair_all_combinations(judge_server) -> None:
    rows = contrastive()
    answered = respond(rows, judge_server, samples=2)
    assert answered["group_id"].to_list() == [1, 1, 1, 1, 2, 2, 2, 2]  # groups kept
    assert answered["id"].to_list()[:4] == ["10#0", "10#1", "11#0", "11#1"]
    assert answered["source_id"].to_list()[:4] == [10, 10, 11, 11]
    pairs = pp.form_pairs(answered, "contrastive")
    assert pairs.height == 2 * 2 * 2  # two groups, 2 x 2 draws
    assert pairs.select("id_a", "id_b").n_unique() == pairs.height
    # an explicit strategy wins over the detection
    regrouped = respond(rows, judge_server, samples=2, strategy="group")
    assert regrouped["group_id"].to_list()[:2] == ["1#0", "1#1"]


def test_draws_are_separate_requests_with_their_own_seed(judge_server) -> None:
    seen: list[tuple[str, int | None]] = []
    lock = threading.Lock()

    def record(body: dict[str, Any]) -> None:
        with lock:
            seen.append((user_text(body), body.get("seed")))

    judge_server.reply = record
    target = target_for(judge_server, seed=7, temperature=0.7)
    collect_responses(pl.DataFrame({"input": PROMPTS[:2]}), target, samples=3, cache=False,
                      progress=False)  # fmt: skip
    assert sorted(seen) == sorted((p, 7 + k) for p in PROMPTS[:2] for k in range(3))


def test_a_control_row_is_an_independent_draw_of_its_reference(judge_server, tmp_path) -> None:
    """A control row repeats its reference's text in the same group: it must get its own
    answer (own request, own seed, own cache entry), or the noise floor would read 0."""
    seen: list[tuple[str, int | None]] = []
    lock = threading.Lock()

    def record(body: dict[str, Any]) -> None:
        with lock:
            seen.append((user_text(body), body.get("seed")))

    judge_server.reply = record
    rows = pp.counterfactuals(pl.DataFrame({"input": ["He asks for a loan."]}), "gender")
    assert rows["role"].to_list() == ["reference", "variant", "control"]
    target = target_for(judge_server, seed=7)
    cache = tmp_path / "cache.sqlite"
    answered = collect_responses(rows, target, samples=2, cache=cache, progress=False)
    ref, she = "He asks for a loan.", "She asks for a loan."
    # reference draws 0, 1; variant draws 0, 1; the control, a second copy: draws 2, 3
    assert sorted(seen) == sorted([(ref, 7), (ref, 8), (she, 7), (she, 8), (ref, 9), (ref, 10)])
    assert answered.filter(role="control")["group_id"].to_list() == [
        f"{rows['group_id'][0]}#0", f"{rows['group_id'][0]}#1",
    ]  # fmt: skip
    again = collect_responses(rows, target, samples=2, cache=cache, progress=False)
    assert again["cached"].all() and len(seen) == 6  # each copy has its own cache entry


def test_identical_requests_are_sent_once(judge_server) -> None:
    rows = pl.DataFrame({"input": ["Same prompt."] * 5 + ["Other prompt."]})
    answered = respond(rows, judge_server, samples=2)
    assert judge_server.stats.requests == 4 and answered.height == 12
    assert answered["output"].is_not_null().all()


def test_second_run_sends_zero_requests(judge_server, tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    rows = grouped()
    first = respond(rows, judge_server, cache=cache, samples=2)
    sent = judge_server.stats.requests
    assert sent == rows.height * 2
    second = respond(rows, judge_server, cache=cache, samples=2)
    assert judge_server.stats.requests == sent
    assert second["cached"].all() and (second["attempts"] == 0).all()
    assert second["output"].equals(first["output"])
    assert second["input_tokens"].equals(first["input_tokens"])
    # Another temperature or system prompt is another request, not a cache hit.
    respond(rows, judge_server, cache=cache, samples=2, temperature=0.2)
    assert judge_server.stats.requests == 2 * sent
    respond(rows, judge_server, cache=cache, samples=2, system_prompt="Be brief.")
    assert judge_server.stats.requests == 3 * sent


def test_failures_are_not_cached_and_a_rerun_resends_only_them(judge_server, tmp_path) -> None:
    cache = tmp_path / "cache.sqlite"
    judge_server.reply = lambda body: "" if "Omar" in user_text(body) else None
    rows = pl.DataFrame({"input": PROMPTS})
    respond(rows, judge_server, cache=cache)
    judge_server.reset()
    rerun = respond(rows, judge_server, cache=cache)
    assert judge_server.stats.requests == 1
    assert rerun["cached"].to_list() == [True, False, True, True]
    assert rerun["error"].is_null().all()


def test_cache_shares_the_judgement_file_and_stores_no_secret(judge_server, tmp_path) -> None:
    path = tmp_path / "shared.sqlite"
    judgements = pp.JudgementCache(path)
    respond(pl.DataFrame({"input": PROMPTS}), judge_server, cache=judgements)
    judgements.close()
    db = sqlite3.connect(path)
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert {"judgements", "responses"} <= tables
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        dump = "\n".join(db.iterdump())
    finally:
        db.close()
    assert "SECRET" not in dump and judge_server.base_url not in dump
    assert "Here is my answer to: Describe Anna." in dump


def test_default_cache_lives_in_the_user_cache_folder(judge_server) -> None:
    respond(pl.DataFrame({"input": PROMPTS}), judge_server, cache=True)
    with ResponseCache() as cache:  # XDG_CACHE_HOME points into tmp_path (conftest)
        assert len(cache) == len(PROMPTS)
        assert cache.path.name == "judgements.sqlite"


def test_system_prompt_goes_first(judge_server) -> None:
    bodies: list[dict[str, Any]] = []
    judge_server.reply = lambda body: bodies.append(body)
    respond(pl.DataFrame({"input": ["Hi."]}), judge_server, system_prompt="You are a bank.")
    assert bodies[0]["messages"] == [{"role": "system", "content": "You are a bank."},
                                     {"role": "user", "content": "Hi."}]  # fmt: skip
    assert bodies[0]["temperature"] == 1.0 and "seed" not in bodies[0]


def test_a_model_name_and_options_make_the_target(judge_server) -> None:
    answered = collect_responses(
        pl.DataFrame({"prompt": ["Hello."]}), "named-model", text="prompt", output="answer",
        base_url=judge_server.base_url, max_concurrency=2, cache=False, progress=False,
    )  # fmt: skip
    assert answered["answer"].to_list() == ["Here is my answer to: Hello."]
    assert answered["response_model"].to_list() == ["named-model"]


def test_any_object_with_respond_is_a_target() -> None:
    class Echo:
        name = "echo"

        async def respond(self, requests: pl.DataFrame) -> AsyncIterator[pl.DataFrame]:
            texts = [json.loads(m)[-1]["content"].upper() for m in requests["messages"]]
            yield requests.select("key").with_columns(output=pl.Series(texts))

    assert isinstance(Echo(), Target)
    answered = collect_responses(pl.DataFrame({"input": ["a b", "c"]}), Echo(), cache=False,
                                 progress=False)  # fmt: skip
    assert answered["output"].to_list() == ["A B", "C"]
    assert answered["response_model"].to_list() == ["echo", "echo"]
    with pytest.raises(TypeError, match=r"Target options \['temperature'\] configure"):
        collect_responses(pl.DataFrame({"input": ["a"]}), Echo(), temperature=0.0)


def test_a_target_that_forgets_a_request_gives_an_error_row() -> None:
    class Forgetful:
        name = "forgetful"

        async def respond(self, requests: pl.DataFrame) -> AsyncIterator[pl.DataFrame]:
            yield requests.head(1).select("key").with_columns(output=pl.lit("ok"))

    answered = collect_responses(pl.DataFrame({"input": ["a", "b"]}), Forgetful(), cache=False,
                                 progress=False)  # fmt: skip
    assert answered["output"].to_list() == ["ok", None]
    assert answered["error"][1] == "the target returned no result for this request"


def test_problems_are_found_before_any_request(judge_server) -> None:
    rows = pl.DataFrame({"input": PROMPTS})
    with pytest.raises(pp.ColumnError, match=r"no column 'prompt' to send; it has \['input'\]"):
        respond(rows, judge_server, text="prompt")
    with pytest.raises(pp.ColumnError, match=r"already has column\(s\) \['output'\]"):
        respond(rows.with_columns(output=pl.lit("x")), judge_server)
    with pytest.raises(pp.ColumnError, match="has type Int64, expected a string column"):
        respond(pl.DataFrame({"input": [1]}), judge_server)
    with pytest.raises(ValueError, match="samples must be a positive integer, got 0"):
        respond(rows, judge_server, samples=0)
    with pytest.raises(pp.ColumnError, match=r"no column\(s\) \['group_id', 'role'\]"):
        respond(rows, judge_server, samples=2, strategy="group")
    with pytest.raises(TypeError, match="target must be a model name, an OpenAITarget"):
        collect_responses(rows, pp.HeuristicJudge())  # type: ignore[arg-type]
    assert judge_server.stats.requests == 0


def test_works_inside_a_running_event_loop_and_async(judge_server) -> None:
    rows = pl.DataFrame({"input": PROMPTS})

    async def notebook_cell() -> tuple[pl.DataFrame, pl.DataFrame]:
        sync = respond(rows, judge_server)
        twin = await acollect_responses(rows, target_for(judge_server), cache=False,
                                        progress=False)  # fmt: skip
        return sync, twin

    sync, twin = asyncio.run(notebook_cell())
    assert sync["output"].equals(twin["output"])


def test_progress_line_reports_responses(judge_server, capsys) -> None:
    collect_responses(pl.DataFrame({"input": PROMPTS}), target_for(judge_server), cache=False,
                      progress=True)  # fmt: skip
    assert "responding 4/4 (100%) | cached 0 | errors 0" in capsys.readouterr().err


def test_repr_masks_the_key() -> None:
    target = OpenAITarget("m", api_key="sk-very-secret", system_prompt="Be brief.")
    assert "very-secret" not in repr(target) and "'***'" in repr(target)
