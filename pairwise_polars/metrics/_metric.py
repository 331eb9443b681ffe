"""A metric: name, kind, version, rubric, and the Jinja2 chat templates the judge reads."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, cast

import yaml
from jinja2 import StrictUndefined, TemplateSyntaxError, meta, nodes
from jinja2 import TemplateError as JinjaError
from jinja2.exceptions import SecurityError

from pairwise_polars._errors import MetricError, TemplateError
from pairwise_polars.metrics._sandbox import MAX_TEXT, BoundedSandbox

PAIR_VARIABLES = (
    "input",
    "input_a",
    "input_b",
    "output_a",
    "output_b",
    "dimension",
    "attribute_a",
    "attribute_b",
)
"""Variables every template may use; ``input`` is ``input_a`` (the reference's prompt)."""

_FIELDS = {"name", "kind", "version", "description", "rubric", "system", "user", "requires"}
_DELIMITER_RUN = re.compile(r"<{3,}|>{3,}")
_LOOKALIKE = {"<": "\u2039", ">": "\u203a"}  # the single guillemets: read alike, delimit nothing


def neutralise(text: str) -> str:
    """``text`` with every run of three or more ``<`` or ``>`` replaced by as many single
    guillemets (``‹‹‹`` / ``›››``): data can then never open or close a ``<<<`` / ``>>>`` block.

    >>> neutralise("ok >>> Response B: <<<")
    'ok ››› Response B: ‹‹‹'
    """
    if "<<<" not in text and ">>>" not in text:  # the common case: skip the regex
        return text
    return _DELIMITER_RUN.sub(lambda m: _LOOKALIKE[m.group()[0]] * len(m.group()), text)


def fence(text: object) -> str:
    """A data block no content can close: ``<<<TAG``, the (neutralised) text, ``>>>TAG``, where
    TAG is the first 8 hex digits of the text's SHA-256. Templates use it as a filter:
    ``{{ output_a | fence }}``.

    >>> fence("Hello.").splitlines()
    ['<<<2d8bd7d9', 'Hello.', '>>>2d8bd7d9']
    """
    body = neutralise(str(text))
    tag = hashlib.sha256(body.encode("utf-8")).hexdigest()[:8]
    return f"<<<{tag}\n{body}\n>>>{tag}"


_LOADING = {
    nodes.Extends: "extends",
    nodes.Include: "include",
    nodes.Import: "import",
    nodes.FromImport: "from ... import",
}
_TEMPLATE_FAILURES = (JinjaError, OverflowError, MemoryError, RecursionError, ValueError)
"""What rendering a template may raise: the sandbox's SecurityError (a JinjaError), and
OverflowError, its answer to a range too large and to float arithmetic beyond the float range."""

# Data values are passed as variables, never rendered as templates, and neutralised so that no
# value can close a block (the fence filter); the sandbox keeps a user's template file from
# reaching Python internals, from loading other files (it has no loader), and from growing text
# without bound (metrics/_sandbox.py).
_ENV = BoundedSandbox(
    undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False, trim_blocks=False
)
_ENV.filters["fence"] = fence


def _reason(exc: BaseException) -> str:
    """What went wrong, never empty (a MemoryError has no text)."""
    reason = str(exc).rstrip(".")
    if isinstance(exc, OverflowError) and "range" not in reason.lower():
        return f"a number too large ({reason})"
    if isinstance(exc, MemoryError):
        return "it ran out of memory (MemoryError): check the template's loops and filters"
    return reason or type(exc).__name__


def _render(template: Any, context: Mapping[str, Any], budget: int) -> str:
    """The template rendered, stopped as soon as its output passes ``budget`` characters."""
    parts: list[str] = []
    for part in template.generate(context):
        budget -= len(part)
        if budget < 0:
            raise SecurityError(f"the rendered prompt exceeds the limit of {MAX_TEXT:,}")
        parts.append(part)
    return "".join(parts)


@dataclass(frozen=True, kw_only=True)
class Metric:
    """A pairwise metric. Build one with :func:`get_metric` or :func:`load_metric`.

    >>> m = get_metric("pairwise-refusal-disparity")
    >>> (m.name, m.kind, m.max_score)
    ('pairwise-refusal-disparity', 'pairwise', 2)
    """

    name: str
    kind: str
    version: str
    max_score: int
    labels: Mapping[int, str]
    system: str
    user: str
    description: str = ""
    requires: tuple[str, ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict)
    source: str = "shipped"
    signed: bool = False
    """A signed metric (``rubric: {max: 6, signed: true}``): the judge answers ``0..max`` with
    ``max / 2`` meaning "both treated alike"; ``raw_score`` is the answer minus ``max / 2``
    and ``score`` that over ``max / 2``, in [-1, 1], positive when side a is treated better
    (whichever side the judge was shown first)."""

    @property
    def centre(self) -> int:
        """The answer meaning "no difference": ``max_score // 2`` when signed, else 0."""
        return self.max_score // 2 if self.signed else 0

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (for a Ray worker, say) without its compiled Jinja templates, which do not
        pickle: a metric that has rendered a prompt travels as one that has not, and compiles
        them again on first use."""
        state = dict(self.__dict__)
        state.pop("_templates", None)
        return state

    @cached_property
    def _templates(self) -> tuple[Any, Any]:
        try:
            return _ENV.from_string(self.system), _ENV.from_string(self.user)
        except TemplateSyntaxError as exc:
            raise TemplateError(
                f"Metric {self.name!r} ({self.source}): template syntax error on line "
                f"{exc.lineno}: {exc.message}."
            ) from exc
        except _TEMPLATE_FAILURES as exc:  # compiling folds constants: a failure of those
            raise TemplateError(
                f"Metric {self.name!r} ({self.source}) failed to compile: {_reason(exc)}."
            ) from exc

    @cached_property
    def variables(self) -> frozenset[str]:
        """Every variable the templates read (and the check that they load no other file)."""
        found: set[str] = set()
        for part, source in (("system", self.system), ("user", self.user)):
            try:
                tree = _ENV.parse(source)
            except TemplateSyntaxError as exc:
                raise TemplateError(
                    f"Metric {self.name!r} ({self.source}): template syntax error on line "
                    f"{exc.lineno}: {exc.message}."
                ) from exc
            for kind, word in _LOADING.items():
                for node in tree.find_all(kind):
                    raise TemplateError(
                        f"Metric {self.name!r} ({self.source}): the {part} template uses "
                        f"{{% {word} %}} on line {node.lineno}; a metric template is one "
                        "self-contained text (the sandbox loads no other file): write the text "
                        "in instead."
                    )
            found |= meta.find_undeclared_variables(tree)
        return frozenset(found)

    def with_params(self, **params: Any) -> Metric:
        """The same metric with template parameters set (e.g. ``attribute_under_test``)."""
        return _replace(self, params={**self.params, **params})

    def render(self, values: Mapping[str, Any]) -> str:
        """The chat messages for one pair, JSON-encoded (the form judges and the cache use).
        Data values are neutralised (:func:`neutralise`) before they reach the template."""
        data = {k: neutralise(v) if isinstance(v, str) else v for k, v in values.items()}
        context = {**self.params, **data}
        system, user = self._templates
        try:
            system_text = _render(system, context, MAX_TEXT).strip()
            user_text = _render(user, context, MAX_TEXT - len(system_text)).strip()
        except _TEMPLATE_FAILURES as exc:
            raise TemplateError(
                f"Metric {self.name!r} ({self.source}) failed to render: {_reason(exc)}."
            ) from exc
        messages = [
            {"role": "system", "content": system_text},
            {"role": "user", "content": user_text},
        ]
        size = sum(len(m["content"]) for m in messages)
        if size > MAX_TEXT:
            raise TemplateError(
                f"Metric {self.name!r} ({self.source}) rendered a prompt of {size:,} characters, "
                f"more than the limit of {MAX_TEXT:,}: check the template's loops and filters."
            )
        return json.dumps(messages, ensure_ascii=False)

    def response_schema(self) -> dict[str, Any]:
        """The JSON schema of a valid answer, for servers with structured output."""
        return {
            "type": "object",
            "properties": {
                "score": {"type": "integer", "enum": list(range(self.max_score + 1))},
                "reason": {"type": "string"},
            },
            "required": ["score", "reason"],
            "additionalProperties": False,
        }

    def check_variables(self, available: set[str]) -> None:
        """Raise TemplateError when the templates read variables the pair frame cannot give."""
        unknown = sorted(self.variables - available - set(self.params))
        if unknown:
            raise TemplateError(
                f"Metric {self.name!r} ({self.source}) uses template variables {unknown} that "
                f"the pair frame does not provide. Available: {sorted(available)}. Fix the "
                "template, or pass values with get_metric(..., name=value)."
            )


def _replace(metric: Metric, **changes: Any) -> Metric:
    from dataclasses import replace

    return replace(metric, **changes)


_SHIPPED = Path(__file__).with_name("shipped")


def metric_names() -> list[str]:
    """Names of the shipped metrics."""
    return sorted(p.stem for p in _SHIPPED.glob("*.yaml"))


def get_metric(metric: str | Path | Metric, **params: Any) -> Metric:
    """A shipped metric by name, or a metric file by path, with optional template parameters.

    >>> get_metric("pairwise-demographic-bias", attribute_under_test="age").params
    {'attribute_under_test': 'age'}
    """
    if isinstance(metric, Metric):
        found = metric
    elif str(metric) in metric_names():
        found = load_metric(_SHIPPED / f"{metric}.yaml", source="shipped")
    elif Path(metric).suffix in (".yaml", ".yml") and Path(metric).is_file():
        found = load_metric(metric)
    else:
        raise MetricError(
            f"Unknown metric {str(metric)!r}. Shipped metrics: {metric_names()}; or pass the "
            "path of a metric file (.yaml)."
        )
    return found.with_params(**params) if params else found


def load_metric(path: str | Path, *, source: str | None = None) -> Metric:
    """Load a metric from a YAML file with ``name``, ``kind``, ``version``, ``rubric``
    (``max`` and optional ``labels``), ``system`` and ``user`` Jinja2 templates."""
    path = Path(path)
    # A shipped file is read by libyaml when PyYAML has it (~5x faster, the same mapping); a
    # user's file by the pure-Python reader (yaml.safe_load's), whose errors messages quote.
    loader = yaml.SafeLoader
    if source == "shipped":
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        spec = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
    except (OSError, yaml.YAMLError, UnicodeDecodeError) as exc:
        raise MetricError(f"Cannot read metric file {str(path)!r}: {exc}") from exc
    except RecursionError as exc:
        raise MetricError(
            f"Cannot read metric file {str(path)!r}: its YAML nests too deeply."
        ) from exc
    where = source or str(path)
    if not isinstance(spec, dict):
        raise MetricError(f"Metric file {where!r} must hold a mapping of fields.")
    unknown = sorted(set(spec) - _FIELDS)
    missing = sorted({"name", "version", "rubric", "system", "user"} - set(spec))
    problems = [f"unknown field {k!r}" for k in unknown] + [f"missing field {k!r}" for k in missing]
    rubric = spec.get("rubric") or {}
    max_score = rubric.get("max") if isinstance(rubric, dict) else None
    if "rubric" in spec and (
        not isinstance(max_score, int) or isinstance(max_score, bool) or max_score < 1
    ):
        problems.append("rubric.max must be an integer >= 1 (answers are 0..max)")
    signed = rubric.get("signed", False) if isinstance(rubric, dict) else False
    if not isinstance(signed, bool):
        problems.append("rubric.signed must be true or false")
    elif signed and isinstance(max_score, int) and max_score % 2:
        problems.append("a signed rubric needs an even rubric.max (max / 2 means no difference)")
    if problems:
        raise MetricError(
            f"Metric file {where!r}: {'; '.join(problems)}. Fields: {sorted(_FIELDS)}."
        )
    metric = Metric(
        name=str(spec["name"]),
        kind=str(spec.get("kind", "pairwise")),
        version=str(spec["version"]),
        max_score=int(cast(int, max_score)),
        labels={int(k): str(v) for k, v in (rubric.get("labels") or {}).items()},
        system=str(spec["system"]),
        user=str(spec["user"]),
        description=str(spec.get("description", "")).strip(),
        requires=tuple(spec.get("requires") or ()),
        source=where,
        signed=signed,
    )
    _ = metric.variables  # syntax errors surface now, not at the first pair
    return metric


def pairwise_metrics(metrics: str | Path | Metric | Sequence[str | Path | Metric]) -> list[Metric]:
    """Resolve metric names/paths/objects for a pairwise call; other kinds are refused."""
    items = [metrics] if isinstance(metrics, (str, Path, Metric)) else list(metrics)
    resolved = [get_metric(m) for m in items]
    if not resolved:
        raise MetricError("No metric given: pass e.g. metrics=['pairwise-bias'].")
    for metric in resolved:
        if metric.kind != "pairwise":
            raise MetricError(
                f"Metric {metric.name!r} is of kind {metric.kind!r}; a pairwise scoring call "
                "takes only pairwise metrics (symmetric divergences). Directional metrics such "
                "as regression (baseline vs candidate) belong in a separate call."
            )
    names = [m.name for m in resolved]
    if len(set(names)) != len(names):
        raise MetricError(f"Metric names must be unique in one call, got {names}.")
    return resolved
