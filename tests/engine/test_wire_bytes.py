"""The fast path's bodies: encoded once per rubric around the stored messages, the same bytes
as encoding the decoded chat; headers and the SSL context built once per process."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pairwise_polars as pp
from pairwise_polars.engine import _api
from pairwise_polars.engine._endpoint import RunState
from pairwise_polars.engine._wire import compact_chat, encode, ssl_for
from pairwise_polars.judges._verdict import JudgeRequest

NASTY = st.sampled_from(['"}, {"role": "', '", "content": "', '{"role": "', "\\", '"', "\n",
                         "\x00", "é", "😀", ", ", ": "])  # fmt: skip
content = st.lists(NASTY | st.text(max_size=6), max_size=8).map("".join)
chats = st.lists(
    st.builds(
        lambda role, text: {"role": role, "content": text},
        st.sampled_from(["system", "user", "assistant"]),
        content,
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=300, deadline=None)
@given(chat=chats)
def test_compact_chat_is_the_compact_encoding(chat: list[dict[str, str]]) -> None:
    spaced = json.dumps(chat, ensure_ascii=False)
    compact = json.dumps(chat, ensure_ascii=False, separators=(",", ":"))
    assert compact_chat(spaced) == compact.encode()


@settings(max_examples=300, deadline=None)
@given(chat=chats)
def test_compact_chat_of_the_bytes_is_that_of_the_text(chat: list[dict[str, str]]) -> None:
    spaced = json.dumps(chat, ensure_ascii=False)
    assert compact_chat(spaced.encode()) == compact_chat(spaced)
    assert compact_chat(spaced[1:].encode()) is None


@settings(max_examples=100, deadline=None)
@given(chat=chats, max_score=st.integers(1, 6), structured=st.booleans())
def test_a_request_carrying_its_bytes_is_sent_the_same_body(
    chat: list[dict[str, str]], max_score: int, structured: bool
) -> None:
    judge = pp.OpenAIJudge("m", api_key="k")
    state = RunState(structured=structured, rpm=None, tpm=None)
    messages = json.dumps(chat, ensure_ascii=False)
    request = JudgeRequest("k", messages, max_score, messages.encode())
    assert judge._encoded(request, state) == encode(judge._body(chat, request, state))


def test_other_shapes_are_left_to_the_decoding_path() -> None:
    assert compact_chat('[{"content": "x", "role": "user"}]') is None
    assert compact_chat('[{"role": "user", "content": ["a"]}]') is None


@pytest.mark.parametrize("structured", [True, False])
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"seed": 3, "score_from": "logprobs"},
        {"extra_body": {"reasoning_effort": "low"}},
        {"model": "o3-mini"},
    ],
)
@settings(max_examples=40, deadline=None)
@given(chat=chats, max_score=st.integers(1, 6))
def test_encoded_body_is_the_encoded_dict(
    chat: list[dict[str, str]], max_score: int, structured: bool, options: dict[str, Any]
) -> None:
    settings_ = dict(options)
    judge = pp.OpenAIJudge(settings_.pop("model", "m"), api_key="k", **settings_)
    state = RunState(structured=structured, rpm=None, tpm=None)
    messages = json.dumps(chat, ensure_ascii=False)
    request = JudgeRequest("k", messages, max_score)
    expected = encode(judge._body(chat, request, state))
    assert judge._encoded(request, state) == expected
    assert judge._encoded(request, state) == expected  # the cached halves too


def test_extra_body_that_replaces_the_messages_takes_the_dict_path() -> None:
    judge = pp.OpenAIJudge("m", api_key="k", extra_body={"messages": []})
    state = RunState(structured=False, rpm=None, tpm=None)
    request = JudgeRequest("k", '[{"role": "user", "content": "x"}]', 4)
    assert judge._encoded(request, state) is None


def test_no_ssl_context_for_http_and_one_for_https() -> None:
    assert ssl_for("http://127.0.0.1:8000/v1/chat/completions", None) is True
    first = ssl_for("https://api.example.com/v1/chat/completions", None)
    assert first is ssl_for("https://other.example.com/v1/chat/completions", None)
    assert first is not True


def test_sdk_headers_built_once_and_keyed_without_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    judge = pp.OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", api_key="sk-secret-123")
    first = judge._sdk_headers()
    assert first["Authorization"] == "Bearer sk-secret-123"
    assert not any("sk-secret-123" in digest for digest in _api._SDK_HEADERS)

    def no_client(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an SDK client was built again")

    monkeypatch.setattr(pp.OpenAIJudge, "_client", no_client)
    assert judge._sdk_headers() == first
    other = pp.OpenAIJudge("m", base_url="http://127.0.0.1:9/v1", api_key="sk-other")
    with pytest.raises(AssertionError, match="built again"):  # another key: its own headers
        other._sdk_headers()
