"""``score_parquet(..., runner="ray")``: the same run on Ray Data.

The driver plans the run as the local runner does (key columns only), keeps the journal and
merges the summary. Ray Data reads the source in row slices (one read task each, every row's
position kept so the ids match the local run's), tags each row with its chunk of the plan, and
co-locates a chunk's rows by a hash shuffle on that tag (``groupby().map_groups()``; a chunk
never splits a group, so each group reaches one worker whole). A pool of long-lived actors (a
class UDF that builds its judge, cache and event loop once, on fractional CPUs) forms each
chunk's pairs with the same polars code, scores them through the same async cached map, writes
the chunk's part, and returns the chunk's mergeable summary sums; the driver journals each
chunk as it finishes and merges the sums into the summary, equal to the local ``aggregate``.
A named actor holds the run's request and token buckets, so one rate limit holds across every
worker.

This is the only module that imports Ray; ``score_parquet`` imports it only for ``runner="ray"``.
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
import socket
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, cast

import polars as pl
import pyarrow as pa
import ray
import ray.data
from ray.exceptions import RayTaskError

from pairwise_polars._errors import OptionError, PairwiseError, RunStateError
from pairwise_polars.engine import JudgementCache
from pairwise_polars.engine._limits import SHARED_LIMITS, RateLimiter
from pairwise_polars.io import Source, scan_source
from pairwise_polars.judges import Judge, traits_of
from pairwise_polars.metrics import Metric
from pairwise_polars.outcome._sided import awith_judged_sided_outcomes
from pairwise_polars.pairing import PairingOptions, Strategy
from pairwise_polars.runs._chunks import POS, Chunk
from pairwise_polars.runs._journal import JOURNAL
from pairwise_polars.runs._parts import chunk_pairs, write_part
from pairwise_polars.runs._store import LocalStore, ObjectStore, run_store
from pairwise_polars.scoring import Scoring, ScoringSpec, Spent, prepare
from pairwise_polars.scoring._cost import usage_of
from pairwise_polars.summary import (
    combine,
    default_slices,
    error_sums,
    group_sums,
    merge_sums,
    plain_rows,
)

CHUNK = "__pairwise_run_chunk"
SLICE_ROWS = 50_000
"""Source rows per read task."""
EQUIVALENCE_THRESHOLD, DIVERGENCE_THRESHOLD = 0.0, 0.5
"""The thresholds of the run's summary (``aggregate``'s defaults, as the local runner uses)."""
CPUS_PER_WORKER = 0.25
_RAY_ADVICE = "\nFailed to apply UDF transform"
"""Where Ray Data's advice about retries starts in a failed task's error message."""
_BUCKETS_PREFIX = "pairwise-polars-limits-"


@dataclass(frozen=True)
class ChunkJob:
    """What every worker needs to score a chunk (sent to each actor once)."""

    destination: str
    strategy: Strategy
    pairing: PairingOptions
    spec: ScoringSpec
    """How the pairs are scored (its judge is the one each worker builds from the same
    settings: the actor's own)."""
    keep_text: bool
    cache: str | None
    """The SQLite cache file every worker opens (WAL: safe across processes), or None."""
    group_by: str
    n_pairs: dict[int, int]
    """Pairs per chunk, as planned: a chunk that pairs otherwise is refused."""
    run: str = ""
    """The run's digest, written into each part's footer (a resume adopts a part by it)."""
    outcomes: Metric | None = None
    """The outcome metric the judge reads each response on (None: the heuristic reads)."""


def _worker_store(job: ChunkJob) -> LocalStore | ObjectStore:
    """Where this worker writes its parts: straight into the run's store. A local destination
    must be the same folder on every node (a shared filesystem): a worker that cannot see the
    run's journal there is on another machine, and its parts would be lost to the driver."""
    store = run_store(job.destination, job.pairing.get("storage_options"))
    if isinstance(store, LocalStore) and not store.exists(JOURNAL):
        raise RunStateError(
            f"A Ray worker on {socket.gethostname()!r} cannot see the run's folder "
            f"{job.destination!r} (its run.json is not there): on a cluster of several machines "
            "the destination must be an s3:// prefix or a folder every node shares (NFS and "
            "the like). Score into s3://bucket/prefix, or into a shared folder."
        )
    return store


USAGE_FIELDS = ("requests", "input_tokens", "cached_tokens", "output_tokens")
"""What each chunk's row carries back of its spending (priced once, on the driver)."""


@dataclass
class RayTally:
    """What the workers did, as the driver saw the chunks finish."""

    judged: int = 0
    spent: Spent = field(default_factory=Spent)
    """What the workers' judge requests spent (tokens, requests), gathered chunk by chunk."""
    sums: list[pl.DataFrame] = field(default_factory=list)
    errors: list[pl.DataFrame] = field(default_factory=list)


def connect() -> bool:
    """Attach to the cluster ``RAY_ADDRESS`` names (or ``ray job submit`` runs in), else start
    a local one; a session already started (by the caller, a test) is used as it is. True when
    this call connected (the run then disconnects at its end, shutting down a local Ray it
    started, so no Ray process of ours outlives the run)."""
    if ray.is_initialized():
        return False
    if os.environ.get("RAY_ADDRESS"):
        ray.init(logging_level=logging.WARNING)
    else:
        ray.init(include_dashboard=False, logging_level=logging.WARNING)
    return True


def run_chunks(
    *,
    source: Source,
    schema: pl.Schema,
    id_column: str,
    todo: list[Chunk],
    job: ChunkJob,
    judge: Judge,
    actors: int | None,
    progress: bool,
    on_chunk: Callable[[int, dict[str, Any]], None],
) -> RayTally:
    """Score the ``todo`` chunks on Ray; ``on_chunk(index, entry)`` is called on the driver as
    each chunk's part is written. Returns the fresh answers and the chunks' summary sums."""
    started = connect()
    try:
        return _run_chunks(
            source=source,
            schema=schema,
            id_column=id_column,
            todo=todo,
            job=job,
            judge=judge,
            actors=actors,
            progress=progress,
            on_chunk=on_chunk,
        )
    finally:
        if started:
            ray.shutdown()


def _run_chunks(
    *,
    source: Source,
    schema: pl.Schema,
    id_column: str,
    todo: list[Chunk],
    job: ChunkJob,
    judge: Judge,
    actors: int | None,
    progress: bool,
    on_chunk: Callable[[int, dict[str, Any]], None],
) -> RayTally:
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = progress
    tally = RayTally()
    if not todo:
        return tally
    pool = _pool_size(actors, len(todo))
    buckets = _buckets(judge)
    mapping = pl.concat(
        [
            pl.DataFrame({job.group_by: c.groups}).with_columns(pl.lit(c.index).alias(CHUNK))
            for c in todo
        ]
    )
    slices = _slices(source)
    reader = {
        "schema": dict(schema),
        "id_column": id_column,
        "group_by": job.group_by,
        "mapping": ray.put(mapping),
        "source_format": source.format,
        "storage_options": source.storage_options,
    }
    rows = ray.data.from_items(slices, override_num_blocks=len(slices)).map_batches(
        cast(Any, _read_slices), batch_size=1, batch_format="pyarrow", fn_kwargs=reader
    )
    scored = rows.groupby(CHUNK, num_partitions=min(len(todo), pool * 2)).map_groups(
        ChunkScorer,
        batch_format="pyarrow",
        fn_constructor_kwargs={"job": job, "judge": judge, "buckets": buckets},
        compute=ray.data.ActorPoolStrategy(size=pool),
        # Fractional CPUs: workers that mostly wait on the judge share a CPU, and the read and
        # shuffle tasks always find one (a pool holding every CPU would starve them).
        num_cpus=CPUS_PER_WORKER,
    )
    try:
        for batch in scored.iter_batches(batch_size=None, batch_format="pyarrow"):
            for row in cast(pa.Table, batch).to_pylist():
                entry = {k: row[k] for k in ("pairs", "scored_rows", "from_cache", "errors")}
                entry["not_judged"] = row["not_judged"]
                on_chunk(row["chunk"], entry)
                tally.judged += row["judged"]
                for name in USAGE_FIELDS:
                    setattr(tally.spent, name, getattr(tally.spent, name) + row[name])
                tally.sums.append(pl.read_ipc(io.BytesIO(row["sums"])))
                tally.errors.append(pl.read_ipc(io.BytesIO(row["error_sums"])))
    except Exception as exc:
        original = _pairwise_cause(exc)
        if original is not None:
            raise original from exc
        raise
    finally:
        if buckets is not None:
            ray.kill(buckets)
    return tally


def part_sums(scored: pl.DataFrame, group_by: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A block's per-group sums and error counts, as :func:`aggregate` computes them."""
    keys = ["metric", *default_slices(scored.schema)]
    frame = plain_rows(scored.lazy())  # a masked audit's rows are the judge's, not the run's
    sums = group_sums(
        frame,
        keys,
        group_by,
        equivalence_threshold=EQUIVALENCE_THRESHOLD,
        divergence_threshold=DIVERGENCE_THRESHOLD,
    )
    return sums.collect(), error_sums(frame, keys).collect()


class ChunkScorer:
    """The actor UDF: one chunk's rows in, its part written, one row of counts and sums out.

    Built once per actor: the judge, the cache connection, an event loop, and the handle of the
    shared rate-limit actor; every chunk the actor gets reuses them."""

    def __init__(self, job: ChunkJob, judge: Judge, buckets: Any) -> None:
        self.job = job
        self.judge = judge
        cacheable = traits_of(judge).cacheable
        self.store = JudgementCache(job.cache) if job.cache is not None and cacheable else None
        self.loop = asyncio.new_event_loop()
        self.limits = None
        if buckets is not None:  # the handle of the run's TokenBuckets actor
            self.limits = (_RemoteBucket(buckets, "requests"), _RemoteBucket(buckets, "tokens"))

    def __call__(self, rows: pa.Table) -> pa.Table:
        frame = pl.from_arrow(rows)
        assert isinstance(frame, pl.DataFrame)
        frame = frame.sort(POS)  # the chunk's rows in file order, as the local runner reads them
        index = int(frame[CHUNK][0])
        job = self.job
        pairs = chunk_pairs(
            frame.drop(POS, CHUNK), index, job.n_pairs[index], job.strategy, job.pairing
        )
        scored, judged, usage = self.loop.run_until_complete(self._score(pairs))
        written, entry = write_part(
            _worker_store(job), index, pairs.height, scored, keep_text=job.keep_text, run=job.run
        )
        sums, errors = part_sums(written, job.group_by)
        return pa.table(
            {
                "chunk": [index],
                **{k: [int(v)] for k, v in entry.items()},
                "judged": [judged],
                **{k: [int(getattr(usage, k)) if usage else 0] for k in USAGE_FIELDS},
                "sums": [_ipc(sums)],
                "error_sums": [_ipc(errors)],
            }
        )

    async def _score(self, pairs: pl.DataFrame) -> tuple[pl.DataFrame, int, Spent]:
        if self.limits is not None:
            SHARED_LIMITS.set(self.limits)  # this task's context: its judge calls share them
        job = self.job
        prepared = prepare(pairs, spec=replace(job.spec, judge=self.judge))
        answers = 0

        def count(frame: pl.DataFrame) -> None:
            nonlocal answers
            answers += frame.height

        scoring = Scoring(prepared, self.store)
        scored = await scoring.score(progress=False, observe=count)
        spent = Spent()
        if scoring.usage is not None:
            spent.add(scoring.usage)
        if job.outcomes is not None:  # each side's outcome, read by the judge like the scores
            scored, results = await awith_judged_sided_outcomes(
                scored, self.judge, job.outcomes, self.store
            )
            spent.add(usage_of(results, self.judge.name, traits_of(self.judge), None))
        return scored, answers, spent


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


class _RemoteBucket:
    """A limiter whose waiting happens in the shared :class:`TokenBuckets` actor."""

    def __init__(self, handle: Any, which: str) -> None:
        self.handle = handle
        self.which = which

    async def acquire(self, amount: float = 1.0) -> None:
        await self.handle.acquire.remote(self.which, amount)


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
    cpus = int(ray.cluster_resources().get("CPU", 1))
    return max(1, min(n_chunks, cpus))


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


def _ipc(frame: pl.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.write_ipc(buffer)
    return buffer.getvalue()


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


def summary_of(sums: list[pl.DataFrame], errors: list[pl.DataFrame], group_by: str) -> pl.DataFrame:
    """The run's summary from its blocks' sums: merged, then combined as ``aggregate`` does."""
    keys = ["metric", *default_slices(sums[0].columns)]
    kind = errors[0].columns[len(keys)]  # error_sums: the keys, the kind of error, its count
    merged = merge_sums(sums, [*keys, group_by])
    return combine(merged, keys, errors=merge_sums(errors, [*keys, kind]))
