"""Running a manifest's targets, one after another, and writing every file they produce."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pairwise_polars._advice import say
from pairwise_polars._errors import ManifestError, PairwiseError
from pairwise_polars.io import RESULTS_FOLDER
from pairwise_polars.manifest._load import load_manifest
from pairwise_polars.manifest._model import Manifest, TargetSpec
from pairwise_polars.manifest._outputs import Table, about_target, check_target_folder
from pairwise_polars.manifest._target_run import TargetRun, run_target
from pairwise_polars.report import Outcome
from pairwise_polars.report._ci_files import check_ci_files, write_ci_files
from pairwise_polars.scoring import CacheLike, Prices

DEFAULT_OUTPUT = RESULTS_FOLDER
"""Where a manifest run writes its targets' folders unless told (a data folder's search passes
over it)."""


@dataclass(frozen=True)
class ManifestRun:
    """What running a manifest produced: one :class:`TargetRun` per target, in order, and the
    run's CI files (``junit_xml``, ``step_summary``) in ``outputs``."""

    manifest: Manifest
    runs: tuple[TargetRun, ...]
    outcomes: tuple[Outcome, ...] = ()
    """Each target's verdict as the CI outputs and the report read it (none in a dry run)."""
    outputs: Mapping[str, str] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """Every gate of every target passed (a dry run has no verdict: True)."""
        return all(run.gates is None or run.gates.passed for run in self.runs)


def run_manifest(
    manifest: Manifest | str | os.PathLike[str],
    *,
    targets: Sequence[str] | None = None,
    output: str | os.PathLike[str] = DEFAULT_OUTPUT,
    table: Table = "csv",
    top: int = 5,
    junit_xml: str | os.PathLike[str] | None = None,
    step_summary: str | os.PathLike[str] | Literal[False] | None = None,
    cache: CacheLike | None = None,
    progress: bool = True,
    dry_run: bool = False,
    prices: Prices | Callable[[TargetSpec], Prices] | None = None,
    on_start: Callable[[TargetSpec], None] | None = None,
    on_target: Callable[[TargetRun], None] | None = None,
) -> ManifestRun:
    """Run a manifest's targets (``targets``: these names only) exactly as ``pairwise-polars
    run`` does: each target's files into ``output/<target>/`` (see :func:`run_target`), then
    the JUnit XML (``junit_xml``) and the step summary over all targets (``step_summary``:
    default the file ``$GITHUB_STEP_SUMMARY`` names; ``False``: none). Every output is checked
    writable before anything is paid for. A target that stops with an error still leaves the
    CI files of the targets before it, with the error as its row, and the error is raised.
    ``on_start`` and ``on_target`` see each target before it runs and its result after;
    ``prices`` may depend on the target (a function of it).

    >>> run = run_manifest("data/example.yaml", output="results")  # doctest: +SKIP
    >>> run.passed, run.runs[0].outputs["report"]  # doctest: +SKIP
    (True, 'results/letters/report.html')
    """
    if not isinstance(manifest, Manifest):
        manifest = load_manifest(manifest)
    chosen = _selected(manifest, targets)
    summary = "" if step_summary is False else step_summary
    if not dry_run:  # every output can be written before anything is paid for
        for target in chosen:
            check_target_folder(Path(output) / target.name)
        check_ci_files(junit_xml)
    runs: list[TargetRun] = []
    outcomes: list[Outcome] = []
    title = f"pairwise-polars run {manifest.path}"
    for target in chosen:
        if on_start is not None:
            on_start(target)
        started = time.monotonic()
        try:
            run = run_target(
                target,
                cache=cache,
                progress=progress,
                dry_run=dry_run,
                prices=prices(target) if callable(prices) else prices,
                output=output,
                table=table,
                top=top,
            )
        except (Exception, KeyboardInterrupt) as exc:
            # The targets already judged keep their CI outputs; the one that stopped says why.
            if not dry_run:
                _write_failed(outcomes, target, exc, junit_xml, summary, title)
            raise
        runs.append(run)
        if run.summary is not None and run.gates is not None:
            outcome = Outcome(target.name, run.summary, run.gates, time.monotonic() - started,
                              about_target(target), comparison=run.comparison)  # fmt: skip
            outcomes.append(outcome)
        if on_target is not None:
            on_target(run)
    if dry_run:
        return ManifestRun(manifest, tuple(runs))
    written = write_ci_files(outcomes, junit=junit_xml, title=title, summary=summary)
    return ManifestRun(manifest, tuple(runs), tuple(outcomes), written)


def _write_failed(
    outcomes: list[Outcome],
    target: TargetSpec,
    exc: BaseException,
    junit: str | os.PathLike[str] | None,
    summary: str | os.PathLike[str] | None,
    title: str,
) -> None:
    message = say(exc, "manifest") if isinstance(exc, PairwiseError) else str(exc)
    failed = Outcome.failed(target.name, message or type(exc).__name__, about=about_target(target))
    with contextlib.suppress(PairwiseError):  # the error to report is the first one
        write_ci_files([*outcomes, failed], junit=junit, title=title, summary=summary)


def _selected(manifest: Manifest, wanted: Sequence[str] | None) -> list[TargetSpec]:
    if not wanted:
        return list(manifest.targets.values())
    unknown = [name for name in wanted if name not in manifest.targets]
    if unknown:
        raise ManifestError(
            f"Manifest {manifest.path!r} has no target {unknown[0]!r}; its targets are: "
            f"{', '.join(manifest.targets)}."
        )
    return [manifest.targets[name] for name in dict.fromkeys(wanted)]
