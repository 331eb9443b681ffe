"""What one Ray worker does with one chunk of a ``runner="ray"`` run: pair its rows, score them
through the same cached map as the local runner, write the chunk's part straight into the run's
store, and send back one row of counts, spending and mergeable summary sums, which the driver
merges into the run's summary (:func:`summary_of`).

Nothing here imports Ray: the driver's side (``_ray_run``) does; this module is what its actors
run, and the sums the driver merges.
"""

from __future__ import annotations

import asyncio
import io
import socket
from dataclasses import dataclass, replace
from typing import Any

import polars as pl
import pyarrow as pa

from pairwise_polars._errors import RunStateError
from pairwise_polars.engine import JudgementCache
from pairwise_polars.engine._limits import SHARED_LIMITS
from pairwise_polars.io import Source
from pairwise_polars.judges import Judge, traits_of
from pairwise_polars.metrics import Metric
from pairwise_polars.outcome._sided import awith_judged_sided_outcomes
from pairwise_polars.pairing import PairingOptions, Strategy
from pairwise_polars.runs._chunks import POS, Chunk, read_chunk, scan_rows
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
"""The column that tags each source row with its chunk of the plan."""
EQUIVALENCE_THRESHOLD, DIVERGENCE_THRESHOLD = 0.0, 0.5
"""The thresholds of the run's summary (``aggregate``'s defaults, as the local runner uses)."""


@dataclass(frozen=True, kw_only=True)
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


@dataclass(frozen=True)
class ChunkSource:
    """Where a worker reads its chunks' rows itself, as the local runner reads them (a source
    whose groups sit together: each chunk is one short range of rows): the run's source, its
    id column, and each chunk's row range and groups."""

    source: Source
    id_column: str
    chunks: dict[int, Chunk]


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

    def __init__(
        self, job: ChunkJob, judge: Judge, buckets: Any, reads: ChunkSource | None = None
    ) -> None:
        self.job = job
        self.reads = reads
        self.judge = judge
        cacheable = traits_of(judge).cacheable
        self.store = JudgementCache(job.cache) if job.cache is not None and cacheable else None
        self.loop = asyncio.new_event_loop()
        self.limits = None
        if buckets is not None:  # the handle of the run's TokenBuckets actor
            self.limits = (_RemoteBucket(buckets, "requests"), _RemoteBucket(buckets, "tokens"))

    def __call__(self, rows: pa.Table) -> pa.Table:
        """``rows``: a chunk's source rows tagged with its index (shuffled to this worker), or,
        with ``reads``, one row naming the chunk this worker reads itself."""
        frame = pl.from_arrow(rows)
        assert isinstance(frame, pl.DataFrame)
        index = int(frame[CHUNK][0])
        job = self.job
        if self.reads is not None:
            scan = scan_rows(self.reads.source, self.reads.id_column)
            frame = read_chunk(scan, self.reads.chunks[index], job.group_by)
        else:  # the chunk's rows in file order, as the local runner reads them
            frame = frame.sort(POS).drop(POS, CHUNK)
        pairs = chunk_pairs(frame, index, job.n_pairs[index], job.strategy, job.pairing)
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

        def count(answered: int, errors: int) -> None:
            del errors
            nonlocal answers
            answers += answered

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


class _RemoteBucket:
    """A limiter whose waiting happens in the shared :class:`TokenBuckets` actor."""

    def __init__(self, handle: Any, which: str) -> None:
        self.handle = handle
        self.which = which

    async def acquire(self, amount: float = 1.0) -> None:
        await self.handle.acquire.remote(self.which, amount)


def _ipc(frame: pl.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.write_ipc(buffer)
    return buffer.getvalue()


def summary_of(sums: list[pl.DataFrame], errors: list[pl.DataFrame], group_by: str) -> pl.DataFrame:
    """The run's summary from its blocks' sums: merged, then combined as ``aggregate`` does."""
    keys = ["metric", *default_slices(sums[0].columns)]
    kind = errors[0].columns[len(keys)]  # error_sums: the keys, the kind of error, its count
    merged = merge_sums(sums, [*keys, group_by])
    return combine(merged, keys, errors=merge_sums(errors, [*keys, kind]))
