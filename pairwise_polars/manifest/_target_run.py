"""Running one validated target: pairs -> plan -> scores -> summary -> gates."""

from __future__ import annotations

import dataclasses
import difflib
import itertools
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from pairwise_polars._errors import ColumnError, OptionError, RunStateError
from pairwise_polars.comparison import compare, gate_compare, with_regression
from pairwise_polars.engine import cache_session
from pairwise_polars.engine._prices import given_prices
from pairwise_polars.io import scan_data
from pairwise_polars.judges import Judge
from pairwise_polars.labels import check_labels_for_pairs
from pairwise_polars.manifest._model import TargetSpec
from pairwise_polars.manifest._outputs import Table, check_target_folder, write_target_files
from pairwise_polars.manifest._target_chunks import plan_on_chunks
from pairwise_polars.manifest._target_disparities import (
    check_target_outcome_labels,
    target_disparities,
    wants_disparities,
)
from pairwise_polars.outcome._sided import SIDED
from pairwise_polars.pairing import form_pairs
from pairwise_polars.runs import chunked_pairs, score_parquet
from pairwise_polars.runs._parquet_run import DEFAULT_CHUNK_SIZE
from pairwise_polars.scoring import (
    CacheLike,
    Plan,
    Prepared,
    Prices,
    ScoringSpec,
    Usage,
    prepare,
    score_prepared,
)
from pairwise_polars.scoring._members import Members, members_of, prepare_members
from pairwise_polars.scoring._members_run import score_members_prepared
from pairwise_polars.scoring._score import plan_outcomes
from pairwise_polars.summary import GateResult, default_slices, gate_summary, summarize
from pairwise_polars.summary._stability import scoped_stability

CHUNK_SIZE = DEFAULT_CHUNK_SIZE
"""Pairs per chunk of a ``runner: ray`` target: planned and scored in the same chunks."""

Fanned = tuple[list[tuple[Prepared, int]], Members]
"""A panel's (and its repeats') prepared calls, one per member, and the members."""


@dataclass(frozen=True)
class TargetRun:
    """What running a target produced. A dry run has only ``pairs`` and ``plan``."""

    target: TargetSpec
    pairs: pl.DataFrame
    """The target's pairs (``runner: ray``: without the input and output texts)."""
    plan: Plan
    scored: pl.DataFrame | None = None
    summary: pl.DataFrame | None = None
    gates: GateResult | None = None
    usage: Usage | None = None
    """What the judge calls spent: requests, tokens (cached ones too) and dollars."""
    disparities: pl.DataFrame | None = None
    """Who is disadvantaged, per attribute (when a gate reads it: ``min_impact_ratio``,
    ``max_disadvantage``)."""
    comparison: pl.DataFrame | None = None
    """With a ``baseline``: :func:`~pairwise_polars.compare` of the baseline and this run (its
    regression gate's checks are among ``gates``)."""
    outputs: Mapping[str, str] = field(default_factory=dict)
    """The files written (with ``output``), by kind: scored, summary, table, report,
    comparison."""


def run_target(
    target: TargetSpec,
    *,
    cache: CacheLike | None = None,
    progress: bool = True,
    dry_run: bool = False,
    on_plan: Callable[[Plan], None] | None = None,
    prices: Prices | None = None,
    run_dir: str | os.PathLike[str] | None = None,
    output: str | os.PathLike[str] | None = None,
    table: Table = "csv",
    top: int = 5,
) -> TargetRun:
    """Form the target's pairs, prepare the judge requests once, plan them (``on_plan`` sees the
    plan before any judge call) and, unless ``dry_run``, score, summarise and gate them, with
    one cache lookup for the plan and the run. ``cache`` overrides the manifest's setting,
    ``prices`` the judge block's ``price_per_million`` (and the price table).

    With ``output``, the target's files go into ``output/<target>/`` as the command line writes
    them: ``scored.parquet``, ``summary.parquet``, ``summary.csv`` (``table="md"``:
    ``summary.md``), ``report.html`` (``top`` most divergent pairs per metric) and, with a
    baseline, ``comparison.parquet``; the folder is checked before anything is paid for.

    A target with ``runner: ray`` is scored by :func:`~pairwise_polars.score_parquet` on Ray
    into ``run_dir`` (default ``output/<target>/run``; resumed when it holds the same run,
    started over when the target changed): the same scored frame, so the same summary and
    gates. It is planned over the run's chunks, one chunk's pairs rendered at a time, with the
    same figures; its ``pairs`` are kept without the input and output texts (the scored frame
    has them), and its rows are read whole only when its gates read outcomes."""
    folder = Path(output) / target.name if output is not None else None
    if folder is not None and not dry_run:
        check_target_folder(folder)
    run_dir = folder / "run" if run_dir is None and folder is not None else run_dir
    spec = target.scoring(need_key=not dry_run)
    cache = target.cache if cache is None else cache
    prices = {**target.prices, **given_prices(prices)}
    rows = None
    if target.runner == "ray":  # planned chunk by chunk: the workers pair and render again
        pairs, slices, planned = _plan_on_ray(target, spec, cache, prices, on_plan)
        scored = usage = None
    else:
        # Read once: both sides of the self-join reuse the frame (faster than scanning twice).
        rows = _rows(target)
        pairs = form_pairs(rows, target.strategy, **target.pairing())
        slices = _slices(target, pairs)
        prepared, fanned = _prepare(target, spec, pairs, dry_run)
        check_target_outcome_labels(target, pairs)
        planned, scored, usage = _score(
            target, prepared, fanned, cache, progress, dry_run, on_plan, prices
        )
    if dry_run:
        return TargetRun(target, pairs, planned)
    if target.runner == "ray":
        scored, usage = _score_on_ray(target, spec, cache, progress, run_dir, prices)
        # The target reads its responses' outcomes itself (with its judge): only then the rows.
        rows = _rows(target) if wants_disparities(target) else None
    assert scored is not None
    run = _judged(target, pairs, planned, scored, slices, rows, spec.judge, cache)
    run = dataclasses.replace(run, usage=usage)
    if folder is None:
        return run
    return dataclasses.replace(run, outputs=_write(run, folder, table, top))


def _rows(target: TargetSpec) -> pl.DataFrame:
    """The target's input rows, read whole."""
    return scan_data(list(target.data), target.storage_options).collect()


def _slices(target: TargetSpec, pairs: pl.DataFrame) -> list[str]:
    """The slice columns the target's summary reads (checked to be columns of ``pairs``)."""
    slices = default_slices(pairs.columns) if target.slices is None else list(target.slices)
    check_slices(pairs, slices)
    if target.gates.per_slice and not slices:
        raise ColumnError(
            f"Target {target.name!r} has per_slice gates but no slice to check them on: the "
            "data has no dimension column. Name the slice columns with slices: [...], or move "
            "the gates to overall: (unknown is not fair, so they are not skipped)."
        )
    return slices


def _plan_on_ray(
    target: TargetSpec,
    spec: ScoringSpec,
    cache: CacheLike,
    prices: Prices,
    on_plan: Callable[[Plan], None] | None,
) -> tuple[pl.DataFrame, list[str], Plan]:
    """The pairs without their texts, the slices and the plan of a ``runner: ray`` target,
    planned over the chunks the Ray run scores (one chunk's pairs held at a time), with the
    checks of the local path before ``on_plan`` sees the plan."""
    data = list(target.data)
    chunks = chunked_pairs(data, target.strategy, chunk_size=CHUNK_SIZE, **target.pairing())
    first = next(chunks)  # the columns are every chunk's: slices fail before anything is read
    slices = _slices(target, first)
    wanted = wants_disparities(target)
    pairs, planned = plan_on_chunks(
        itertools.chain([first], chunks), spec, cache=cache, prices=prices, outcomes=wanted
    )
    if target.labels is not None:  # a bad label stops the run before anything is paid for
        maxima = {m.name: m.max_score for m in spec.metrics}
        check_labels_for_pairs(pairs, maxima, target.labels)
    check_target_outcome_labels(target, pairs)
    if on_plan is not None:
        on_plan(planned)
    return pairs, slices, planned


def _prepare(
    target: TargetSpec, spec: ScoringSpec, pairs: pl.DataFrame, dry_run: bool
) -> tuple[Prepared, Fanned | None]:
    """The judge requests prepared once: the judge's, or every member's of a panel and its
    repeats (``fanned``; the first member's are returned as ``prepared`` too)."""
    fanned = None
    if target.fanned_out:
        judge = target.judged_by(need_key=not dry_run)
        members = members_of(judge, target.repeats, spec.judge)
        fanned = (prepare_members(pairs, spec, members), members)
    prepared = fanned[0][0][0] if fanned else prepare(pairs, spec=spec)
    if target.labels is not None:  # a bad label stops the run before anything is paid for
        maxima = {m.name: m.max_score for m in prepared.metrics}
        check_labels_for_pairs(prepared.pairs, maxima, target.labels)
    return prepared, fanned


def _score(
    target: TargetSpec,
    prepared: Prepared,
    fanned: Fanned | None,
    cache: CacheLike,
    progress: bool,
    dry_run: bool,
    on_plan: Callable[[Plan], None] | None,
    prices: Prices,
) -> tuple[Plan, pl.DataFrame | None, Usage | None]:
    """The plan (outcomes counted when a gate reads them) and, on the local runner, the scores
    and what the judge (or every member of a panel and its repeats) spent (a ``runner: ray``
    target is planned by :func:`_plan_on_ray`)."""
    spent: list[Usage] = []
    shown: list[Plan] = []

    def show(planned: Plan) -> None:
        if wants_disparities(target):  # its gates read outcomes: the judge's, counted too
            with cache_session(cache, enabled=prepared.traits.cacheable) as store:
                planned = plan_outcomes(planned, prepared, "outcome", store, prices)
        shown.append(planned)
        if on_plan is not None:
            on_plan(planned)

    options: dict[str, Any] = {
        "cache": cache,
        "progress": progress,
        "dry_run": dry_run,
        "on_plan": show,
        "prices": prices,
        "on_usage": spent.append,
    }
    if fanned is not None:
        planned, scored = score_members_prepared(*fanned, **options)
    else:
        planned, scored = score_prepared(prepared, **options)
    return (shown[0] if shown else planned), scored, (spent[0] if spent else None)


def _judged(
    target: TargetSpec,
    pairs: pl.DataFrame,
    planned: Plan,
    scored: pl.DataFrame,
    slices: list[str],
    rows: pl.DataFrame | None,
    judge: Judge,
    cache: CacheLike,
) -> TargetRun:
    """Summary, disparities (when a gate reads them), gates and the baseline's comparison."""
    summary = summarize(scored, slices, labels=target.labels, **_intervals(target))
    disparities = None
    if wants_disparities(target):
        assert rows is not None
        disparities = target_disparities(target, rows, scored, judge, cache)
    if target.repeats > 1:  # would the verdict hold on a rerun? (inconclusive below 0.9)
        summary = _stability(target, scored, summary, slices)
    gates = gate_summary(
        summary,
        overall=target.gates.overall,
        per_slice=target.gates.per_slice,
        familywise=target.familywise or "none",
        confidence=target.confidence,
        require=target.gates.require,
        disparities=disparities,
        **_reading(target),
    )
    comparison = None
    if target.baseline is not None:
        comparison, gates = _since_baseline(target, scored, slices, gates)
    return TargetRun(target, pairs, planned, scored, summary, gates, None, disparities, comparison)


def _stability(
    target: TargetSpec, scored: pl.DataFrame, summary: pl.DataFrame, slices: list[str]
) -> pl.DataFrame:
    """The summary with ``verdict_stability`` under the target's own gates and reading."""
    return scoped_stability(
        scored,
        summary,
        slices,
        overall=target.gates.overall,
        per_slice=target.gates.per_slice,
        combine=target.combine,
        **_intervals(target),
        **_reading(target),
    )


def _intervals(target: TargetSpec) -> dict[str, Any]:
    """The target's thresholds, confidence and group column, under the keywords
    ``summarize``, ``scoped_stability`` and ``compare`` share."""
    return {
        "equivalence_threshold": target.equivalence_threshold,
        "divergence_threshold": target.divergence_threshold,
        "confidence": target.confidence,
        "group_by": target.columns.group_by,
    }


def _reading(target: TargetSpec) -> dict[str, Any]:
    """How the target's gates read the intervals, under the keywords ``gate_summary`` and
    ``scoped_stability`` share."""
    gates = target.gates
    return {
        "conservative": gates.conservative,
        "min_groups": gates.min_groups,
        "errors_as": gates.errors_as,
    }


def _write(run: TargetRun, folder: Path, table: Table, top: int) -> dict[str, str]:
    assert run.scored is not None and run.summary is not None
    return write_target_files(
        folder,
        run.target,
        scored=run.scored,
        summary=run.summary,
        gates=run.gates,
        comparison=run.comparison,
        disparities=run.disparities,
        table=table,
        top=top,
    )


def _since_baseline(
    target: TargetSpec, scored: pl.DataFrame, slices: list[str], gates: GateResult
) -> tuple[pl.DataFrame, GateResult]:
    """The comparison with the target's baseline and the gates with its regression checks."""
    assert target.baseline is not None
    comparison = compare(
        target.baseline,
        scored,
        slices,
        "holm",
        **_intervals(target),
    )
    familywise = {"none": None, "bh": "bh"}.get(target.familywise or "holm", "holm")
    regression = gate_compare(
        comparison,
        target.max_regression,
        familywise=familywise,
        confidence=target.confidence,
    )
    return comparison, with_regression(gates, regression)


def check_slices(pairs: pl.DataFrame, slices: tuple[str, ...] | list[str]) -> None:
    """Slice columns must exist in the pair frame; carried columns there end in _a / _b."""
    missing = [s for s in slices if s not in pairs.columns]
    if not missing:
        return
    hints = []
    for name in missing:
        sided = [f"{name}_a", f"{name}_b"]
        if all(s in pairs.columns for s in sided):
            hints.append(f"{name!r} -> {sided[0]!r} or {sided[1]!r}")
        else:
            close = difflib.get_close_matches(name, pairs.columns, n=1)
            if close:
                hints.append(f"{name!r} -> {close[0]!r}")
    advice = f" Did you mean: {'; '.join(hints)}?" if hints else ""
    raise ColumnError(
        f"Slice columns {missing} are not in the pair frame, whose columns are {pairs.columns}. "
        "Input columns other than the standard ones are carried with _a / _b suffixes (one per "
        f"side of the pair).{advice}"
    )


def _score_on_ray(
    target: TargetSpec,
    spec: ScoringSpec,
    cache: CacheLike,
    progress: bool,
    run_dir: str | os.PathLike[str] | None,
    prices: Prices,
) -> tuple[pl.DataFrame, Usage | None]:
    if run_dir is None:
        raise OptionError(
            f"Target {target.name!r} has runner: ray, which scores into a run directory: pass "
            "run_target(..., run_dir=...) (the CLI uses <output>/<target>/run)."
        )
    options: dict[str, Any] = {
        "spec": spec,
        "strategy": target.strategy,
        "cache": cache,
        "progress": progress,
        "keep_text": True,  # the report shows the texts
        "runner": "ray",
        "prices": prices,
        "chunk_size": CHUNK_SIZE,
        **target.pairing(),
    }
    data = list(target.data)
    try:
        run = score_parquet(data, run_dir, **options)
    except RunStateError as exc:
        if not any(fix.action == "overwrite" for fix in exc.fixes):
            raise
        # The target changed since its last run: start over (paid judgements stay cached).
        run = score_parquet(data, run_dir, overwrite=True, **options)
    # The parts keep each side's outcome too; the target reads its own (with its judge).
    return run.scored().collect().drop(SIDED, strict=False), run.usage
