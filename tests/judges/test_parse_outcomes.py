"""The strict parse reads a reply as ``json.loads`` with its duplicate-key hook always did: the
same answer, or the same error (its words end up in a row's ``error``), whatever the text."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pairwise_polars.judges._parse import ReplyError, _loads, _unique_keys, parse_judgement

PIECES = st.sampled_from(['{"score": 2', '"score": 9', ', "reason": "r"', ', "score": 1', "}",
                          "\ufeff", " ", "[1]", "null", '"é"', "{", ":", ",", "\\"])  # fmt: skip
TEXTS = st.lists(PIECES | st.text(max_size=4), max_size=7).map("".join)


def _outcome(loads: Any, text: str) -> tuple[str, Any]:
    try:
        return "value", loads(text)
    except json.JSONDecodeError as exc:
        return "not json", (exc.msg, exc.pos)
    except ReplyError as exc:
        return "reply error", str(exc)


def _reference(text: str) -> Any:
    return json.loads(text, object_pairs_hook=_unique_keys)


@pytest.mark.parametrize(
    "text", ['\ufeff{"score": 1}', '{"score": 1, "score": 2}', '{"score": 1,}', "{", "[1] 2"]
)
def test_errors_are_worded_as_json_loads_words_them(text: str) -> None:
    assert _outcome(_loads, text) == _outcome(_reference, text)
    with pytest.raises(ReplyError):
        parse_judgement(text, 4)


def test_a_reply_with_a_byte_order_mark_says_so() -> None:
    with pytest.raises(ReplyError, match="Unexpected UTF-8 BOM"):
        parse_judgement('\ufeff{"score": 1, "reason": "r"}', 4)


@settings(max_examples=400, deadline=None)
@given(text=TEXTS)
def test_every_text_reads_as_json_loads_reads_it(text: str) -> None:
    assert _outcome(_loads, text) == _outcome(_reference, text)
