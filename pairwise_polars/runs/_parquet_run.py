"""score_parquet: a large parquet run scored chunk by chunk, with parts, a journal and resume.

Each chunk goes through the public map (:func:`ascore_pairs`) with the run's one cache, so a
chunk killed half-way keeps the judgements it paid for, and the rerun finds them there.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import polars as pl

from pairwise_polars._errors import OptionError
from pairwise_polars.engine import JudgementCache, cache_session, sync_twin
from pairwise_polars.io import DataLike, Source, source_files
from pairwise_polars.judges import BatchJudge, HeuristicJudge, Judge, traits_of
from pairwise_polars.judges._panel import JudgeLike
from pairwise_polars.labels import read_labels
from pairwise_polars.metrics import Metric
from pairwise_polars.outcome._sided import awith_judged_sided_outcomes
from pairwise_polars.pairing import (
    PairingOptions,
    Strategy,
)
from pairwise_polars.pairing._groups import check_pairing
from pairwise_polars.runs._chunks import (
    POS,
    Chunk,
    RunPlan,
    plan_chunks,
    read_chunk,
    scan_rows,
)
from pairwise_polars.runs._journal import (
    PAIRING_DEFAULTS,
    SUMMARY,
    Journal,
    locked,
    open_journal,
    part_name,
)
from pairwise_polars.runs._parts import chunk_pairs, write_part
from pairwise_polars.runs._run_disparities import outcome_errors, run_disparities
from pairwise_polars.runs._run_members import (
    members_fingerprint,
    priced_members,
    run_members,
    score_chunk,
)
from pairwise_polars.runs._run_options import (
    package_version,
    resolved_pairing,
    run_columns,
    run_fingerprint,
    runner_module,
    warn_if_scattered,
)
from pairwise_polars.runs._run_progress import RunProgress
from pairwise_polars.runs._store import run_store
from pairwise_polars.scoring import (
    Audit,
    CacheLike,
    MetricsLike,
    Order,
    Prices,
    Scoring,
    ScoringSpec,
    Spent,
    Usage,
    prepare,
    resolve_spec,
)
from pairwise_polars.scoring._cost import usage_of
from pairwise_polars.scoring._members import Members, judge_keyword
from pairwise_polars.scoring._pointwise import outcome_metric
from pairwise_polars.summary import aggregate

if TYPE_CHECKING:
    from typing_extensions import Unpack

DEFAULT_CHUNK_SIZE = 50_000
Runner = Literal["local", "ray"]
"""Where a parquet run is scored: this process (``"local"``) or a Ray cluster (``"ray"``)."""
RUNNERS = ("local", "ray")


@dataclass(frozen=True)
class ParquetRun:
    """What :func:`score_parquet` did. The scored frame is on disk: :meth:`scored`.
    (``OfflineRun`` is this class's former name, kept as an alias for one release.)"""

    destination: Path | str
    """The run's folder, or its ``s3://`` prefix."""
    n_pairs: int
    n_chunks: int
    chunks_resumed: int
    """Chunks found finished in the destination and not scored again."""
    judged: int
    """Judge answers received by this call (cache hits not included)."""
    from_cache: int
    """Scored rows of this call whose judgement came from the cache."""
    errors: int
    """Scored rows with an error (judge failures and pairs that could not be judged)."""
    seconds: float
    summary: pl.DataFrame
    usage: Usage | None = None
    """What this call's judge requests spent: requests, tokens (cached ones too), dollars (on
    the Ray runner too: each chunk's worker sends its spending back with the chunk)."""

    storage_options: Mapping[str, str] | None = field(default=None, repr=False, compare=False)
    disparities: pl.DataFrame | None = None
    """Who is disadvantaged (:func:`~pairwise_polars.disparities`), from the outcomes each part
    carries beside its scores (``decision_a`` / ``decision_b`` ...)."""
    outcome_errors: int = 0
    """Pair sides whose outcome the judge failed to read (``score_parquet(outcomes=...)``):
    their outcome is null, and ``outcome_error_a`` / ``outcome_error_b`` in the parts say why."""

    def scored(self) -> pl.LazyFrame:
        """The scored frame, read lazily from the parts (in the folder or the store)."""
        return run_store(self.destination, self.storage_options).scan("scored/part-*.parquet")


async def ascore_parquet(
    source: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    destination: str | os.PathLike[str],
    metrics: MetricsLike = "pairwise-bias",
    *,
    judge: JudgeLike = None,
    repeats: int = 1,
    strategy: Strategy = "group",
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    both_orders: bool = False,
    order: Order = "random",
    audit: Audit | None = None,
    cache: CacheLike = True,
    progress: bool = True,
    overwrite: bool = False,
    keep_text: bool = False,
    prices: Prices | None = None,
    runner: Runner = "local",
    actors: int | None = None,
    labels: DataLike | None = None,
    spec: ScoringSpec | None = None,
    outcomes: str | Path | Metric | None = None,
    **pairing: Unpack[PairingOptions],
) -> ParquetRun:
    """Score a large parquet run in chunks with bounded memory; resumable after any crash.

    ``source`` is a parquet file, a directory, a glob or a list of them, read lazily (CSV, TSV
    and NDJSON files are read too, though parquet is the format for large runs). Pairs are
    planned from the key columns, then scored ``chunk_size`` pairs at a time (a chunk never
    splits a group, so it holds at most ``chunk_size`` + the largest group's pairs - 1), each
    chunk written as ``destination/scored/part-<chunk>.parquet`` and recorded in
    ``destination/run.json``. Peak memory follows the chunk, not the file: measured about
    1 GiB for a 5M-row run with ~600-character outputs at the default 50,000 pairs per chunk;
    lower ``chunk_size`` for longer texts. Running the same call again after a crash finishes
    the run, skipping finished chunks and taking paid judgements from the cache; a call with
    another source, pairing, metrics, judge or chunk size is refused with
    :class:`RunStateError` unless ``overwrite=True``. At the end
    ``destination/summary.parquet`` holds :func:`aggregate` of the parts (by dimension). Parts
    carry the scored frame without the input/output texts unless ``keep_text=True``, and each
    side's outcome read by the heuristic (``decision_a`` / ``decision_b``, ``amount_a`` ...),
    from which ``run.disparities`` is computed; with ``outcomes`` (an outcome metric: the
    shipped ``"outcome"`` or a file of ``kind: outcome``) and an LLM judge, each chunk's
    responses are judged on it instead, once per response, through the run's cache (so a
    resumed run pays for none twice), a failed judgement leaving ``outcome_error_a`` /
    ``outcome_error_b`` set and the outcome null. With ``labels`` (human labels, as for
    :func:`aggregate`; their columns and values checked before the first judge call, their
    pairs at the end) the summary has the prediction-powered figures.
    ``pairing`` keywords go to :func:`form_pairs`; ``order``, ``both_orders``, ``audit`` and
    ``spec`` as for :func:`score_pairs` (the spec is recorded in the journal); a panel
    (``judge=[...]`` or :class:`Panel`) and ``repeats`` as for :func:`score` (the local runner
    only; the members, their combine rule and the repeats are recorded too); ``prices`` (by model
    name) override the price table for ``usage``. ``score_parquet`` is the same call for sync
    code; ``ascore_parquet`` awaits it.

    ``runner="ray"`` runs the same plan on Ray Data (the ``pairwise-polars[ray]`` extra):
    rows read by Ray tasks, each chunk's rows brought together by a shuffle on its groups,
    paired, judged and written by a pool of ``actors`` long-lived Ray workers (default: one
    per CPU of the cluster; never more than the chunks to score), each with the judge's
    ``max_concurrency`` requests in flight and one shared ``requests_per_minute`` /
    ``tokens_per_minute`` limit for all of them. The parts, the journal, the summary, resume
    and "never pay twice" are the local runner's; the two runners' results are equal, and
    either resumes the other's run. ``ray.init()`` attaches to the cluster ``RAY_ADDRESS``
    names, or starts a local one.

    >>> import pathlib, tempfile
    >>> import polars as pl
    >>> from pairwise_polars import score_parquet
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> pl.DataFrame({"group_id": [1, 1, 2, 2], "role": ["reference", "variant"] * 2,
    ...     "dimension": "gender", "input": "Should we hire Sam?",
    ...     "output": ["Yes, hire Sam."] * 3 + ["No, do not hire Sam."],
    ... }).write_parquet(folder / "run.parquet")
    >>> run = score_parquet(folder / "run.parquet", folder / "out", progress=False)
    >>> run.scored().select("group_id", "score").sort("group_id").collect().rows()
    [(1, 0.0), (2, 0.75)]
    >>> sorted(p.name for p in (folder / "out").iterdir() if not p.name.startswith("."))
    ['run.json', 'scored', 'summary.parquet']
    """
    started = time.monotonic()
    if not isinstance(chunk_size, int) or chunk_size < 1:
        raise OptionError(f"chunk_size must be a positive number of pairs, got {chunk_size!r}.")
    spec = resolve_spec(
        spec,
        metrics,
        judge=judge_keyword(judge, spec),
        both_orders=both_orders,
        order=order,
        audit=audit,
    )
    members = run_members(judge, repeats, spec, ray=runner == "ray")  # refused before Ray loads
    on_ray = runner_module(runner)
    outcome = None if outcomes is None else outcome_metric(outcomes)
    if labels is not None:  # columns and numbers now; the pairs they name once scored
        read_labels(labels)
    judge = spec.judge
    traits = traits_of(judge)
    if isinstance(judge, HeuristicJudge):
        outcome = None  # the heuristic reads outcomes key-free, as it does without the metric
    if on_ray is not None and traits.kind == "batch":
        raise OptionError(
            'runner="ray" sends requests from many workers; a Batch API judge submits whole '
            'batches and waits, so it gains nothing there. Use runner="local" with it.'
        )
    run_files = run_store(destination, pairing.get("storage_options"))
    found = source_files(source, storage_options=pairing.get("storage_options"))
    files = list(found.files)
    columns = run_columns(pairing)
    scan = scan_rows(found, columns.id)
    # Every column and option problem surfaces now, before the first judge call.
    schema = pl.Schema({n: t for n, t in scan.collect_schema().items() if n != POS})
    check_pairing(
        schema,
        columns,
        strategy,
        pairing.get("poles", PAIRING_DEFAULTS["poles"]),
        control=pairing.get("control", PAIRING_DEFAULTS["control"]),
        reference=pairing.get("reference", PAIRING_DEFAULTS["reference"]),
    )
    plan = plan_chunks(scan, files, strategy, chunk_size, pairing, columns.group_by)
    if on_ray is None:  # Ray reads each slice of the source once, scattered or not
        warn_if_scattered(plan, columns.group_by)
    options = resolved_pairing(pairing, strategy)
    fingerprint = run_fingerprint(plan, strategy, options, spec, chunk_size, keep_text, outcome)
    fingerprint |= members_fingerprint(members)
    info = {
        "created_by": f"pairwise_polars {package_version()}",
        "source_paths": files,
        "n_pairs": plan.n_pairs,
        "largest_group_pairs": plan.largest_group,
    }
    bar = RunProgress(plan.n_pairs, len(plan.chunks), enabled=progress)
    with locked(run_files):
        journal = open_journal(run_files, fingerprint, len(plan.chunks), info, overwrite=overwrite)
        cacheable = traits.cacheable or (
            members is not None and any(traits_of(j).cacheable for j in members.judges)
        )
        with cache_session(cache, enabled=cacheable) as store:
            run = _Run(
                scan=scan,
                strategy=strategy,
                pairing=pairing,
                spec=spec,
                keep_text=keep_text,
                store=store,
                journal=journal,
                bar=bar,
                group_by=columns.group_by,
                members=members,
                outcomes=outcome,
            )
            try:
                todo = run.resume(plan.chunks)
                if on_ray is not None:
                    summary = await asyncio.to_thread(
                        run.on_ray, on_ray, found, columns.id, todo, judge, actors, progress
                    )
                    if labels is not None or spec.audit is not None:  # the workers' sums
                        # carry no labels, and no audit's plain and masked pairs side by side
                        parts = journal.scan_parts()
                        summary = aggregate(parts, group_by=run.group_by, labels=labels)
                    run_files.write(SUMMARY, summary.write_parquet)
                    journal.mark_finished()
                    usage = run.spent.priced(judge.name, traits, prices)  # the workers' too
                    return _result(run, plan, bar, started, summary, usage)
                if traits.kind == "batch" and isinstance(judge, BatchJudge) and len(todo) > 1:
                    # A Batch API judge: submit every chunk first so the batches run side by side,
                    # then collect chunk by chunk (the judge polls the batches it submitted).
                    await run.submit(todo, judge.submitting())
                await run.score(todo, judge)
                summary = aggregate(journal.scan_parts(), group_by=run.group_by, labels=labels)
                run_files.write(SUMMARY, summary.write_parquet)
                journal.mark_finished()
            finally:
                bar.close()
    usage = run.spent.priced(judge.name, traits, prices)
    if members is not None:
        usage = priced_members(run.spent_by, members, prices)
    return _result(run, plan, bar, started, summary, usage)


def _result(
    run: _Run,
    plan: RunPlan,
    bar: RunProgress,
    started: float,
    summary: pl.DataFrame,
    usage: Usage | None,
) -> ParquetRun:
    parts = run.journal.scan_parts() if run.journal.parts() else None
    return ParquetRun(
        destination=run.journal.destination,
        storage_options=run.pairing.get("storage_options"),
        n_pairs=plan.n_pairs,
        n_chunks=len(plan.chunks),
        chunks_resumed=run.resumed,
        judged=bar.answered,
        from_cache=run.from_cache,
        errors=run.errors,
        seconds=time.monotonic() - started,
        summary=summary,
        usage=usage,
        disparities=run_disparities(parts, run.group_by),
        outcome_errors=outcome_errors(parts),
    )


score_parquet = sync_twin(ascore_parquet, "score_parquet")


@dataclass
class _Run:
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
    resumed: int = 0
    from_cache: int = 0
    errors: int = 0
    spent: Spent = field(default_factory=Spent)
    members: Members | None = None
    spent_by: dict[str, Spent] = field(default_factory=dict)

    def on_ray(
        self,
        ray_run: Any,
        source: Source,
        id_column: str,
        todo: list[Chunk],
        judge: Judge,
        actors: int | None,
        progress: bool,
    ) -> pl.DataFrame:
        """Score ``todo`` on Ray (``ray_run``: the Ray runner's module); the summary of the
        whole run, merged from the chunks' per-group sums."""
        resumed = [i for i in sorted(self.journal.chunks) if i not in {c.index for c in todo}]
        destination = self.journal.destination  # a folder: the same absolute path on every node
        job = ray_run.ChunkJob(
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
        self.bar.chunk = len(self.journal.chunks)  # chunks finish in any order: count them
        tally = ray_run.run_chunks(
            source=source,
            schema=self.scan.collect_schema(),  # position and ids included
            id_column=id_column,
            todo=todo,
            job=job,
            judge=judge,
            actors=actors,
            progress=progress,
            on_chunk=self._finished_on_ray,
        )
        self.bar.answered += tally.judged
        self.spent = tally.spent
        for index in resumed:  # sums of the parts an earlier call wrote
            part = self.journal.store.scan_names([part_name(index)]).collect()
            sums, errors = ray_run.part_sums(part, self.group_by)
            tally.sums.append(sums)
            tally.errors.append(errors)
        return ray_run.summary_of(tally.sums, tally.errors, self.group_by)

    def _finished_on_ray(self, index: int, entry: dict[str, Any]) -> None:
        """As :meth:`finished`; the line's "chunk k/n" counts the chunks done, in any order."""
        self.finished(index, entry)
        self.bar.chunk = len(self.journal.chunks)
        self.bar.update()

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

    async def submit(self, chunks: list[Chunk], submitter: Judge) -> None:
        async with contextlib.aclosing(self._read_ahead(chunks)) as read:
            async for chunk, pairs in read:
                self.bar.start_chunk(chunk.index, phase="submitting chunk")
                await self._scored(pairs, submitter)  # submits; the results are collected later

    async def score(self, chunks: list[Chunk], judge: Judge) -> None:
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

    def finished(self, index: int, entry: dict[str, Any]) -> None:
        """Record a chunk whose part is written: in the journal, the counts and the bar."""
        not_judged = entry.pop("not_judged")
        self.journal.mark_done(index, entry)
        self.from_cache += entry["from_cache"]
        self.errors += entry["errors"]
        self.bar.chunk_done(entry["pairs"], entry["from_cache"], not_judged)

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
