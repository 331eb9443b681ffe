"""score_parquet: a large parquet run scored chunk by chunk, with parts, a journal and resume.

This module checks what the call asks for and plans the run before the first judge call, holds
the destination's lock and journal while the chunk loop (``_chunk_loop``) scores the chunks
here or on Ray, and writes the summary at the end.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Literal

import polars as pl

from pairwise_polars._errors import OptionError
from pairwise_polars.engine import cache_session, sync_twin
from pairwise_polars.engine._api import Endpoint
from pairwise_polars.io import DataLike, Source, source_files
from pairwise_polars.judges import BatchJudge, HeuristicJudge, JudgeTraits, traits_of
from pairwise_polars.judges._panel import JudgeLike
from pairwise_polars.labels import read_labels
from pairwise_polars.metrics import Metric
from pairwise_polars.pairing import PairingOptions, Strategy
from pairwise_polars.pairing._groups import check_pairing
from pairwise_polars.pairing._pairs import refuse_unknown_keywords
from pairwise_polars.runs._chunk_loop import ChunkLoop
from pairwise_polars.runs._chunks import POS, Chunk, ChunkLayout, lay_out_chunks, scan_rows
from pairwise_polars.runs._journal import PAIRING_DEFAULTS, SUMMARY, locked, open_journal
from pairwise_polars.runs._run_disparities import outcome_errors, run_disparities
from pairwise_polars.runs._run_members import members_fingerprint, priced_members, run_members
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
    ScoringSpec,
    Usage,
)
from pairwise_polars.scoring._members import Members, keyword_spec
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
    (``OfflineRun``, its former name, still works and warns.)"""

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
    laid_out from the key columns, then scored ``chunk_size`` pairs at a time (a chunk never
    splits a group, so it holds at most ``chunk_size`` + the largest group's pairs - 1), each
    chunk written as ``destination/scored/part-<chunk>.parquet`` and recorded in
    ``destination/run.json``. Peak memory follows the chunk, not the file: measured about
    1 GiB for a 5M-row run with ~600-character outputs at the default 50,000 pairs per chunk;
    lower ``chunk_size`` for longer texts. Running the same call again after a crash finishes
    the run, skipping finished chunks and taking paid judgements from the cache; a call with
    another source, pairing, metrics, judge or chunk size is refused with
    :class:`RunStateError` unless ``overwrite=True`` (or the run there finished no chunk and
    wrote no part: it holds nothing to keep). A judge without its key stops the call before it
    writes anything when no cache could answer. At the end
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

    ``runner="ray"`` runs the same layout on Ray Data (the ``pairwise-polars[ray]`` extra):
    rows read by Ray tasks, each chunk's rows brought together by a shuffle on its groups,
    paired, judged and written by a pool of ``actors`` long-lived Ray workers (default: one
    per CPU of the cluster; never more than the chunks to score), each with the judge's
    ``max_concurrency`` requests in flight and one shared ``requests_per_minute`` /
    ``tokens_per_minute`` limit for all of them. The parts, the journal, the summary, resume
    and "never pay twice" are the local runner's; the two runners' results are equal, and
    either resumes the other's run. ``ray.init()`` attaches to the cluster ``RAY_ADDRESS``
    names, or starts a local one that ends with the run (or with its driver, if killed). On a
    cluster of several machines the source and destination are object URIs or a shared folder.

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
    refuse_unknown_keywords(pairing, ascore_parquet, "score_parquet")
    started = time.monotonic()
    asked = _asked(
        chunk_size,
        keyword_spec(spec, metrics, judge, both_orders=both_orders, order=order, audit=audit),
        judge=judge,
        repeats=repeats,
        runner=runner,
        outcomes=outcomes,
        labels=labels,
    )
    run_files = run_store(destination, pairing.get("storage_options"))
    laid_out = lay_out_source(source, strategy, chunk_size, pairing, ray=asked.ray_run is not None)
    fingerprint = run_fingerprint(
        laid_out.layout,
        strategy,
        resolved_pairing(pairing, strategy),
        asked.spec,
        chunk_size,
        keep_text,
        asked.outcome,
    ) | members_fingerprint(asked.members)
    layout = laid_out.layout
    with cache_session(cache, enabled=asked.cacheable) as store:
        if store is None or store.is_empty():
            asked.check_ready()  # nothing could answer without the key: say so before writing
        with locked(run_files):
            journal = open_journal(
                run_files, fingerprint, len(layout.chunks), laid_out.info, overwrite=overwrite
            )
            bar = RunProgress(layout.n_pairs, len(layout.chunks), enabled=progress)
            loop = ChunkLoop(
                scan=laid_out.scan,
                strategy=strategy,
                pairing=pairing,
                spec=asked.spec,
                keep_text=keep_text,
                store=store,
                journal=journal,
                bar=bar,
                group_by=laid_out.group_by,
                members=asked.members,
                outcomes=asked.outcome,
            )
            try:
                todo = loop.resume(layout.chunks)
                summary = await _score_all(
                    loop, todo, asked, laid_out, labels=labels, actors=actors, progress=progress
                )
                run_files.write(SUMMARY, summary.write_parquet)
                journal.mark_finished()
            finally:
                bar.close()
    return _result(loop, layout, started, summary, _usage(loop, asked, prices))


score_parquet = sync_twin(ascore_parquet, "score_parquet")


@dataclass(frozen=True, kw_only=True)
class _Asked:
    """What the call asks for, checked before anything is read or Ray is loaded."""

    spec: ScoringSpec
    members: Members | None
    ray_run: ModuleType | None
    """The Ray runner's module for ``runner="ray"``, None for the local runner."""
    outcome: Metric | None
    traits: JudgeTraits

    def check_ready(self) -> None:
        """Raise what stops every judge of the call from sending (no key), on the local runner
        only: Ray's workers may hold a key the driver lacks."""
        if self.ray_run is not None:
            return
        members = self.members.judges if self.members is not None else ()
        for judge in (self.spec.judge, *members):
            if isinstance(judge, Endpoint):
                judge.ready()

    @property
    def cacheable(self) -> bool:
        members = self.members
        return self.traits.cacheable or (
            members is not None and any(traits_of(j).cacheable for j in members.judges)
        )


def _asked(
    chunk_size: int,
    spec: ScoringSpec,
    *,
    judge: JudgeLike,
    repeats: int,
    runner: Runner,
    outcomes: str | Path | Metric | None,
    labels: DataLike | None,
) -> _Asked:
    if not isinstance(chunk_size, int) or chunk_size < 1:
        raise OptionError(f"chunk_size must be a positive number of pairs, got {chunk_size!r}.")
    members = run_members(judge, repeats, spec, ray=runner == "ray")  # refused before Ray loads
    ray_run = runner_module(runner)
    outcome = None if outcomes is None else outcome_metric(outcomes)
    if labels is not None:  # columns and numbers now; the pairs they name once scored
        read_labels(labels)
    traits = traits_of(spec.judge)
    if isinstance(spec.judge, HeuristicJudge):
        outcome = None  # the heuristic reads outcomes key-free, as it does without the metric
    if ray_run is not None and traits.kind == "batch":
        raise OptionError(
            'runner="ray" sends requests from many workers; a Batch API judge submits whole '
            'batches and waits, so it gains nothing there. Use runner="local" with it.'
        )
    return _Asked(spec=spec, members=members, ray_run=ray_run, outcome=outcome, traits=traits)


@dataclass(frozen=True, kw_only=True)
class _LaidOut:
    """The source found and checked, and the run's chunks laid_out from its key columns."""

    source: Source
    scan: pl.LazyFrame
    id_column: str
    group_by: str
    layout: ChunkLayout
    info: dict[str, object]
    """What the journal records about the run beside its fingerprint."""


def lay_out_source(
    source: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    strategy: Strategy,
    chunk_size: int,
    pairing: PairingOptions,
    *,
    ray: bool,
) -> _LaidOut:
    """The source found and checked, and its chunks laid out (``ray``: no warning for a
    scattered source, which Ray reads once whatever its order)."""
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
    layout = lay_out_chunks(scan, files, strategy, chunk_size, pairing, columns.group_by)
    if not ray:  # Ray reads each slice of the source once, scattered or not
        warn_if_scattered(layout, columns.group_by)
    info = {
        "created_by": f"pairwise_polars {package_version()}",
        "source_paths": files,
        "n_pairs": layout.n_pairs,
        "largest_group_pairs": layout.largest_group,
    }
    return _LaidOut(
        source=found,
        scan=scan,
        id_column=columns.id,
        group_by=columns.group_by,
        layout=layout,
        info=info,
    )


async def _score_all(
    loop: ChunkLoop,
    todo: list[Chunk],
    asked: _Asked,
    laid_out: _LaidOut,
    *,
    labels: DataLike | None,
    actors: int | None,
    progress: bool,
) -> pl.DataFrame:
    """Score the chunks still to do, here or on Ray; the summary of the whole run."""
    judge = asked.spec.judge
    if asked.ray_run is not None:
        summary = await asyncio.to_thread(
            loop.score_on_ray,
            asked.ray_run,
            source=laid_out.source,
            id_column=laid_out.id_column,
            n_rows=laid_out.layout.n_rows,
            todo=todo,
            judge=judge,
            actors=actors,
            progress=progress,
        )
        if labels is None and asked.spec.audit is None:
            return summary
        # The workers' sums carry no labels, and no audit's plain and masked pairs side by side.
    else:
        if asked.traits.kind == "batch" and isinstance(judge, BatchJudge) and len(todo) > 1:
            # A Batch API judge: submit every chunk first so the batches run side by side,
            # then collect chunk by chunk (the judge polls the batches it submitted).
            await loop.submit(todo, judge.submitting())
        await loop.score(todo, judge)
    return aggregate(loop.journal.scan_parts(), group_by=loop.group_by, labels=labels)


def _usage(loop: ChunkLoop, asked: _Asked, prices: Prices | None) -> Usage:
    """What the call spent, priced (on Ray: the workers' spending too)."""
    if asked.members is not None:
        return priced_members(loop.spent_by, asked.members, prices)
    return loop.spent.priced(asked.spec.judge.name, asked.traits, prices)


def _result(
    loop: ChunkLoop, layout: ChunkLayout, started: float, summary: pl.DataFrame, usage: Usage | None
) -> ParquetRun:
    parts = loop.journal.scan_parts() if loop.journal.parts() else None
    return ParquetRun(
        destination=loop.journal.destination,
        storage_options=loop.pairing.get("storage_options"),
        n_pairs=layout.n_pairs,
        n_chunks=len(layout.chunks),
        chunks_resumed=loop.resumed,
        judged=loop.bar.answered,
        from_cache=loop.from_cache,
        errors=loop.errors,
        seconds=time.monotonic() - started,
        summary=summary,
        usage=usage,
        disparities=run_disparities(parts, loop.group_by),
        outcome_errors=outcome_errors(parts),
    )
