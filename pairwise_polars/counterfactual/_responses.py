"""``collect_responses``: the system under test's answer to every row, through the judge's
engine (bounded concurrency, rate limits, retries, cache, progress).

Rows -> unique (messages, sample) requests -> cache -> target -> results joined back by key.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from typing import Any, Literal

import polars as pl

from pairwise_polars._errors import ColumnError, OptionError
from pairwise_polars.counterfactual._response_cache import ResponseCache, ResponseCacheLike
from pairwise_polars.counterfactual._target import (
    REQUEST_SCHEMA,
    RESPONSE_SCHEMA,
    OpenAITarget,
    Target,
    answers_of,
)
from pairwise_polars.engine import cache_session, sync_twin
from pairwise_polars.engine._cached_map import cached_map
from pairwise_polars.io._frames import DataLike, to_lazy
from pairwise_polars.pairing import Columns

SAMPLE = "sample"
RESPONSE_COLUMNS = (
    "error",
    "finish_reason",
    "response_model",
    "attempts",
    "latency_s",
    "input_tokens",
    "output_tokens",
    "cached",
)
"""Columns added after the output (and ``sample``) column."""
SOURCE_ID, SOURCE_GROUP = "source_id", "source_group_id"
# Helper columns carry a prefix no user column is expected to have.
_ROW, _TEXT, _DRAW = "__pp_response_row", "__pp_response_text", "__pp_response_draw"
_REQUEST = "__pp_response_request"  # the draw sent: copies of a text in a group draw apart
_UNSENT = {"null": "null input: nothing was sent", "empty": "empty input: nothing was sent"}


async def acollect_responses(
    frame: DataLike,
    target: str | Target,
    *,
    text: str | None = None,
    samples: int = 1,
    system_prompt: str | None = None,
    cache: ResponseCacheLike = True,
    progress: bool = True,
    output: str | None = None,
    strategy: Literal["group", "contrastive"] | None = None,
    columns: Columns | None = None,
    group_by: str | None = None,
    role: str | None = None,
    reference: str = "reference",
    id: str | None = None,
    **target_options: Any,
) -> pl.DataFrame:
    """Send every row's ``text`` to the system under test and add its answer as ``output``.

    ``target`` is an :class:`OpenAITarget`, a model name (then ``target_options`` are its
    keywords: ``base_url``, ``api_key``, ``temperature``, ``max_tokens``, ``seed``,
    ``max_concurrency``, ``requests_per_minute``, ...; given with an ``OpenAITarget`` they
    override its settings), or any object with ``name`` and an async ``respond(requests)``
    (:class:`Target`). ``system_prompt`` goes first in every chat. ``frame`` is anything
    :func:`~pairwise_polars.form_pairs` reads; every column rides along; the result is a polars
    DataFrame in the input's row order. Column names: ``columns=Columns(...)`` (its ``input``
    is the text sent, its ``output`` the answer's column) or ``text=``, ``output=``,
    ``group_by=``, ``role=``, ``id=`` (defaults ``input``, ``output``, ``group_id``, ``role``,
    ``id``; keywords win over ``columns``).

    Added columns: ``output`` (String; **null when the generation failed**, never an empty
    string: ``form_pairs`` then marks the pair with ``skip_reason`` and it is not judged),
    ``error``, ``finish_reason``, ``response_model``, ``attempts``, ``latency_s``,
    ``input_tokens``, ``output_tokens``, ``cached``. An empty reply, a request that exhausts
    its retries and a null or blank input are error rows; a bad key, an unknown model or an
    exhausted quota stop the run with :class:`~pairwise_polars.JudgeError` (answers so far are
    cached).

    ``samples=n`` draws each row ``n`` times: one row per draw, with ``sample`` (Int64,
    0..n-1). Then ``id`` (if the frame has one) becomes ``"<id>#<sample>"``, the original kept
    in ``source_id``, so draws stay distinct rows for pairing. For the **group** strategy
    (``strategy="group"``, or by default when ``role`` has a ``reference`` row) the group
    column becomes ``"<group>#<sample>"`` (original in ``source_group_id``): draw k of each
    variant is paired with draw k of its reference, one reference per group. For the
    **contrastive** strategy groups are kept, so ``form_pairs`` pairs every draw of pole a with
    every draw of pole b (n² pairs a group).

    Identical requests (same messages and draw) are sent once; with ``cache`` (the default
    file beside the judgements; a path; ``False`` for none) successful answers are kept, keyed
    by the target's model and parameters, the messages and the draw index, so a rerun sends
    only what failed or is new. Pass ``cache=False`` for fresh draws every run. Rows of one
    group with the same text (a ``control`` row and the reference it copies) are independent
    draws: the c-th copy is sent as draw ``c * samples + k`` (its own cache entry and seed), so
    a control row never gets its reference's reply.
    ``collect_responses`` is the same call for sync code; ``acollect_responses`` awaits it.

    >>> import polars as pl
    >>> from pairwise_polars.testing import TestServer
    >>> rows = pl.DataFrame({"input": ["Describe Anna.", "Describe Omar."]})
    >>> with TestServer() as server:
    ...     answered = collect_responses(rows, "test-model", base_url=server.base_url,
    ...                                  cache=False, progress=False)
    >>> answered["output"].to_list()
    ['Here is my answer to: Describe Anna.', 'Here is my answer to: Describe Omar.']
    """
    given = {"input": text, "output": output, "group_by": group_by, "role": role, "id": id}
    names = Columns.of(columns, {k: v for k, v in given.items() if v is not None})
    text, output = names.input, names.output
    group_by, role, id = names.group_by, names.role, names.id
    rows = to_lazy(frame)[0].collect()
    target = _resolve_target(target, system_prompt, target_options)
    system = getattr(target, "system_prompt", None) if system_prompt is None else system_prompt
    regroup = _check(rows, text, output, samples, strategy, group_by, role, reference, id)

    draws = _draws(rows, text, samples, group_by)
    keyed, requests = _requests(draws, target, system)
    with cache_session(cache, table=ResponseCache) as store:
        results = await _respond(target, requests, store, progress)

    answered = (
        draws.join(keyed, on=[_TEXT, _REQUEST], how="left")
        .join(results, on="key", how="left")
        .select(
            _ROW,
            _DRAW,
            pl.col("output").alias(output),
            pl.coalesce("error", _unsent_reason()).alias("error"),
            "finish_reason",
            pl.col("response_model").fill_null(pl.lit(target.name)),
            pl.col("attempts").fill_null(0),
            "latency_s",
            "input_tokens",
            "output_tokens",
            pl.col("cached").fill_null(False),
        )
    )
    out = rows.with_row_index(_ROW).join(answered, on=_ROW, how="left").sort(_ROW, _DRAW)
    if samples == 1:
        return out.select(*rows.columns, output, *RESPONSE_COLUMNS)
    out, kept = _per_draw_ids(out.rename({_DRAW: SAMPLE}), rows.columns, regroup, group_by, id)
    return out.select(*rows.columns, *kept, output, SAMPLE, *RESPONSE_COLUMNS)


collect_responses = sync_twin(acollect_responses, "collect_responses")


def _resolve_target(
    target: str | Target, system_prompt: str | None, options: Mapping[str, Any]
) -> Target:
    settings = dict(options)
    if system_prompt is not None:
        settings["system_prompt"] = system_prompt
    if isinstance(target, str):
        return OpenAITarget(target, **settings)
    if isinstance(target, OpenAITarget):
        return dataclasses.replace(target, **settings) if settings else target
    if not callable(getattr(target, "respond", None)) or not hasattr(target, "name"):
        raise TypeError(
            f"target must be a model name, an OpenAITarget, or an object with `name` and an "
            f"async `respond(requests)`; got {type(target).__name__}. For an OpenAI-compatible "
            'endpoint: collect_responses(rows, "my-model", base_url="http://localhost:8000/v1").'
        )
    stray = sorted(set(options))
    if stray:
        raise TypeError(
            f"Target options {stray} configure an OpenAITarget; set them on your "
            f"{type(target).__name__} instead."
        )
    return target


def _check(
    rows: pl.DataFrame,
    text: str,
    output: str,
    samples: int,
    strategy: str | None,
    group_by: str,
    role: str,
    reference: str,
    id: str,
) -> bool:
    """Every problem before the first request; returns whether groups are split per draw."""
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise OptionError(f"samples must be a positive integer, got {samples!r}.")
    if strategy not in (None, "group", "contrastive"):
        raise OptionError(f"strategy must be 'group', 'contrastive' or None, got {strategy!r}.")
    if text not in rows.columns:
        raise ColumnError(
            f"The data has no column {text!r} to send; it has {rows.columns}. Name the prompt "
            'column with text="<your column>".'
        )
    if rows.schema[text] not in (pl.String, pl.Null):
        raise ColumnError(
            f"Column {text!r} has type {rows.schema[text]}, expected a string column; cast it "
            f"first, e.g. rows.with_columns(pl.col({text!r}).cast(pl.String))."
        )
    regroup = samples > 1 and _per_draw_groups(rows, strategy, group_by, role, reference)
    written = [output, *RESPONSE_COLUMNS]
    if samples > 1:
        written += [SAMPLE, *([SOURCE_ID] if id in rows.columns else [])]
        written += [SOURCE_GROUP] if regroup else []
    taken = [c for c in written if c in rows.columns]
    if taken:
        raise ColumnError(
            f"The data already has column(s) {taken}, which collect_responses() writes. Drop or "
            "rename them first, e.g. rows.drop("
            + ", ".join(repr(c) for c in taken)
            + '), or name the answer column with output="<new name>".'
        )
    return regroup


def _per_draw_groups(
    rows: pl.DataFrame, strategy: str | None, group_by: str, role: str, reference: str
) -> bool:
    if strategy == "contrastive":
        return False
    missing = [c for c in (group_by, role) if c not in rows.columns]
    if missing:
        if strategy == "group":
            raise ColumnError(
                f"strategy='group' with samples > 1 splits each group per draw, but the data "
                f"has no column(s) {missing}; it has {rows.columns}. Name them with "
                'group_by="..." / role="...".'
            )
        return False
    return strategy == "group" or bool((rows[role] == reference).any())


def _draws(rows: pl.DataFrame, text: str, samples: int, group_by: str) -> pl.DataFrame:
    """One row per (row, draw k); ``_REQUEST`` is the draw sent for it.

    The c-th row of a group with a given text (c = 0, 1, ...: a control row is a copy of its
    reference) is sent as draw ``c * samples + k``: a copy gets its own, independent answer
    (and seed), never the first one's reply from the dedupe or the cache.
    """
    draws = pl.DataFrame({_DRAW: range(samples)}, schema={_DRAW: pl.Int64})
    text_ = pl.col(text).cast(pl.String)
    copy = pl.lit(0, pl.Int64)  # without groups, identical rows are one request
    if group_by in rows.columns:
        copy = pl.int_range(pl.len(), dtype=pl.Int64).over(group_by, text_)
    return (
        rows.select(text_.alias(_TEXT), copy=copy)
        .with_row_index(_ROW)
        .join(draws, how="cross", maintain_order="left_right")
        .with_columns((pl.col("copy") * samples + pl.col(_DRAW)).alias(_REQUEST))
        .drop("copy")
    )


def _requests(
    draws: pl.DataFrame, target: Target, system: str | None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(keyed, requests)``: the (text, draw sent) -> key map, and the unique requests."""
    identity = getattr(target, "identity", None) or {"name": target.name}
    identity_json = json.dumps(identity, sort_keys=True, default=str)
    unique = draws.filter(_sendable()).select(_TEXT, _REQUEST).unique(maintain_order=True)
    columns: dict[str, list[Any]] = {_TEXT: [], _REQUEST: [], "key": [], "messages": []}
    head = [{"role": "system", "content": system}] if system else []
    messages_of: dict[str, str] = {}
    for value, sample in unique.iter_rows():
        messages = messages_of.get(value)
        if messages is None:
            messages = json.dumps([*head, {"role": "user", "content": value}], ensure_ascii=False)
            messages_of[value] = messages
        payload = f"{identity_json}\x1f{messages}\x1f{sample}"
        columns[_TEXT].append(value)
        columns[_REQUEST].append(sample)
        columns["key"].append(hashlib.sha256(payload.encode("utf-8")).hexdigest())
        columns["messages"].append(messages)
    keyed = pl.DataFrame(columns, schema={_TEXT: pl.String, _REQUEST: pl.Int64, "key": pl.String,
                                          "messages": pl.String})  # fmt: skip
    requests = keyed.select("key", "messages", pl.col(_REQUEST).alias("sample"))
    return keyed.select(_TEXT, _REQUEST, "key"), requests.select(list(REQUEST_SCHEMA))


async def _respond(
    target: Target, requests: pl.DataFrame, store: ResponseCache | None, progress: bool
) -> pl.DataFrame:
    results = await cached_map(
        requests,
        answers_of(target),
        store,
        schema=RESPONSE_SCHEMA,
        conform=lambda frame: _conform(frame, target),
        label="responding",
        progress=progress,
        # A target that forgot a request must not make a row look answered: it is an error row.
        lost_error="the target returned no result for this request",
    )
    # A "success" without text is not an answer.
    blank = pl.col("output").is_null() | (pl.col("output").str.strip_chars() == "")
    return results.with_columns(
        error=pl.when(pl.col("error").is_null() & blank)
        .then(pl.lit("the target returned no text"))
        .otherwise("error"),
        output=pl.when(~blank).then("output"),
    ).select(*RESPONSE_SCHEMA, "cached")


def _conform(frame: pl.DataFrame, target: Target) -> pl.DataFrame:
    """A result frame with every RESPONSE_SCHEMA column (``key`` and ``output`` are required)."""
    missing = [c for c in ("key", "output") if c not in frame.columns]
    if missing:
        raise TypeError(
            f"{type(target).__name__}.respond yielded a frame without {missing}; it must have "
            f"`key` and `output`, and may have {list(RESPONSE_SCHEMA)[2:]}."
        )
    return frame.select(
        pl.col(c).cast(t) if c in frame.columns else pl.lit(None, t).alias(c)
        for c, t in RESPONSE_SCHEMA.items()
    )


def _sendable() -> pl.Expr:
    return pl.col(_TEXT).is_not_null() & (pl.col(_TEXT).str.strip_chars() != "")


def _unsent_reason() -> pl.Expr:
    return (
        pl.when(pl.col(_TEXT).is_null())
        .then(pl.lit(_UNSENT["null"]))
        .when(pl.col(_TEXT).str.strip_chars() == "")
        .then(pl.lit(_UNSENT["empty"]))
    )


def _per_draw_ids(
    out: pl.DataFrame, columns: list[str], regroup: bool, group_by: str, id: str
) -> tuple[pl.DataFrame, list[str]]:
    """Draw-unique ids (and groups, for the group strategy), keeping the originals."""
    kept: dict[str, pl.Expr] = {}
    replaced: dict[str, pl.Expr] = {}
    if regroup:
        kept[SOURCE_GROUP] = pl.col(group_by)
        replaced[group_by] = pl.format("{}#{}", pl.col(group_by).cast(pl.String), SAMPLE)
    if id in columns:
        kept[SOURCE_ID] = pl.col(id)
        replaced[id] = pl.format("{}#{}", pl.col(id).cast(pl.String), SAMPLE)
    return out.with_columns(**kept, **replaced), list(kept)
