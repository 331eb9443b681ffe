"""The test judge server, spoken to by the real openai client over real HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
import openai
import pytest

import pairwise_polars.testing
from pairwise_polars.testing import Faults, ServerStats, TestServer
from pairwise_polars.testing.fixtures import make_judge_server_fixtures

T = TypeVar("T")

# The module's own fixture pair, built by the same factory the project's conftest uses.
judge_session, judge = make_judge_server_fixtures("judge")

REPO = Path(pairwise_polars.testing.__file__).parents[2]  # so `python -m` finds the package
TRANSPORTS = ["httpx", "aiohttp"]
USER = [{"role": "user", "content": "Is the sky blue?"}]


def schema_format(maximum: int = 4, **score: Any) -> dict[str, Any]:
    properties = {
        "score": {"type": "integer", "minimum": 0, "maximum": maximum, **score},
        "reason": {"type": "string"},
    }
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "verdict",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": properties,
                "required": ["score", "reason"],
                "additionalProperties": False,
            },
        },
    }


def pair_messages(a: str, b: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": "Compare the two responses for unequal treatment."},
        {"role": "user", "content": f"<response_a>{a}</response_a>\n<response_b>{b}</response_b>"},
    ]


def run(coro: Awaitable[T]) -> T:
    return asyncio.run(coro)  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def client_for(
    server: TestServer, transport: str = "httpx", **kwargs: Any
) -> AsyncIterator[openai.AsyncOpenAI]:
    kwargs.setdefault("api_key", "test-key")
    kwargs.setdefault("max_retries", 0)
    if transport == "aiohttp":
        kwargs["http_client"] = openai.DefaultAioHttpClient()
    async with openai.AsyncOpenAI(base_url=server.base_url, **kwargs) as client:
        yield client


async def ask(
    server: TestServer, transport: str = "httpx", *, client_kwargs: Any = None, **request: Any
) -> Any:
    request.setdefault("model", "judge-model")
    request.setdefault("messages", USER)
    async with client_for(server, transport, **(client_kwargs or {})) as client:
        return await client.chat.completions.create(**request)


def content_of(completion: Any) -> str:
    return completion.choices[0].message.content


# -- answers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_judge_reply_is_a_verdict_within_the_schema(judge: TestServer, transport: str) -> None:
    completion = run(
        ask(
            judge,
            transport,
            messages=pair_messages("yes", "no"),
            response_format=schema_format(maximum=10),
        )
    )

    verdict = json.loads(content_of(completion))
    assert set(verdict) == {"score", "reason"}
    assert isinstance(verdict["score"], int)
    assert 0 <= verdict["score"] <= 10
    assert completion.object == "chat.completion"
    assert completion.model == "judge-model"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.choices[0].message.role == "assistant"
    usage = completion.usage
    assert usage.prompt_tokens >= 1
    assert usage.completion_tokens == len(content_of(completion)) // 4
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert judge.stats.outcomes == {"ok": 1}


def test_scores_are_deterministic_and_spread_over_the_scale(judge: TestServer) -> None:
    async def scores(server: TestServer, n: int) -> list[int]:
        async with client_for(server) as client:
            answers = await asyncio.gather(
                *(
                    client.chat.completions.create(
                        model="m",
                        messages=pair_messages(f"answer {i}", "other"),
                        response_format=schema_format(maximum=4),
                    )
                    for i in range(n)
                )
            )
        return [json.loads(content_of(a))["score"] for a in answers]

    first = run(scores(judge, 40))
    again = run(scores(judge, 40))
    # Another server, another seed: the score depends on the messages only.
    with TestServer(seed=123) as other:
        elsewhere = run(scores(other, 40))

    assert first == again == elsewhere
    assert set(first) == {0, 1, 2, 3, 4}


def test_score_scale_follows_the_schema(judge: TestServer) -> None:
    async def scores() -> tuple[set[int], set[int]]:
        async with client_for(judge) as client:

            async def score(response_format: dict[str, Any], i: int) -> int:
                completion = await client.chat.completions.create(
                    model="m",
                    messages=pair_messages(f"answer {i}", "b"),
                    response_format=response_format,
                )
                return json.loads(content_of(completion))["score"]

            ranged = await asyncio.gather(
                *(score(schema_format(maximum=3, minimum=2), i) for i in range(30))
            )
            enumerated = await asyncio.gather(
                *(score(schema_format(enum=[1, 5, 9]), i) for i in range(30))
            )
        return set(ranged), set(enumerated)

    ranged, enumerated = run(scores())
    assert ranged == {2, 3}
    assert enumerated == {1, 5, 9}


def test_json_object_and_score_prompt_get_verdicts_other_requests_plain_text(
    judge: TestServer,
) -> None:
    long_question = "Tell me about lighthouses and the people who kept them, " * 3
    json_object = run(ask(judge, response_format={"type": "json_object"}))
    prompted = run(
        ask(
            judge,
            messages=[
                {"role": "system", "content": 'Answer as JSON: {"score": <0-4>, "reason": "..."}'},
                {"role": "user", "content": "A: hi\nB: hello"},
            ],
        )
    )
    plain = run(
        ask(
            judge,
            messages=[
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": [{"type": "text", "text": long_question}]},
            ],
        )
    )

    assert 0 <= json.loads(content_of(json_object))["score"] <= 4
    assert 0 <= json.loads(content_of(prompted))["score"] <= 4
    assert content_of(plain) == f"Here is my answer to: {long_question[:60]}"


def test_reply_hook_decides_content_and_none_falls_back(judge: TestServer) -> None:
    seen: list[dict[str, Any]] = []

    def reply(body: dict[str, Any]) -> str | dict[str, Any] | None:
        seen.append(body)
        text = body["messages"][-1]["content"]
        if "same" in text:
            return {"score": 0, "reason": "identical"}
        if "raw" in text:
            return "not json at all"
        return None

    judge.reply = reply
    same = run(ask(judge, messages=pair_messages("same", "same"), response_format=schema_format()))
    raw = run(ask(judge, messages=[{"role": "user", "content": "raw"}]))
    fallback = run(ask(judge, messages=[{"role": "user", "content": "hello"}]))

    assert json.loads(content_of(same)) == {"score": 0, "reason": "identical"}
    assert content_of(raw) == "not json at all"
    assert content_of(fallback) == "Here is my answer to: hello"
    assert [body["model"] for body in seen] == ["judge-model"] * 3
    assert seen[0]["response_format"]["type"] == "json_schema"


def test_fixture_resets_what_the_previous_test_changed(judge: TestServer) -> None:
    # test_reply_hook_decides_content_and_none_falls_back left a reply hook and counters behind.
    assert judge.reply is None
    assert judge.faults == Faults()
    assert judge.stats.requests == 0


# -- refusals ---------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_wrong_or_missing_key_is_401_and_right_key_passes(transport: str) -> None:
    with TestServer(api_key="right-key") as server:
        with pytest.raises(openai.AuthenticationError) as wrong:
            run(ask(server, transport, client_kwargs={"api_key": "wrong-key"}))
        ok = run(ask(server, transport, client_kwargs={"api_key": "right-key"}))
        stats = server.stats

    assert wrong.value.status_code == 401
    assert wrong.value.code == "invalid_api_key"
    assert wrong.value.type == "invalid_request_error"
    assert "wrong-key" not in str(wrong.value)
    assert content_of(ok).startswith("Here is my answer to:")
    assert stats.outcomes == {"401": 1, "ok": 1}
    assert "right-key" not in repr(server)


def test_unknown_model_is_404() -> None:
    with TestServer(models=["judge-small"]) as server:
        with pytest.raises(openai.NotFoundError) as missing:
            run(ask(server, model="judge-large"))
        ok = run(ask(server, model="judge-small"))
        stats = server.stats

    assert missing.value.code == "model_not_found"
    assert "judge-large" in str(missing.value)
    assert ok.model == "judge-small"
    assert stats.outcomes == {"404": 1, "ok": 1}


def test_invalid_bodies_are_400(judge: TestServer) -> None:
    async def post(data: bytes) -> tuple[int, dict[str, Any]]:
        async with (
            aiohttp.ClientSession() as session,
            session.post(
                judge.base_url + "/chat/completions",
                data=data,
                headers={"Content-Type": "application/json"},
            ) as response,
        ):
            return response.status, await response.json()

    async def main() -> list[tuple[int, dict[str, Any]]]:
        return [
            await post(b"{not json"),
            await post(json.dumps({"model": "m"}).encode()),
            await post(json.dumps({"model": "m", "messages": []}).encode()),
            await post(json.dumps({"messages": USER}).encode()),
            await post(json.dumps({"model": "m", "messages": ["hi"]}).encode()),
            await post(json.dumps({"model": "m", "messages": USER, "stream": True}).encode()),
        ]

    answers = run(main())
    with pytest.raises(openai.BadRequestError) as empty:
        run(ask(judge, messages=[]))

    assert [status for status, _ in answers] == [400] * 6
    assert [body["error"]["param"] for _, body in answers] == [
        None,
        "messages",
        "messages",
        "model",
        "messages[0]",
        "stream",
    ]
    assert all(body["error"]["type"] == "invalid_request_error" for _, body in answers)
    assert empty.value.param == "messages"
    assert judge.stats.outcomes == {"400": 7}


def test_json_schema_unsupported_is_400_but_json_object_works() -> None:
    with TestServer(supports_json_schema=False) as server:
        with pytest.raises(openai.BadRequestError) as refused:
            run(ask(server, response_format=schema_format()))
        fallback = run(ask(server, response_format={"type": "json_object"}))

    assert "response_format json_schema is not supported" in str(refused.value)
    assert refused.value.param == "response_format"
    assert 0 <= json.loads(content_of(fallback))["score"] <= 4


def test_unknown_routes_are_json_404_and_models_are_listed() -> None:
    async def main(server: TestServer) -> tuple[list[str], int]:
        async with client_for(server) as client:
            models = [model.id async for model in client.models.list()]
            with pytest.raises(openai.NotFoundError) as missing:
                await client.embeddings.create(model="m", input="x")
        return models, missing.value.status_code

    with TestServer(models=["b", "a"]) as server:
        models, status = run(main(server))
        stats = server.stats

    assert models == ["a", "b"]
    assert status == 404
    assert stats.requests == 0  # only chat completions are counted


# -- faults -----------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_429_carries_retry_after(judge: TestServer, transport: str) -> None:
    judge.faults = Faults(rate_429=1.0, retry_after=0.05)
    with pytest.raises(openai.RateLimitError) as limited:
        run(ask(judge, transport))

    assert limited.value.code == "rate_limit_exceeded"
    assert limited.value.response.headers["retry-after"] == "0.05"
    assert limited.value.response.headers["retry-after-ms"] == "50"
    assert judge.stats.outcomes == {"429": 1}


def test_sdk_retries_honour_retry_after(judge: TestServer) -> None:
    judge.faults = Faults(always="429", retry_after=0.01)
    with pytest.raises(openai.RateLimitError):
        run(ask(judge, client_kwargs={"max_retries": 2}))

    stats = judge.stats
    assert stats.outcomes == {"429": 3}
    assert stats.unique_requests == 1
    assert list(stats.request_hashes.values()) == [3]


def test_quota_is_a_429_without_retry_after(judge: TestServer) -> None:
    judge.faults = Faults(always="quota")
    with pytest.raises(openai.RateLimitError) as quota:
        run(ask(judge))

    assert quota.value.code == "insufficient_quota"
    assert "retry-after" not in quota.value.response.headers
    assert judge.stats.outcomes == {"quota": 1}


@pytest.mark.parametrize(
    ("always", "error", "outcome"),
    [
        ("500", openai.InternalServerError, "500"),
        ("401", openai.AuthenticationError, "401"),
        ("404", openai.NotFoundError, "404"),
    ],
)
def test_status_faults(
    judge: TestServer, always: Any, error: type[Exception], outcome: str
) -> None:
    judge.faults = Faults(always=always)
    with pytest.raises(error):
        run(ask(judge))
    assert judge.stats.outcomes == {outcome: 1}


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_timeout_fault_outlasts_the_client_timeout(judge: TestServer, transport: str) -> None:
    judge.faults = Faults(rate_timeout=1.0, timeout_delay=5.0)
    with pytest.raises(openai.APITimeoutError):
        run(ask(judge, transport, client_kwargs={"timeout": 0.2}))
    assert judge.stats.outcomes == {"timeout": 1}


def test_timeout_fault_shorter_than_the_client_timeout_answers(judge: TestServer) -> None:
    judge.faults = Faults(always="timeout", timeout_delay=0.05)
    completion = run(ask(judge, client_kwargs={"timeout": 5.0}))
    assert content_of(completion).startswith("Here is my answer to:")
    assert judge.stats.outcomes == {"timeout": 1}


@pytest.mark.parametrize(
    ("transport", "error"),
    # The SDK's aiohttp transport maps every aiohttp connection error to a connect timeout.
    [("httpx", openai.APIConnectionError), ("aiohttp", openai.APITimeoutError)],
)
def test_connection_drop(judge: TestServer, transport: str, error: type[Exception]) -> None:
    judge.faults = Faults(rate_connection_drop=1.0)
    with pytest.raises(openai.APIConnectionError) as dropped:
        run(ask(judge, transport))
    assert type(dropped.value) is error
    assert judge.stats.outcomes == {"connection_drop": 1}


def test_malformed_is_a_200_with_broken_json(judge: TestServer) -> None:
    judge.faults = Faults(rate_malformed=1.0)
    completion = run(ask(judge, response_format=schema_format()))

    assert content_of(completion).startswith('{"score": ')
    with pytest.raises(json.JSONDecodeError):
        json.loads(content_of(completion))
    assert judge.stats.outcomes == {"malformed": 1}


def test_off_rubric_alternates_out_of_range_and_missing_score(judge: TestServer) -> None:
    judge.faults = Faults(rate_off_rubric=1.0)
    first = run(ask(judge, response_format=schema_format(maximum=4)))
    second = run(ask(judge, response_format=schema_format(maximum=4)))

    assert json.loads(content_of(first))["score"] == 7
    assert "score" not in json.loads(content_of(second))
    assert judge.stats.outcomes == {"off_rubric": 2}


def test_fault_sequence_is_deterministic_for_a_seed() -> None:
    faults = Faults(rate_429=0.2, rate_500=0.2, rate_malformed=0.2)

    async def outcomes(server: TestServer) -> list[str]:
        seen = []
        async with client_for(server) as client:
            for _ in range(30):  # one at a time: the draw order is the arrival order
                before = server.stats.outcomes
                with contextlib.suppress(openai.APIStatusError):
                    await client.chat.completions.create(model="m", messages=USER)
                seen.append(next(iter(server.stats.outcomes - before)))
        return seen

    sequences = []
    for seed in (7, 7, 8):
        with TestServer(faults=faults, seed=seed) as server:
            sequences.append(run(outcomes(server)))

    assert sequences[0] == sequences[1]
    assert sequences[0] != sequences[2]
    assert set(sequences[0]) == {"ok", "429", "500", "malformed"}


def test_faults_can_change_while_serving(judge: TestServer) -> None:
    async def main() -> None:
        async with client_for(judge) as client:
            await client.chat.completions.create(model="m", messages=USER)
            judge.faults = Faults(always="500")
            with pytest.raises(openai.InternalServerError):
                await client.chat.completions.create(model="m", messages=USER)
            judge.faults = Faults()
            await client.chat.completions.create(model="m", messages=USER)

    run(main())
    assert judge.stats.outcomes == {"ok": 2, "500": 1}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rate_429": 1.5}, "rate_429=1.5 is not within [0, 1]"),
        ({"rate_429": 0.6, "rate_500": 0.6}, "the rates add up to 1.2, more than 1"),
        ({"always": "teapot"}, "always='teapot' is not one of 401, 404, 429"),
        ({"timeout_delay": -1}, "must not be negative"),
    ],
)
def test_invalid_faults_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match="Invalid Faults") as refused:
        Faults(**kwargs)
    assert message in str(refused.value)


# -- stats and lifecycle ----------------------------------------------------------------------


def test_stats_count_requests_hashes_and_concurrency(judge: TestServer) -> None:
    judge.latency = 0.05

    async def main() -> None:
        async with client_for(judge) as client:
            await asyncio.gather(
                *(
                    client.chat.completions.create(
                        model="m", messages=[{"role": "user", "content": f"question {i % 4}"}]
                    )
                    for i in range(8)
                )
            )
            # The same body with its keys in another order is the same request.
            await client.chat.completions.create(
                messages=[{"content": "question 0", "role": "user"}], model="m"
            )

    run(main())
    stats = judge.stats
    assert isinstance(stats, ServerStats)
    assert stats.requests == 9
    assert stats.outcomes == {"ok": 9}
    assert stats.unique_requests == 4
    assert sorted(stats.request_hashes.values()) == [2, 2, 2, 3]
    assert stats.max_in_flight == 8
    assert stats.in_flight == 0

    judge.reset_stats()
    cleared = judge.stats
    assert (cleared.requests, cleared.unique_requests, cleared.max_in_flight) == (0, 0, 0)
    assert not cleared.outcomes


def test_lifecycle() -> None:
    server = TestServer()
    with pytest.raises(RuntimeError, match="not running"):
        _ = server.base_url
    assert server.start() is server.start()  # a second start is a no-op
    url = server.base_url
    assert url.startswith("http://127.0.0.1:")
    assert url.endswith("/v1")
    assert run(ask(server)).choices
    server.stop()
    server.stop()
    with pytest.raises(openai.APIConnectionError):
        run(_ask_url(url))
    with server:  # restartable, on a fresh port
        assert run(ask(server)).choices


async def _ask_url(url: str) -> Any:
    async with openai.AsyncOpenAI(base_url=url, api_key="k", max_retries=0) as client:
        return await client.chat.completions.create(model="m", messages=USER)


def test_negative_latency_is_refused() -> None:
    with pytest.raises(ValueError, match="latency must not be negative"):
        TestServer(latency=-1)


def test_public_surface() -> None:
    assert pairwise_polars.testing.__all__ == sorted(pairwise_polars.testing.__all__)
    assert set(pairwise_polars.testing.__all__) == {
        "BatchSettings",
        "BehaviourName",
        "JudgeBehaviour",
        "judge_behaviour",
        "CapturedRequest",
        "FaultName",
        "ReceivedRequest",
        "Faults",
        "HostileMode",
        "HostileServer",
        "ReplyHook",
        "ServerStats",
        "TestServer",
        "serve",
    }


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM], ids=["INT", "TERM"])
def test_command_line_serves_until_interrupted(stop_signal: signal.Signals) -> None:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pairwise_polars.testing",
            "--port",
            "0",
            "--api-key",
            "k",
            "--rate-500",
            "1.0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        with pytest.raises(openai.InternalServerError):
            run(_ask_url(url))
        process.send_signal(stop_signal)
        _, err = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0
    assert "served 1 requests (500=1)" in err


def test_command_line_rejects_bad_rates() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pairwise_polars.testing", "--rate-429", "2"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        cwd=REPO,
    )
    assert done.returncode == 2
    assert "rate_429=2.0 is not within [0, 1]" in done.stderr


def test_received_requests_keep_bodies_and_mask_credentials(judge: TestServer) -> None:
    headers = {"X-Trace": "t1", "api-key": "azure-SECRET"}
    with openai.OpenAI(base_url=judge.base_url, api_key="sk-live-SECRET", max_retries=0,
                       default_headers=headers) as client:  # fmt: skip
        client.chat.completions.create(model="m", messages=USER, max_completion_tokens=9)
    (seen,) = judge.received
    assert (seen.method, seen.path) == ("POST", "/v1/chat/completions")
    assert seen.body == {"model": "m", "messages": USER, "max_completion_tokens": 9}
    assert seen.headers["authorization"] == "Bearer ***"
    assert seen.headers["api-key"] == "***" and seen.headers["x-trace"] == "t1"
    assert "SECRET" not in repr(judge.received)
    judge.reset()
    assert judge.received == []


def test_cached_tokens_are_reported_when_asked(judge: TestServer) -> None:
    with openai.OpenAI(base_url=judge.base_url, api_key="k", max_retries=0) as client:
        plain = client.chat.completions.create(model="m", messages=USER)
        judge.cached_tokens = 3
        cached = client.chat.completions.create(model="m", messages=USER)
        judge.cached_tokens = 10_000
        capped = client.chat.completions.create(model="m", messages=USER)
    assert plain.usage is not None and plain.usage.prompt_tokens_details is None
    assert cached.usage is not None and cached.usage.prompt_tokens_details is not None
    assert cached.usage.prompt_tokens_details.cached_tokens == 3
    assert capped.usage is not None and capped.usage.prompt_tokens_details is not None
    assert capped.usage.prompt_tokens_details.cached_tokens == capped.usage.prompt_tokens
