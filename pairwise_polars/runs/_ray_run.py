"""``score_parquet(..., runner="ray")``: the same run on Ray Data.

The driver plans the run as the local runner does (key columns only), keeps the journal and
merges the summary. When each group's rows sit together in the files, every worker reads its
own chunk's row range as the local runner does (a dataset of chunk indices, no shuffle). Else
Ray Data reads the source once in row slices (one read task each, every row's position kept so
the ids match the local run's), tags each row with its chunk of the plan, and co-locates a
chunk's rows by a hash shuffle on that tag (``groupby().map_groups()``; a chunk never splits a
group, so each group reaches one worker whole). A pool of long-lived actors (a
class UDF that builds its judge, cache and event loop once, on fractional CPUs) forms each
chunk's pairs with the same polars code, scores them through the same async cached map, writes
the chunk's part, and returns the chunk's mergeable summary sums; the driver journals each
chunk as it finishes and merges the sums into the summary, equal to the local ``aggregate``.
A named actor holds the run's request and token buckets, so one rate limit holds across every
worker.

This is the driver's side and the only module that imports Ray; ``score_parquet`` imports it
only for ``runner="ray"``. What each actor does with its chunk is in ``_ray_worker``.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import polars as pl
import pyarrow as pa
import ray
import ray.data
from ray.exceptions import RayTaskError

from pairwise_polars._errors import OptionError, PairwiseError
from pairwise_polars.engine._limits import RateLimiter
from pairwise_polars.io import Source, scan_source
from pairwise_polars.judges import Judge
from pairwise_polars.runs import _ray_sizing, _ray_watchdog
from pairwise_polars.runs._chunks import POS, Chunk
from pairwise_polars.runs._ray_worker import (
    CHUNK,
    USAGE_FIELDS,
    ChunkJob,
    ChunkScorer,
    ChunkSource,
)
from pairwise_polars.scoring import Spent

SLICE_ROWS = 50_000
"""Source rows per read task."""
_RAY_ADVICE = "\nFailed to apply UDF transform"
"""Where Ray Data's advice about retries starts in a failed task's error message."""
_BUCKETS_PREFIX = "pairwise-polars-limits-"


@dataclass
class RayTally:
    """What the workers did, as the driver saw the chunks finish."""

    judged: int = 0
    spent: Spent = field(default_factory=Spent)
    """What the workers' judge requests spent (tokens, requests), gathered chunk by chunk."""
    sums: list[pl.DataFrame] = field(default_factory=list)
    errors: list[pl.DataFrame] = field(default_factory=list)


@contextlib.contextmanager
def connected() -> Iterator[None]:
    """Attach to the cluster ``RAY_ADDRESS`` names (or ``ray job submit`` runs in), else start
    a local one; a session already started (by the caller, a test) is used as it is. A session
    this call connected is disconnected at the end, and a local Ray it started is shut down;
    that local Ray is sized for this machine (``_ray_sizing``) and has a watchdog
    (``_ray_watchdog``), so no Ray process outlives a driver killed mid-run by more than a
    moment."""
    if ray.is_initialized():
        yield
        return
    watchdog = None
    if os.environ.get("RAY_ADDRESS"):
        ray.init(logging_level=logging.WARNING)
    else:
        before = _ray_watchdog.children(os.getpid())
        cpus, memory = _ray_sizing.machine_cpus(), _ray_sizing.available_memory()
        try:
            ray.init(**_ray_sizing.local_ray_options(cpus, memory))
        except ValueError as exc:  # a cluster ``ray start`` began on this machine: as it is
            if "existing cluster" not in str(exc):
                raise
            ray.init(logging_level=logging.WARNING)
        watchdog = _ray_watchdog.start(sorted(_ray_watchdog.children(os.getpid()) - before))
    try:
        yield
    finally:
        ray.shutdown()
        _ray_watchdog.stop(watchdog)


def run_chunks(
    *,
    source: Source,
    schema: pl.Schema,
    id_column: str,
    n_rows: int,
    todo: list[Chunk],
    job: ChunkJob,
    judge: Judge,
    actors: int | None,
    progress: bool,
    on_chunk: Callable[[int, dict[str, Any]], None],
) -> RayTally:
    """Score the ``todo`` chunks on Ray; ``on_chunk(index, entry)`` is called on the driver as
    each chunk's part is written (``n_rows``: the source's rows, as planned). Returns the fresh
    answers and the chunks' summary sums."""
    with connected(), _data_context(progress):
        tally = RayTally()
        if not todo:
            return tally
        pool = _pool_size(actors, len(todo))
        buckets = _buckets(judge)
        scorer = {
            "fn_constructor_kwargs": {"job": job, "judge": judge, "buckets": buckets},
            "compute": ray.data.ActorPoolStrategy(size=pool),
            "num_cpus": _ray_sizing.CPUS_PER_WORKER,
            "batch_format": "pyarrow",
        }
        # Reading each chunk's own row range reads no more rows than reading the source once
        # when each group's rows sit together, as runs are usually written.
        if sum(c.last_row - c.first_row + 1 for c in todo) <= n_rows:  # no shuffle
            reads = ChunkSource(source, id_column, {c.index: c for c in todo})
            scorer["fn_constructor_kwargs"]["reads"] = reads
            items = [{CHUNK: c.index} for c in todo]
            chunks = ray.data.from_items(items, override_num_blocks=len(todo))
            scored = chunks.map_batches(ChunkScorer, batch_size=1, **scorer)
        else:  # scattered groups: the source read once, each chunk's rows shuffled together
            rows = _chunk_rows(source, schema, id_column, todo, job.group_by)
            grouped = rows.groupby(CHUNK, num_partitions=min(len(todo), pool * 2))
            scored = grouped.map_groups(ChunkScorer, **scorer)
        try:
            for batch in scored.iter_batches(batch_size=None, batch_format="pyarrow"):
                for row in cast(pa.Table, batch).to_pylist():
                    _tally_chunk(tally, row, on_chunk)
        except Exception as exc:
            original = _pairwise_cause(exc)
            if original is not None:
                raise original from exc
            raise
        finally:
            if buckets is not None:
                ray.kill(buckets)
        return tally


@contextlib.contextmanager
def _data_context(progress: bool) -> Iterator[None]:
    """Ray Data's settings for one run (progress bars; a worker's own error raised, not Ray's
    wrapper), the caller's own put back after it."""
    context = ray.data.DataContext.get_current()
    before = context.enable_progress_bars, context.raise_original_map_exception
    context.enable_progress_bars = progress
    context.raise_original_map_exception = True
    try:
        yield
    finally:
        context.enable_progress_bars, context.raise_original_map_exception = before


def _chunk_rows(
    source: Source, schema: pl.Schema, id_column: str, todo: list[Chunk], group_by: str
) -> ray.data.Dataset:
    """The source's rows of the ``todo`` chunks as a Ray dataset, each row with its chunk's
    index (``CHUNK``), read slice by slice on the cluster."""
    mapping = pl.concat(
        [
            pl.DataFrame({group_by: c.groups}).with_columns(pl.lit(c.index).alias(CHUNK))
            for c in todo
        ]
    )
    slices = _slices(source)
    reader = {
        "schema": dict(schema),
        "id_column": id_column,
        "group_by": group_by,
        "mapping": ray.put(mapping),
        "source_format": source.format,
        "storage_options": source.storage_options,
    }
    return ray.data.from_items(slices, override_num_blocks=len(slices)).map_batches(
        cast(Any, _read_slices), batch_size=1, batch_format="pyarrow", fn_kwargs=reader
    )


def _tally_chunk(
    tally: RayTally, row: dict[str, Any], on_chunk: Callable[[int, dict[str, Any]], None]
) -> None:
    """One scored chunk's row: its journal entry told to ``on_chunk``, its answers, spending
    and sums added to ``tally``."""
    entry = {k: row[k] for k in ("pairs", "scored_rows", "from_cache", "errors")}
    entry["not_judged"] = row["not_judged"]
    on_chunk(row["chunk"], entry)
    tally.judged += row["judged"]
    for name in USAGE_FIELDS:
        setattr(tally.spent, name, getattr(tally.spent, name) + row[name])
    tally.sums.append(pl.read_ipc(io.BytesIO(row["sums"])))
    tally.errors.append(pl.read_ipc(io.BytesIO(row["error_sums"])))


@ray.remote(num_cpus=0)
class TokenBuckets:
    """One run's request and token buckets, shared by every judge actor (a named actor).

    The request bucket holds one request (``burst=1``): requests are spaced evenly, so no
    window of ``t`` seconds holds more than ``1 + t * rate``. ``grants()`` counts the requests
    let through per second since the actor started (what the tests and benchmark read)."""

    def __init__(self, requests_per_minute: float | None, tokens_per_minute: float | None):
        self.requests = RateLimiter(requests_per_minute, burst=1) if requests_per_minute else None
        self.tokens = RateLimiter(tokens_per_minute) if tokens_per_minute else None
        self.started = time.monotonic()
        self.granted: Counter[int] = Counter()

    async def acquire(self, which: str, amount: float) -> None:
        bucket = self.requests if which == "requests" else self.tokens
        if bucket is not None:
            await bucket.acquire(amount)
        if which == "requests":
            self.granted[int(time.monotonic() - self.started)] += 1

    def grants(self) -> dict[int, int]:
        return dict(self.granted)


def _buckets(judge: Judge) -> Any:
    """Start the run's shared buckets when the judge sets a rate limit; the actor's handle
    (named ``pairwise-polars-limits-<id>`` in the ``pairwise_polars`` namespace, so a person
    can find it with ``ray.get_actor``)."""
    rpm = getattr(judge, "requests_per_minute", None)
    tpm = getattr(judge, "tokens_per_minute", None)
    if not rpm and not tpm:
        return None
    name = f"{_BUCKETS_PREFIX}{uuid.uuid4().hex}"
    actor = TokenBuckets.options(name=name, namespace="pairwise_polars").remote(rpm, tpm)
    ray.get(actor.grants.remote())  # started before the workers send their first request
    return actor


def _pool_size(actors: int | None, n_chunks: int) -> int:
    if actors is not None:
        if not isinstance(actors, int) or actors < 1:
            raise OptionError(f"actors must be a positive number of Ray workers, got {actors!r}.")
        return min(actors, n_chunks)  # an actor without a chunk would only idle
    return _ray_sizing.pool_size(int(ray.cluster_resources().get("CPU", 1)), n_chunks)


def _slices(source: Source) -> list[dict[str, Any]]:
    """Row slices of every file, with each file's first position in the whole source."""
    out: list[dict[str, Any]] = []
    offset = 0
    for path in source.files:
        single = Source((path,), source.format, path, source.storage_options)
        rows = int(scan_source(single).select(pl.len()).collect().item())
        for start in range(0, rows, SLICE_ROWS):
            length = min(SLICE_ROWS, rows - start)
            out.append({"path": path, "offset": offset, "start": start, "length": length})
        offset += rows
    return out or [{"path": source.files[0], "offset": 0, "start": 0, "length": 0}]


_MAPPINGS: dict[str, pl.DataFrame] = {}


def _read_slices(
    batch: pa.Table,
    *,
    schema: dict[str, pl.DataType],
    id_column: str,
    group_by: str,
    mapping: Any,
    source_format: Any,
    storage_options: Any = None,
) -> pa.Table:
    """Read a slice of one file with polars (the rows' positions and ids as the local runner
    gives them), keep the rows of chunks still to score, tagged with their chunk."""
    key = str(mapping)
    if key not in _MAPPINGS:  # one copy per worker process, fetched once
        _MAPPINGS.clear()
        _MAPPINGS[key] = ray.get(mapping)
    chunks = _MAPPINGS[key]
    frames = []
    for item in batch.to_pylist():
        single = Source((item["path"],), source_format, item["path"], storage_options)
        start = item["offset"] + item["start"]
        rows = (
            scan_source(single)
            .slice(item["start"], item["length"])
            .collect()
            .with_row_index(POS, offset=start)
        )
        if id_column not in rows.columns:
            rows = rows.with_columns(pl.col(POS).cast(pl.Int64).alias(id_column))
        missing = [pl.lit(None, t).alias(c) for c, t in schema.items() if c not in rows.columns]
        rows = rows.with_columns(missing).select([pl.col(c).cast(t) for c, t in schema.items()])
        frames.append(rows.join(chunks, on=group_by, how="inner", nulls_equal=True))
    frame = pl.concat(frames) if frames else pl.DataFrame(schema={**schema, CHUNK: pl.Int32})
    return frame.to_arrow(compat_level=pl.CompatLevel.oldest())


def _pairwise_cause(exc: BaseException) -> PairwiseError | None:
    """The package's own error behind a Ray task failure (a bad key, a changed source), so the
    caller sees the same error the local runner raises."""
    seen: set[int] = set()
    stack: list[BaseException | None] = [exc]
    while stack:
        current = stack.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, RayTaskError):  # also an instance of its cause
            stack.append(cast(BaseException, getattr(current, "cause", None)))
            continue
        if isinstance(current, PairwiseError):
            if current.args and isinstance(current.args[0], str):  # Ray appends its retry advice
                current.args = (current.args[0].split(_RAY_ADVICE)[0], *current.args[1:])
            return current
        stack += [current.__cause__, current.__context__, getattr(current, "cause", None)]
    return None
