"""Shipped templates compiled to polars string expressions: a frame of variables rendered to
chat messages in one pass, without a Jinja2 call per row.

A shipped template uses a small part of Jinja2: text, ``{{ name }}``, ``{{ name | fence }}``
and ``{% if %}`` on a name's truth or on ``==`` / ``!=`` between names. That part compiles to
``concat_str`` and ``when/then``; the prompt is then stripped (Python's whitespace, not Rust's)
and JSON-encoded as :meth:`Metric.render` encodes it, so a request's messages, and with them its
cache key, are the same bytes on either path (tests/metrics/test_compiled_render.py checks every
shipped metric against Jinja on random text). What the compiler does not know (another filter,
a loop, a user's template) leaves the metric on the sandboxed Jinja path; so does a row whose
prompt passes the size limit, so it fails there with Jinja's error.

>>> import polars as pl
>>> from pairwise_polars.metrics import get_metric
>>> frame = pl.DataFrame({"input": ["Hi"], "input_a": ["Hi"], "input_b": ["Hi"],
...                       "output_a": ["A"], "output_b": ["B"]})
>>> metric = get_metric("pairwise-bias")
>>> render_messages(metric, frame).item() == metric.render(frame.row(0, named=True))
True
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable, Collection, Mapping
from functools import lru_cache
from typing import Any

import numpy as np
import polars as pl
from jinja2 import nodes

from pairwise_polars.metrics._metric import _ENV, Metric, neutralise
from pairwise_polars.metrics._sandbox import MAX_TEXT

_PY_WHITESPACE = "".join(c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace())
"""What ``str.strip()`` removes (polars' default strips Rust's whitespace: not U+001C-U+001F)."""
_JSON_ESCAPES = {"\\": "\\\\", '"': '\\"', "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
                 "\t": "\\t"}  # fmt: skip
_JSON_ESCAPES |= {chr(c): f"\\u{c:04x}" for c in range(0x20) if chr(c) not in _JSON_ESCAPES}
"""``json.dumps(..., ensure_ascii=False)``'s escapes: backslash, quote, control characters."""
_FIRST = ("\\", '"', "\n")
_PASSES = (
    {c: _JSON_ESCAPES[c] for c in _FIRST},
    {c: _JSON_ESCAPES[c] for c in "\t\r"},
    {c: e for c, e in _JSON_ESCAPES.items() if c not in (*_FIRST, "\t", "\r")},
)
"""The escapes of :func:`_escaped`'s passes: the common ones first (three patterns at most: the
fast case of ``replace_many``), the rare ones last."""
_OPEN = '[{"role": "system", "content": "'
_MIDDLE = '"}, {"role": "user", "content": "'
_CLOSE = '"}]'

Build = Callable[["_Columns"], pl.Expr]


class NotCompiled(Exception):
    """The template uses what the compiler does not translate: Jinja renders it."""


class _Columns:
    """The variables as expressions: their text (neutralised, ``None`` for null), their fenced
    text, their truth and raw value for tests. Fenced columns are built on first use."""

    def __init__(self, frame: pl.DataFrame, params: Mapping[str, Any]) -> None:
        self.frame = frame
        self.params = params
        self.text: dict[str, pl.Series] = {}
        self.fenced: dict[str, pl.Series] = {}

    def value(self, name: str) -> pl.Series:
        """The variable as the template sees it: neutralised text, null kept."""
        if name not in self.text:
            if name in self.frame.columns:
                self.text[name] = _neutralised(self.frame[name].cast(pl.String))
            elif isinstance(self.params.get(name), str):  # a parameter: not data, as in Jinja
                value = self.params[name]
                self.text[name] = pl.repeat(value, self.frame.height, dtype=pl.String, eager=True)
            else:
                raise NotCompiled(name)
        return self.text[name]

    def shown(self, name: str) -> pl.Expr:
        return pl.lit(self.value(name).fill_null("None"))

    def fence(self, name: str) -> pl.Expr:
        if name not in self.fenced:
            self.fence_all([name])
        return pl.lit(self.fenced[name])

    def fence_all(self, names: Collection[str]) -> None:
        """Fence the variables ``names`` at once: each distinct text among all of them is
        hashed once (a response is often in several pairs), and a variable whose texts are
        another's (``input`` is ``input_a``) is fenced once."""
        bodies: list[pl.Series] = []
        at: dict[str, int] = {}
        for name in names:
            body = self.value(name).fill_null("None")
            at[name] = next((i for i, b in enumerate(bodies) if b.equals(body)), len(bodies))
            if at[name] == len(bodies):
                bodies.append(body)
        if not bodies:
            return
        body = pl.concat(bodies)
        tags = _tags(body)  # hashed once: both ends of the fence carry the same tag
        fenced = pl.select(
            pl.concat_str(pl.lit("<<<"), tags, pl.lit("\n"), body, pl.lit("\n>>>"), tags)
        ).to_series()
        height = self.frame.height
        for name, i in at.items():
            self.fenced[name] = fenced.slice(i * height, height)

    def truth(self, name: str) -> pl.Expr:
        value = pl.lit(self.value(name))
        return value.is_not_null() & (value.str.len_bytes() > 0)


def _neutralised(text: pl.Series) -> pl.Series:
    marked = text.str.contains("<<<|>>>", literal=False).fill_null(False)
    if not marked.any():
        return text
    rows = marked.arg_true()
    fixed = pl.Series([neutralise(v) for v in text.gather(rows).to_list()], dtype=pl.String)
    return text.scatter(rows, fixed)


def _tags(body: pl.Series) -> pl.Series:
    """The first 8 hex digits of each text's SHA-256, hashed once per distinct text (its UTF-8
    bytes taken as polars holds them, not made a Python string and encoded again)."""
    distinct = body.unique()
    tags = [hashlib.sha256(v).hexdigest()[:8] for v in distinct.cast(pl.Binary).to_list()]
    table = pl.DataFrame({"text": distinct, "tag": pl.Series(tags, dtype=pl.String)})
    # A join: measured ~2x faster than replace_strict at 12,000 texts of ~400 characters.
    texts = body.to_frame("text")
    return texts.join(table, on="text", how="left", maintain_order="left")["tag"]


def _concat(parts: list[Build]) -> Build:
    if not parts:
        return lambda _: pl.lit("")
    if len(parts) == 1:
        return parts[0]
    return lambda c: pl.concat_str([p(c) for p in parts])


def _node(node: nodes.Node) -> Build:
    if isinstance(node, nodes.Output):
        return _concat([_node(n) for n in node.nodes])
    if isinstance(node, nodes.TemplateData):
        data = node.data
        return lambda _: pl.lit(data, pl.String)
    if isinstance(node, nodes.Name):
        name = node.name
        return lambda c: c.shown(name)
    if isinstance(node, nodes.Filter) and node.name == "fence" and _plain_filter(node):
        inner = node.node
        if isinstance(inner, nodes.Name):
            name = inner.name
            return lambda c: c.fence(name)
    if isinstance(node, nodes.If):
        test, body = _test(node.test), _concat([_node(n) for n in node.body])
        branches = [(test, body)]
        branches += [(_test(e.test), _concat([_node(n) for n in e.body])) for e in node.elif_]
        otherwise = _concat([_node(n) for n in node.else_])

        def build(c: _Columns) -> pl.Expr:
            chain: Any = pl
            for when, then in branches:
                chain = chain.when(when(c)).then(then(c))
            return chain.otherwise(otherwise(c))

        return build
    raise NotCompiled(type(node).__name__)


def _plain_filter(node: nodes.Filter) -> bool:
    return not (node.args or node.kwargs or node.dyn_args or node.dyn_kwargs)


def _test(node: nodes.Node) -> Build:
    if isinstance(node, nodes.Name):
        name = node.name
        return lambda c: c.truth(name)
    if isinstance(node, nodes.And):
        left, right = _test(node.left), _test(node.right)
        return lambda c: left(c) & right(c)
    if isinstance(node, nodes.Or):
        left, right = _test(node.left), _test(node.right)
        return lambda c: left(c) | right(c)
    if isinstance(node, nodes.Not):
        inner = _test(node.node)
        return lambda c: ~inner(c)
    if (
        isinstance(node, nodes.Compare)
        and isinstance(node.expr, nodes.Name)
        and len(node.ops) == 1
        and node.ops[0].op in ("eq", "ne")
        and isinstance(node.ops[0].expr, nodes.Name)
    ):
        left, right, equal = node.expr.name, node.ops[0].expr.name, node.ops[0].op == "eq"

        def compare(c: _Columns) -> pl.Expr:
            same = pl.lit(c.value(left)).eq_missing(pl.lit(c.value(right)))
            return same if equal else ~same

        return compare
    raise NotCompiled(type(node).__name__)


@lru_cache(maxsize=64)
def _parsed(source: str) -> nodes.Template:
    """A template's syntax tree, parsed once for the compiler and :func:`_fenced` (read only)."""
    return _ENV.parse(source)


@lru_cache(maxsize=64)
def _fenced(source: str) -> tuple[str, ...]:
    """The variables a template fences (``{{ name | fence }}``), in order, once each."""
    found = (
        node.node.name
        for node in _parsed(source).find_all(nodes.Filter)
        if node.name == "fence" and _plain_filter(node) and isinstance(node.node, nodes.Name)
    )
    return tuple(dict.fromkeys(found))


@lru_cache(maxsize=64)
def _compiled(source: str) -> Build | None:
    try:
        return _concat([_node(n) for n in _parsed(source).body])
    except NotCompiled:
        return None


def compiles(metric: Metric) -> bool:
    """Whether ``metric`` renders without Jinja: a shipped metric whose templates the compiler
    translates (a user's metric file always runs in the sandbox)."""
    return (
        metric.source == "shipped"
        and _compiled(metric.system) is not None
        and _compiled(metric.user) is not None
    )


def render_messages(metric: Metric, frame: pl.DataFrame) -> pl.Series:
    """The chat messages of every row of ``frame`` (its columns are the template variables),
    JSON-encoded exactly as :meth:`Metric.render` encodes them."""
    if frame.is_empty():
        return pl.Series("messages", [], dtype=pl.String)
    if not compiles(metric):
        return _by_jinja(metric, frame)
    system, user = _compiled(metric.system), _compiled(metric.user)
    assert system is not None and user is not None  # compiles() checked
    try:
        columns = _Columns(frame, metric.params)
        columns.fence_all(dict.fromkeys(_fenced(metric.system) + _fenced(metric.user)))
        # Each text on its own: a template of plain text (a system prompt) stays one row, not
        # a copy per row to strip, measure and escape.
        system_raw = pl.select(system(columns)).to_series()
        user_raw = pl.select(user(columns)).to_series()
    except NotCompiled:  # a variable neither in the frame nor a text parameter
        return _by_jinja(metric, frame)
    system_text, user_text = _stripped(system_raw), _stripped(user_raw)
    too_long = pl.select(
        (pl.lit(system_raw.str.len_chars()) > MAX_TEXT)
        | (pl.lit(user_raw.str.len_chars()) > MAX_TEXT - pl.lit(system_text.str.len_chars()))
    ).to_series()
    messages = pl.select(
        pl.concat_str(
            pl.lit(_OPEN),
            pl.lit(_escaped(system_text)),
            pl.lit(_MIDDLE),
            pl.lit(_escaped(user_text)),
            pl.lit(_CLOSE),
        ).alias("messages")
    ).to_series()
    if messages.len() != frame.height:  # both templates plain text: one row said once
        messages = messages.new_from_index(0, frame.height)
        too_long = too_long.new_from_index(0, frame.height)
    if too_long.any():  # Jinja's path says what is too long, as it always has
        rows = too_long.arg_true()
        slow = _by_jinja(metric, frame[rows])
        messages = messages.scatter(rows, slow)
    return messages


def _stripped(text: pl.Series) -> pl.Series:
    """``text`` without Python's whitespace at either end: the column itself, not a copy,
    when no text starts or ends with it (a prompt's own words at both ends)."""
    ends = pl.concat([text.str.head(1), text.str.tail(1)])
    if not ends.is_in(list(_PY_WHITESPACE)).any():
        return text
    return text.str.strip_chars(_PY_WHITESPACE)


def _escaped(text: pl.Series) -> pl.Series:
    """``text`` JSON-escaped (:data:`_JSON_ESCAPES`): backslash, quote and newline in one
    ``replace_many`` pass (polars' is several times slower with four patterns or more: 3,000
    prompts of ~1.9 KB measured ~8 -> ~2 ms), then tab and carriage return, then the other
    control characters, each pass only while the text still holds a control character. No
    later pass replaces a backslash or a quote, and no escape holds a control character, so
    each character is escaped once, as ``json.dumps`` escapes it."""
    for i, escapes in enumerate(_PASSES):
        if i and not _holds_control(text):
            break
        text = text.str.replace_many(escapes)
    return text


def _holds_control(text: pl.Series) -> bool:
    """Whether ``text`` may hold a control character (U+0000-U+001F): a byte below 0x20 in its
    buffer, which UTF-8 writes for no other character (a sliced column's buffer may hold text
    outside the slice: then perhaps a pass too many, never one too few)."""
    buffers = text.to_arrow(compat_level=pl.CompatLevel.oldest()).buffers()
    if len(buffers) < 3 or buffers[2] is None:
        return False
    data = np.frombuffer(buffers[2], dtype=np.uint8)
    step = 1 << 18  # compared a slice at a time: no mask the size of the text to allocate
    return any((data[i : i + step] < 0x20).any() for i in range(0, data.size, step))


def _by_jinja(metric: Metric, frame: pl.DataFrame) -> pl.Series:
    rendered = [metric.render(row) for row in frame.iter_rows(named=True)]
    return pl.Series("messages", rendered, dtype=pl.String)
