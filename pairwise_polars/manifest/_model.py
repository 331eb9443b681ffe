"""What a validated manifest holds: small frozen records, and how they become judges and metrics."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pairwise_polars._errors import ManifestError
from pairwise_polars.judges import Judge, Panel, build_judge
from pairwise_polars.metrics import Metric, get_metric
from pairwise_polars.pairing import Columns, PairingOptions
from pairwise_polars.scoring import ScoringSpec

Threshold = float | Mapping[str, float]


@dataclass(frozen=True)
class Problem:
    """One validation problem: where it is (file, 1-based line, dotted key) and what is wrong."""

    file: str
    line: int
    key: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}: "
        return where + (f"{self.key}: " if self.key else "") + self.message


@dataclass(frozen=True, kw_only=True)
class MetricSpec:
    """A metric of a pairwise block: a shipped name or a metric file, with template parameters."""

    name: str
    source: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def load(self) -> Metric:
        return get_metric(self.source, **self.params)


@dataclass(frozen=True, kw_only=True)
class JudgeSpec:
    """``heuristic`` (``offline`` is an alias; no key) or an OpenAI-compatible ``model``."""

    kind: Literal["heuristic", "openai"] = "heuristic"
    model: str | None = None
    api_key_env: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    prices: Mapping[str, Any] = field(default_factory=dict)
    """The judge model's price (``price_per_million``), by model name, for cost estimates."""
    where: str = ""
    """``file:line: key`` of ``api_key_env``, for the message when its variable is unset."""

    def build(self, *, need_key: bool = True) -> Judge:
        """The judge object. ``need_key=False`` (a dry run) does not require the key variable."""
        if self.kind == "heuristic":
            return build_judge(None)
        key = None
        if self.api_key_env is not None:
            key = os.environ.get(self.api_key_env)
            if key is None and need_key:
                raise ManifestError(
                    f"{self.where}: the environment variable "
                    f"{self.api_key_env} is not set. Export it before running (the key never "
                    "goes in the manifest)."
                )
        return build_judge(str(self.model), api_key=key, **self.options)


@dataclass(frozen=True, kw_only=True)
class GateSpec:
    """Thresholds checked on the overall rows and on every slice row, per gate name
    (``max_error_rate`` may be None: switched off in that scope)."""

    overall: Mapping[str, Threshold | None] = field(default_factory=dict)
    per_slice: Mapping[str, Threshold | None] = field(default_factory=dict)
    conservative: bool = False
    min_groups: int = 30
    """Groups a slice needs for a fairness check to pass (fewer: at best inconclusive)."""
    errors_as: Literal["worst", "ignore"] = "worst"
    """How failed judgements count: at their worst for a pass and best for a fail, or not."""
    require: tuple[str, ...] = ()
    """Dimensions the verdict needs: one the data lacks or never scored is inconclusive."""

    def __bool__(self) -> bool:
        return bool(self.overall or self.per_slice or self.require)


@dataclass(frozen=True, kw_only=True)
class TargetSpec:
    """One target's pairwise block, validated, with paths resolved against the manifest.
    (Not the system under test: that is :class:`~pairwise_polars.counterfactual.Target`.)"""

    name: str
    description: str = ""
    manifest: str = ""
    """The manifest file the target was read from, as given (recorded in its outputs)."""
    data: tuple[str, ...]
    storage_options: dict[str, str] | None = None
    """Non-secret object-store settings for ``s3://``-style data (credentials come from the
    environment)."""
    strategy: Literal["group", "contrastive"] = "group"
    reference: str = "reference"
    poles: tuple[str, str] = ("pole_a", "pole_b")
    control: str = "control"
    """The role of control rows (second answers to the reference's input: the noise floor)."""
    columns: Columns = field(default_factory=Columns)
    on_invalid: Literal["raise", "skip"] = "raise"
    metrics: tuple[MetricSpec, ...] = ()
    judge: JudgeSpec = field(default_factory=JudgeSpec)
    """The judge; of a panel, its first member (the spec's judge, and the outcomes' judge)."""
    panel: tuple[JudgeSpec, ...] = ()
    """A panel's members (``judge:`` as a list), in order; empty for one judge."""
    combine: Literal["mean", "median", "majority"] = "mean"
    """How a panel's scores become the combined score."""
    repeats: int = 1
    """How many times every judge is asked each request."""
    both_orders: bool = False
    order: Literal["random", "fixed"] = "random"
    audit: Literal["mask"] | None = None
    """``mask``: judge every pair again with the attribute's terms masked (the judge's audit)."""
    slices: tuple[str, ...] | None = None
    """Slice columns of the summary; None: ``dimension`` when the data has it, else overall."""
    equivalence_threshold: float = 0.0
    divergence_threshold: float = 0.5
    confidence: float = 0.95
    cache: bool | str = True
    runner: Literal["local", "ray"] = "local"
    """``ray``: score through ``score_parquet(runner="ray")`` in a run directory (resumable)."""
    labels: str | None = None
    """A file of human labels of pairs: the summary and gates use the corrected figures."""
    outcome_labels: str | None = None
    """A file of people's reading of the outcomes: the disparities (and their gates) use the
    corrected figures."""
    gates: GateSpec = field(default_factory=GateSpec)
    baseline: str | None = None
    """A previous run (its output folder, a score_parquet folder or a scored file) to compare
    this run with, pair by pair; its regression gate is ``max_regression``."""
    max_regression: float = 0.05
    familywise: Literal["none", "holm", "bh"] | None = None
    """How the gates are judged over the slices (None: ``"none"`` for the fairness gates, Holm
    for the regression gate)."""

    def scoring(self, *, need_key: bool = True) -> ScoringSpec:
        """How the target's pairs are scored, as one spec (``need_key=False``, a dry run: the
        judge's key variable need not be set)."""
        metrics = tuple(spec.load() for spec in self.metrics)
        judge = self.judge.build(need_key=need_key)
        return ScoringSpec(metrics, judge, self.order, self.both_orders, self.audit)

    def judged_by(self, *, need_key: bool = True) -> Judge | Panel:
        """Who judges: the judge, or the panel of its members combined by ``combine``."""
        if not self.panel:
            return self.judge.build(need_key=need_key)
        judges = [spec.build(need_key=need_key) for spec in self.panel]
        return Panel(judges, combine=self.combine)

    @property
    def fanned_out(self) -> bool:
        """Whether every request goes to several members (a panel, or repeats)."""
        return bool(self.panel) or self.repeats > 1

    @property
    def prices(self) -> dict[str, Any]:
        """Every judge's ``price_per_million`` (and price files), by model name."""
        return {k: v for spec in (self.panel or (self.judge,)) for k, v in spec.prices.items()}

    def pairing(self) -> PairingOptions:
        """Keyword arguments for :func:`~pairwise_polars.form_pairs` (besides the strategy)."""
        return {
            "columns": self.columns,
            "reference": self.reference,
            "poles": self.poles,
            "control": self.control,
            "on_invalid": self.on_invalid,
            "storage_options": self.storage_options,
        }


@dataclass(frozen=True)
class Manifest:
    """A validated manifest: its path (as given) and its targets in file order."""

    path: str
    targets: Mapping[str, TargetSpec]
