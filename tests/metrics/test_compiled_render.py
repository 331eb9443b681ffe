"""Shipped metrics render without Jinja (metrics/_compiled.py), to the same bytes as Jinja."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pairwise_polars.metrics import compiles, get_metric, load_metric, metric_names, render_messages
from pairwise_polars.metrics._compiled import _stripped

VARIABLES = ("input_a", "input_b", "output_a", "output_b", "dimension", "attribute_a",
             "attribute_b")  # fmt: skip
TRICKY = ["<<<", ">>>", "<<<<", ">>>>>", "‹‹‹", "{{ x }}", "{%", '"', "\\", "\n", "\t", "\x00",
          "\x1c", "\x1f", "\u2028", "\x85", "\xa0", " ", "é", "😀", "<<<2d8bd7d9", ">>>2d8bd7d9",
          "None"]  # fmt: skip
text = st.one_of(
    st.none(),
    st.text(max_size=40),
    st.lists(st.sampled_from(TRICKY) | st.text(max_size=5), max_size=8).map("".join),
)


def frame(rows: list[dict[str, str | None]]) -> pl.DataFrame:
    out = pl.DataFrame(rows, schema=dict.fromkeys(VARIABLES, pl.String))
    return out.with_columns(
        input=pl.col("input_a"), output=pl.col("output_a"), attribute_under_test=pl.col("dimension")
    )


def jinja(metric_name: str, data: pl.DataFrame) -> list[str]:
    metric = get_metric(metric_name)
    return [metric.render(row) for row in data.iter_rows(named=True)]


@pytest.mark.parametrize("name", metric_names())
def test_every_shipped_metric_compiles(name: str) -> None:
    assert compiles(get_metric(name))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(metric_names()),
    rows=st.lists(st.fixed_dictionaries(dict.fromkeys(VARIABLES, text)), min_size=1, max_size=6),
    same_input=st.booleans(),
)
def test_compiled_equals_jinja_on_random_text(
    name: str, rows: list[dict[str, str | None]], same_input: bool
) -> None:
    if same_input:  # the "sent for both responses" branch
        rows = [{**r, "input_b": r["input_a"]} for r in rows]
    data = frame(rows)
    assert render_messages(get_metric(name), data).to_list() == jinja(name, data)


def test_every_escape_in_one_text_renders_as_jinja() -> None:
    # More escapes than one pass of the compiled path takes: each character escaped once.
    every = "".join(map(chr, range(0x20))) + '"\\ a\u2028'
    data = frame([dict.fromkeys(VARIABLES, every), dict.fromkeys(VARIABLES, "plain")])
    assert render_messages(get_metric("pairwise-bias"), data).to_list() == jinja(
        "pairwise-bias", data
    )


def test_whitespace_at_either_end_is_stripped_as_python_strips() -> None:
    # No shipped template starts or ends with a variable; a template that did would show it.
    texts = ["\x1c a \u2028", "\xa0b", "c\u3000", "\x85", "plain", ""]
    assert _stripped(pl.Series(texts)).to_list() == [t.strip() for t in texts]
    assert _stripped(pl.Series(["plain", "words"])).to_list() == ["plain", "words"]


def test_parameter_not_in_the_frame_renders_as_jinja() -> None:
    metric = get_metric("pairwise-demographic-bias", attribute_under_test="age <<<")
    data = frame([dict.fromkeys(VARIABLES, "x <<< y")]).drop("attribute_under_test")
    assert render_messages(metric, data).to_list() == [
        metric.render(row) for row in data.iter_rows(named=True)
    ]


def test_user_template_keeps_the_sandbox(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(
        "name: mine\nversion: '1'\nrubric: {max: 2}\nsystem: Judge.\n"
        "user: '{{ output_a | upper }} vs {{ output_b }}'\n"
    )
    metric = load_metric(path)
    assert not compiles(metric)  # a user's file: Jinja in the sandbox, whatever it uses
    data = frame([dict.fromkeys(VARIABLES, "ok")])
    assert render_messages(metric, data).to_list() == [
        metric.render(row) for row in data.iter_rows(named=True)
    ]


def test_too_long_prompt_fails_as_jinja_does() -> None:
    from pairwise_polars._errors import TemplateError

    data = frame([dict.fromkeys(VARIABLES, "x" * 600_000)])
    with pytest.raises(TemplateError, match="exceeds the limit"):
        render_messages(get_metric("pairwise-bias"), data)
