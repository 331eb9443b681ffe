"""The chunk loop of one parquet run: each chunk's pairs in, its scored part and journal entry
out, in this process (:meth:`ChunkLoop.score`) or on a Ray cluster (:meth:`ChunkLoop.score_on_ray`).

A chunk is prepared and scored through the same cached map as
:func:`~pairwise_polars.score_pairs`, with the run's one cache, so a chunk killed half-way keeps
the judgements it paid for, and the rerun finds them there.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any

import polars as pl

from pairwise_polars.engine import JudgementCache
from pairwise_polars.io import Source
from pairwise_polars.judges import Judge, traits_of
from pairwise_polars.metrics import Metric
from pairwise_polars.outcome._sided import awith_judged_sided_outcomes
from pairwise_polars.pairing import PairingOptions, Strategy
from pairwise_polars.runs._chunks import Chunk, read_chunk
from pairwise_polars.runs._journal import Journal, part_name
from pairwise_polars.runs._parts import chunk_pairs, write_part
from pairwise_polars.runs._ray_worker import ChunkJob, part_sums, summary_of
from pairwise_polars.runs._run_members import score_chunk
from pairwise_polars.runs._run_progress import RunProgress
from pairwise_polars.scoring import Scoring, ScoringSpec, Spent, prepare
from pairwise_polars.scoring._cost import usage_of
from pairwise_polars.scoring._members import Members


@dataclass(kw_only=True)
class ChunkLoop:
    """The chunk loop of one call: pairs in, scored parts and journal entries out."""

    scan: pl.LazyFrame
    strategy: Strategy
    pairing: PairingOptions
    spec: ScoringSpec
    keep_text: bool
    store: JudgementCache | None
    journal: Journal
    bar: RunProgress
    group_by: str
    outcomes: Metric | None = None
    """The outcome metric an LLM judge reads each response on (None: the heuristic reads)."""
    members: Members | None = None
    resumed: int = 0
    from_cache: int = 0
    errors: int = 0
    spent: Spent = field(default_factory=Spent)
    spent_by: dict[str, Spent] = field(default_factory=dict)

    def resume(self, chunks: list[Chunk]) -> list[Chunk]:
        """The chunks still to score; the finished ones are counted as resumed."""
        todo = []
        for chunk in chunks:
            if chunk.index in self.journal.chunks:
                self.resumed += 1
                self.bar.resume(chunk.index, chunk.n_pairs)
            else:
                todo.append(chunk)
        return todo

    async def submit(self, chunks: list[Chunk], submitter: Judge) -> None:
        """Send every chunk's requests to a Batch API judge (the results are collected by
        :meth:`score` afterwards, so the batches run side by side)."""
        async with contextlib.aclosing(self._read_ahead(chunks)) as read:
            async for chunk, pairs in read:
                self.bar.start_chunk(chunk.index, phase="submitting chunk")
                await self._scored(pairs, submitter)

    async def score(self, chunks: list[Chunk], judge: Judge) -> None:
        """Score ``chunks`` in this process, one part and journal entry each."""
        async with contextlib.aclosing(self._read_ahead(chunks)) as read:
            async for chunk, pairs in read:
                self.bar.start_chunk(chunk.index)
                scored = await self._with_outcomes(await self._scored(pairs, judge), judge)
                _, entry = write_part(
                    self.journal.store,
                    chunk.index,
                    pairs.height,
                    scored,
                    keep_text=self.keep_text,
                    run=self.journal.digest,
                )
                self.finished(chunk.index, entry)

    def score_on_ray(
        self,
        ray_run: ModuleType,
        *,
        source: Source,
        id_column: str,
        n_rows: int,
        todo: list[Chunk],
        judge: Judge,
        actors: int | None,
        progress: bool,
    ) -> pl.DataFrame:
        """Score ``todo`` on Ray (``ray_run``: the Ray runner's module); the summary of the
        whole run, merged from the chunks' per-group sums."""
        resumed = [i for i in sorted(self.journal.chunks) if i not in {c.index for c in todo}]
        self.bar.chunk = len(self.journal.chunks)  # chunks finish in any order: count them
        tally = ray_run.run_chunks(
            source=source,
            schema=self.scan.collect_schema(),  # position and ids included
            id_column=id_column,
            n_rows=n_rows,
            todo=todo,
            job=self._ray_job(todo),
            judge=judge,
            actors=actors,
            progress=progress,
            on_chunk=self._finished_on_ray,
        )
        self.bar.answered += tally.judged
        self.spent = tally.spent
        for index in resumed:  # sums of the parts an earlier call wrote
            part = self.journal.store.scan_names([part_name(index)]).collect()
            sums, errors = part_sums(part, self.group_by)
            tally.sums.append(sums)
            tally.errors.append(errors)
        return summary_of(tally.sums, tally.errors, self.group_by)

    def _ray_job(self, todo: list[Chunk]) -> ChunkJob:
        destination = self.journal.destination  # a folder: the same absolute path on every node
        return ChunkJob(
            destination=str(Path(destination).absolute())
            if isinstance(destination, Path)
            else destination,
            strategy=self.strategy,
            pairing=self.pairing,
            spec=self.spec,
            keep_text=self.keep_text,
            cache=None if self.store is None else str(self.store.path),
            group_by=self.group_by,
            outcomes=self.outcomes,
            n_pairs={c.index: c.n_pairs for c in todo},
            run=self.journal.digest,
        )

    def _finished_on_ray(self, index: int, entry: dict[str, Any]) -> None:
        """As :meth:`finished`; the line's "chunk k/n" counts the chunks done, in any order."""
        self.finished(index, entry)
        self.bar.chunk = len(self.journal.chunks)
        self.bar.update()

    def finished(self, index: int, entry: dict[str, Any]) -> None:
        """Record a chunk whose part is written: in the journal, the counts and the bar."""
        not_judged = entry.pop("not_judged")
        self.journal.mark_done(index, entry)
        self.from_cache += entry["from_cache"]
        self.errors += entry["errors"]
        self.bar.chunk_done(entry["pairs"], entry["from_cache"], not_judged)

    async def _scored(self, pairs: pl.DataFrame, judge: Judge) -> pl.DataFrame:
        if self.members is not None:  # a panel or repeats: every member, then combined
            return await score_chunk(
                pairs, self.spec, self.members, self.store, self.spent_by, self.bar.answers
            )
        # The spec's judge, or the one that only submits its batches (the same identity).
        prepared = prepare(pairs, spec=replace(self.spec, judge=judge))
        scoring = Scoring(prepared, self.store)
        scored = await scoring.score(progress=False, observe=self.bar.answers)
        if scoring.usage is not None:
            self.spent.add(scoring.usage)
        return scored

    async def _with_outcomes(self, scored: pl.DataFrame, judge: Judge) -> pl.DataFrame:
        """The chunk's scored frame with each side's outcome read by ``judge`` (when the run
        reads them with an LLM judge; else unchanged: the part's writer reads them)."""
        if self.outcomes is None:
            return scored
        read, results = await awith_judged_sided_outcomes(scored, judge, self.outcomes, self.store)
        self.spent.add(usage_of(results, judge.name, traits_of(judge), None))
        return read

    async def _read_ahead(
        self, chunks: list[Chunk]
    ) -> AsyncGenerator[tuple[Chunk, pl.DataFrame], None]:
        """Each chunk with its pairs; the next chunk is read and paired in a worker thread
        while the caller scores this one (polars releases the GIL): reading costs little wall
        time, and at most two chunks' pairs are held at once."""

        def read(chunk: Chunk) -> asyncio.Future[pl.DataFrame]:
            pairs = asyncio.to_thread(
                _chunk_pairs, self.scan, chunk, self.strategy, self.pairing, self.group_by
            )
            return asyncio.ensure_future(pairs)

        upcoming = read(chunks[0]) if chunks else None
        try:
            for i, chunk in enumerate(chunks):
                assert upcoming is not None
                pairs = await upcoming
                upcoming = read(chunks[i + 1]) if i + 1 < len(chunks) else None
                yield chunk, pairs
                del pairs
        finally:
            if upcoming is not None:
                upcoming.cancel()


def _chunk_pairs(
    scan: pl.LazyFrame, chunk: Chunk, strategy: Strategy, pairing: PairingOptions, group_by: str
) -> pl.DataFrame:
    rows = read_chunk(scan, chunk, group_by)
    return chunk_pairs(rows, chunk.index, chunk.n_pairs, strategy, pairing)
