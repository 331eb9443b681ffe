"""How a pair is scored, as one frozen value: the metrics, the judge, the order policy and the
views each pair is judged in. Built once at each entry point (Python keywords, a manifest
target, the CLI) and handed whole to preparation, the run, a Ray chunk job, the run's
fingerprint and its journal.

A *view* is one way a pair is shown to the judge; every view is a row of the keyed request
frame (its ``view`` column), and its results are combined back into the pair's row by the
view's combine rule (:mod:`pairwise_polars.scoring._views`). Today's views are the order
views ``"a-b"`` and ``"b-a"``: one of them per pair (by the order policy), or both averaged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pairwise_polars._errors import OptionError
from pairwise_polars.judges import HeuristicJudge, Judge, traits_of
from pairwise_polars.judges._factory import HEURISTIC_NAMES
from pairwise_polars.metrics import Metric, pairwise_metrics
from pairwise_polars.scoring._views import AB, BA, MASKED

MetricsLike = str | Path | Metric | Sequence[str | Path | Metric]
"""A metric name, a metric file, a :class:`Metric`, or a list of them."""
Order = Literal["random", "fixed"]
"""How a pair is shown to the judge: ``"random"`` (by a hash of its ``pair_id``) or ``"fixed"``."""
ORDERS = ("random", "fixed")
Audit = Literal["mask"]
"""How the judge is audited: ``"mask"`` judges every pair again with the attribute's terms
masked (the ``"masked"`` view), measuring the judge's reaction to the attribute itself."""
AUDITS = ("mask",)


@dataclass(frozen=True)
class ScoringSpec:
    """How every pair of a call is scored: metrics, judge, order policy and views.

    Build it with :meth:`of` from the same keywords :func:`~pairwise_polars.score` takes, or
    pass it whole as ``spec=`` to ``score``, ``score_pairs``, ``plan`` and ``score_parquet``
    (which then refuse the separate keywords, so nothing is said twice).

    >>> import pairwise_polars as pp
    >>> spec = pp.ScoringSpec.of("pairwise-bias", both_orders=True)
    >>> spec.views, spec.both_orders, [m.name for m in spec.metrics]
    (('a-b', 'b-a'), True, ['pairwise-bias'])
    >>> pp.ScoringSpec.of(order="fixed").views  # one order view per pair
    ('a-b',)
    """

    metrics: tuple[Metric, ...]
    judge: Judge = field(default_factory=HeuristicJudge)
    order: Order = "random"
    """Shown once: ``"random"`` (a-b or b-a by a hash of the ``pair_id``) or ``"fixed"`` (a-b)."""
    both_orders: bool = False
    """Judge every pair in both order views and average them (the position gap is reported)."""
    audit: Audit | None = None
    """``"mask"``: judge every pair in the masked view too (rows with ``view="masked"``)."""

    def __post_init__(self) -> None:
        if self.order not in ORDERS:
            raise OptionError(f'order must be "random" or "fixed", got {self.order!r}.')
        if self.audit is not None and self.audit not in AUDITS:
            raise OptionError(f'audit must be "mask" or None, got {self.audit!r}.')
        if not self.metrics:
            raise OptionError("A ScoringSpec needs at least one metric.")
        object.__setattr__(self, "judge", as_judge(self.judge))  # frozen: set once, checked

    @classmethod
    def of(
        cls,
        metrics: MetricsLike = "pairwise-bias",
        *,
        judge: Judge | str | None = None,
        both_orders: bool = False,
        order: Order = "random",
        audit: Audit | None = None,
    ) -> ScoringSpec:
        """The spec the public keywords describe (metric names and files resolved, the offline
        heuristic judge when none is given)."""
        if order not in ORDERS:  # before the metrics: the cheaper mistake is named first
            raise OptionError(f'order must be "random" or "fixed", got {order!r}.')
        return cls(
            tuple(pairwise_metrics(metrics)),
            as_judge(judge),
            order,
            bool(both_orders),
            audit,
        )

    @property
    def views(self) -> tuple[str, ...]:
        """The views each pair is judged in: ``("a-b", "b-a")`` with both orders, else one
        order view per pair (``"a-b"`` when fixed or when the judge reads no messages;
        ``"a-b | b-a"``: either, drawn from the ``pair_id``)."""
        if self.both_orders:
            orders: tuple[str, ...] = (AB, BA)
        elif self.order == "fixed" or not traits_of(self.judge).uses_messages:
            orders = (AB,)
        else:
            orders = (f"{AB} | {BA}",)
        if self.audit == "mask":
            return (*orders, *(f"{MASKED} {o}" for o in orders))
        return orders

    def fingerprint(self) -> dict[str, Any]:
        """What a recorded run keeps of the spec (besides its metrics and judge, recorded on
        their own): the same keys and values as before the spec existed, so a run recorded
        then resumes now."""
        recorded: dict[str, Any] = {"both_orders": self.both_orders, "order": self.order}
        if self.audit is not None:  # absent before audits: those runs resume unchanged
            recorded["audit"] = self.audit
        return recorded


def as_judge(judge: Judge | str | None) -> Judge:
    """The judge a ``judge=`` keyword names: the offline heuristic judge for None or
    ``"heuristic"``, a judge as given; a model name or anything else is refused, saying how
    to name a judge."""
    if judge is None or (isinstance(judge, str) and judge in HEURISTIC_NAMES):
        return HeuristicJudge()
    if isinstance(judge, str):
        raise OptionError(
            f"judge={judge!r} is a name, not a judge. Pass a judge object: "
            f"judge=pp.OpenAIJudge({judge!r}) for an OpenAI-compatible endpoint (base_url= for "
            "vLLM or a gateway), pp.AnthropicJudge(model) for Claude; judge='heuristic' (or "
            "None) is the offline heuristic judge."
        )
    if not isinstance(judge, Judge):
        raise OptionError(
            "judge must be a judge (an object with a `name` and an async `judge(requests)` "
            "method, such as pp.OpenAIJudge(...)), a list of judges (a panel), 'heuristic' or "
            f"None; got {type(judge).__name__}."
        )
    return judge


def resolve_spec(
    spec: ScoringSpec | None,
    metrics: MetricsLike,
    *,
    judge: Judge | None,
    both_orders: bool,
    order: Order,
    audit: Audit | None = None,
) -> ScoringSpec:
    """The spec of a call: ``spec`` as given (no separate scoring keyword beside it), or the
    one the keywords describe."""
    if spec is None:
        return ScoringSpec.of(
            metrics, judge=judge, both_orders=both_orders, order=order, audit=audit
        )
    given = [
        name
        for name, value, default in (
            ("metrics", metrics, "pairwise-bias"),
            ("judge", judge, None),
            ("both_orders", both_orders, False),
            ("order", order, "random"),
            ("audit", audit, None),
        )
        if value is not default and value != default
    ]
    if given:
        raise OptionError(
            f"spec=ScoringSpec(...) already says how pairs are scored; {given} were given too. "
            "Put them in the spec (ScoringSpec.of(..., both_orders=True)) or drop spec=."
        )
    if not isinstance(spec, ScoringSpec):
        raise OptionError(f"spec must be a ScoringSpec, got {type(spec).__name__}.")
    return spec
