"""The manifest's schema: every key of a target's pairwise block, checked with file and line.

Nothing here reads the data: only the YAML, whether data and metric files exist, and the metric
files themselves (to learn their names and kinds).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import Any, cast

import yaml

from pairwise_polars._errors import OptionError
from pairwise_polars.engine._bounds import MAX_CONCURRENCY
from pairwise_polars.engine._prices import Price, as_price, load_prices
from pairwise_polars.engine._wire import TRANSPORTS
from pairwise_polars.judges._factory import HEURISTIC_NAMES, OPENAI_ONLY, PROVIDERS
from pairwise_polars.manifest._checks import Checker, at, describe, join, suggest
from pairwise_polars.manifest._data import check_data, check_storage_options
from pairwise_polars.manifest._gates import check_gates
from pairwise_polars.manifest._metrics import check_metrics
from pairwise_polars.manifest._model import (
    JudgeSpec,
    Manifest,
    MetricSpec,
    Problem,
    TargetSpec,
)
from pairwise_polars.manifest._panel import PANEL_KEYS, check_judges
from pairwise_polars.manifest._release import RELEASE_KEYS, check_release
from pairwise_polars.manifest._trust import key_env_problem
from pairwise_polars.manifest._yaml import Mapping, load_with_lines, within_nodes
from pairwise_polars.pairing._columns import Columns

BLOCK_KEYS = (
    "data",
    "storage_options",
    "strategy",
    "reference",
    "poles",
    "control",
    "columns",
    "on_invalid",
    "metrics",
    "judge",
    *PANEL_KEYS,
    "both_orders",
    "order",
    "audit",
    "slices",
    "equivalence_threshold",
    "divergence_threshold",
    "confidence",
    "cache",
    "runner",
    "labels",
    "gates",
    *RELEASE_KEYS,
)
_REQUIRED = {
    "data": "the file(s) of response rows (parquet, CSV, TSV, NDJSON): a path, a folder, a glob "
    "or a list, relative to the manifest"
}
JUDGE_KEYS = (
    "model",
    "provider",
    "batch",
    "base_url",
    "api_key_env",
    "max_concurrency",
    "requests_per_minute",
    "tokens_per_minute",
    "max_retries",
    "max_retry_wait",
    "timeout",
    "connect_timeout",
    "max_response_bytes",
    "transport",
    "temperature",
    "seed",
    "max_tokens",
    "structured_output",
    "reasoning",
    "extra_body",
    "organization",
    "project",
    "default_headers",
    "price_per_million",
    "prices",
    "score_from",
)
_CREDENTIAL_HEADERS = ("authorization", "api-key", "x-api-key", "proxy-authorization")
_API_KEY = (
    "an API key must never be written in the manifest (it would end up in version control); "
    "set the OPENAI_API_KEY environment variable, or name another variable with "
    "api_key_env: NAME"
)
EXTRA_BODY_NODES = 10_000
_TARGET_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


def validate(
    path: str | os.PathLike[str], *, allow_key_env: Iterable[str] = ()
) -> tuple[Manifest | None, list[Problem]]:
    """Parse and check a manifest; the manifest is None when there is any problem.
    ``allow_key_env``: variables the judge block's ``api_key_env`` may name besides the
    providers' own (see :func:`~pairwise_polars.manifest.key_env_problem`)."""
    file = os.fspath(path)
    check = Checker(file, allow_key_env=allow_key_env)
    try:
        text = Path(file).read_text(encoding="utf-8")
    except FileNotFoundError:
        check.add(1, "", "the manifest file does not exist")
        return None, check.problems
    except (OSError, UnicodeDecodeError) as exc:
        check.add(1, "", f"cannot read the manifest: {exc}")
        return None, check.problems
    try:
        document = load_with_lines(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else 1
        reason = getattr(exc, "problem", None) or str(exc)
        check.add(line, "", f"invalid YAML: {reason}")
        return None, check.problems
    except RecursionError:
        check.add(
            1,
            "",
            "the YAML nests too deeply to read (hundreds of levels of lists or mappings); a "
            "manifest needs a handful",
        )
        return None, check.problems
    base = os.path.dirname(file)
    top = check.mapping(
        document,
        1,
        "",
        allowed=("version", "targets"),
        required={"targets": "a mapping of target name -> pairwise block"},
    )
    if top is None:
        return None, check.problems
    version, line = at(top, "version")
    if "version" in top and version != 1:
        check.add(line, "version", f"only manifest version 1 exists, got {describe(version)}")
    targets: dict[str, TargetSpec] = {}
    raw_targets, line = at(top, "targets")
    if "targets" in top:
        found = check.mapping(raw_targets, line, "targets", allowed=list(raw_targets or ()))
        if found is not None and not found:
            check.add(
                line,
                "targets",
                "no target is defined; add one, e.g. targets: {demo: "
                "{pairwise: {data: runs.parquet}}}",
            )
        for name in found or ():
            target = _target(check, base, cast(Mapping, found), str(name))
            if target is not None:
                targets[str(name)] = target
    if check.problems:
        return None, sorted(check.problems, key=lambda p: p.line)
    return Manifest(path=file, targets=targets), []


def _target(check: Checker, base: str, targets: Mapping, name: str) -> TargetSpec | None:
    path = join("targets", name)
    raw, line = at(targets, name)
    if not _TARGET_NAME.match(name):
        check.add(
            targets.key_lines[name],
            path,
            "a target name may hold only letters, digits, '_', '-' and '.' (it names the "
            "output folder)",
        )
    target = check.mapping(
        raw,
        line,
        path,
        allowed=("description", "pairwise"),
        required={"pairwise": "the pairwise block: data, metrics, gates"},
    )
    if target is None:
        return None
    description, d_line = at(target, "description")
    if "description" in target:
        description = check.string(description, d_line, join(path, "description"))
    block, b_line = at(target, "pairwise")
    if "pairwise" not in target:
        return None
    n_before = len(check.problems)
    spec = _block(check, base, block, b_line, join(path, "pairwise"))
    if spec is None or len(check.problems) > n_before:
        return None
    return TargetSpec(name=name, description=description or "", **spec)


def _block(check: Checker, base: str, raw: Any, line: int, path: str) -> dict[str, Any] | None:
    block = check.mapping(raw, line, path, allowed=BLOCK_KEYS, required=_REQUIRED)
    if block is None:
        return None
    spec: dict[str, Any] = {}

    def value(key: str) -> tuple[Any, int, str]:
        got, where = at(block, key)
        return got, where, join(path, key)

    if "data" in block:
        spec["data"] = check_data(check, base, *value("data"))
    if "storage_options" in block:
        spec["storage_options"] = check_storage_options(check, *value("storage_options"))
    spec.update(_strategy(check, block, path))
    if "columns" in block:
        spec["columns"] = _columns(check, *value("columns"))
    if "on_invalid" in block:
        got, where, key = value("on_invalid")
        if got not in ("raise", "skip"):
            hint = suggest(str(got), ("raise", "skip")) if isinstance(got, str) else ""
            check.add(where, key, f"expected raise or skip, got {describe(got)}{hint}")
        spec["on_invalid"] = got
    metrics = check_metrics(check, base, *value("metrics")) if "metrics" in block else None
    if metrics is None and "metrics" not in block:
        metrics = [MetricSpec(name="pairwise-bias", source="pairwise-bias")]
    spec["metrics"] = tuple(metrics or ())
    spec.update(check_judges(check, block, path, partial(_judge, base=base)))  # one, or a panel
    for key in ("both_orders",):
        if key in block:
            spec[key] = check.boolean(*value(key))
    if "order" in block:
        got, where, key = value("order")
        if got not in ("random", "fixed"):
            hint = suggest(str(got), ("random", "fixed")) if isinstance(got, str) else ""
            check.add(where, key, f"expected random or fixed, got {describe(got)}{hint}")
        spec["order"] = got
    if "audit" in block:  # the masked audit: null (none) or mask
        got, where, key = value("audit")
        if got is not None and got != "mask":
            check.add(where, key, f"expected mask (or null for none), got {describe(got)}")
        spec["audit"] = got
    if "slices" in block:
        slices = check.strings(*value("slices"), allow_empty=True)
        spec["slices"] = tuple(slices or ())
    for key in ("equivalence_threshold", "divergence_threshold"):
        if key in block:
            spec[key] = check.number(*value(key), low=0, high=1)
    if "confidence" in block:
        spec["confidence"] = check.number(
            *value("confidence"), low=0, high=1, open_low=True, open_high=True
        )
    low, high = spec.get("equivalence_threshold", 0.0), spec.get("divergence_threshold", 0.5)
    if low is not None and high is not None and low >= high:
        where = block.value_lines.get(
            "equivalence_threshold", block.value_lines.get("divergence_threshold", block.line)
        )
        check.add(
            where,
            join(path, "equivalence_threshold"),
            f"equivalence_threshold ({low}) must be below divergence_threshold ({high}): "
            "a score cannot be both equivalent and divergent",
        )
    if "cache" in block:
        spec["cache"] = _cache(check, base, *value("cache"))
    if "runner" in block:
        got, where, key = value("runner")
        if got not in ("local", "ray"):
            hint = suggest(str(got), ("local", "ray")) if isinstance(got, str) else ""
            check.add(where, key, f"expected local or ray, got {describe(got)}{hint}")
        spec["runner"] = got
    spec.update(check_release(check, base, block, path))
    if "labels" in block:
        spec["labels"] = _labels(check, base, *value("labels"))
    if "gates" in block:
        names = [m.name for m in metrics or ()]
        slices = spec.get("slices", ("dimension",))
        family = spec.get("familywise")
        spec["gates"] = check_gates(check, *value("gates"), names=names, slices=slices,
                                    family=family)  # fmt: skip
    return spec


def _labels(check: Checker, base: str, raw: Any, line: int, path: str) -> str | None:
    """The file of human labels (a CSV or parquet file, relative to the manifest)."""
    if not isinstance(raw, str) or not raw:
        check.add(line, path, f"expected the path of a file of labels, got {describe(raw)}")
        return None
    full = os.path.join(base, raw)
    if not Path(full).is_file():
        check.add(
            line, path, f"labels file {full!r} does not exist (paths are relative to the "
            "manifest's folder; sample_for_labelling writes one to fill in)",
        )  # fmt: skip
    return full


def _strategy(check: Checker, block: Mapping, path: str) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    strategy, line = at(block, "strategy")
    if "strategy" in block:
        if strategy not in ("group", "contrastive"):
            hint = (
                suggest(str(strategy), ("group", "contrastive"))
                if isinstance(strategy, str)
                else ""
            )
            check.add(
                line,
                join(path, "strategy"),
                f"expected group or contrastive, got {describe(strategy)}{hint}",
            )
            strategy = None
        spec["strategy"] = strategy
    else:
        strategy = "group"
    reference, line = at(block, "reference")
    if "reference" in block:
        if strategy == "contrastive":
            check.add(
                block.key_lines["reference"],
                join(path, "reference"),
                "reference applies to strategy group; a contrastive block names its two "
                "roles with poles: [pole_a, pole_b]",
            )
        spec["reference"] = check.string(reference, line, join(path, "reference"))
    poles, line = at(block, "poles")
    if "poles" in block:
        if strategy == "group":
            check.add(
                block.key_lines["poles"],
                join(path, "poles"),
                "poles apply to strategy contrastive; a group block names its reference "
                "role with reference: NAME (or set strategy: contrastive)",
            )
        found = check.strings(poles, line, join(path, "poles"))
        if found is not None and len(found) != 2:
            check.add(
                line, join(path, "poles"), f"expected two different role values, got {len(found)}"
            )
        spec["poles"] = tuple(found) if found else None
    control, line = at(block, "control")
    if "control" in block:
        role = check.string(control, line, join(path, "control"))
        taken = (
            [spec.get("reference") or "reference"]
            if strategy != "contrastive"
            else list(spec.get("poles") or ("pole_a", "pole_b"))
        )
        if role is not None and role in taken:
            check.add(
                line,
                join(path, "control"),
                f"{role!r} is also a role that forms pairs; a control row (a second answer to "
                "the reference's input) needs a role of its own, e.g. control: control",
            )
            role = None
        spec["control"] = role
    return spec


def _columns(check: Checker, raw: Any, line: int, path: str) -> Columns | None:
    fields = list(Columns.__dataclass_fields__)
    found = check.mapping(raw, line, path, allowed=fields)
    if found is None:
        return None
    names = {}
    for key in found:
        if key in fields:
            value, where = at(found, key)
            names[key] = check.string(value, where, join(path, key))
    if any(v is None for v in names.values()):
        return None
    return Columns(**names)


def _judge(check: Checker, raw: Any, line: int, path: str, base: str = "") -> JudgeSpec | None:
    if raw in HEURISTIC_NAMES:
        return JudgeSpec(kind="heuristic")
    if not isinstance(raw, Mapping):
        got = describe(raw)
        check.add(
            line,
            path,
            'expected "heuristic" or a mapping with a model (e.g. {model: '
            f"gpt-4o-mini, max_concurrency: 32}}), got {got}",
        )
        return None
    found = check.mapping(
        raw,
        line,
        path,
        allowed=JUDGE_KEYS,
        required={"model": "the judge model's name"},
        hints={"api_key": _API_KEY},
    )
    if found is None or "model" not in found:
        return None
    options: dict[str, Any] = {}
    n_before = len(check.problems)

    def read(key: str, **bounds: Any) -> None:
        if key in found:
            value, where = at(found, key)
            options[key] = check.number(value, where, join(path, key), **bounds)

    model = check.string(*at(found, "model"), join(path, "model"))
    for key in ("base_url", "api_key_env"):
        if key in found:
            options[key] = check.string(*at(found, key), join(path, key))
    if options.get("api_key_env"):
        refused = key_env_problem(options["api_key_env"], check.allow_key_env)
        if refused:
            check.add(found.value_lines["api_key_env"], join(path, "api_key_env"), refused)
    read("max_concurrency", low=1, high=MAX_CONCURRENCY, integer=True)
    read("requests_per_minute", low=0, open_low=True)
    read("tokens_per_minute", low=0, open_low=True)
    read("max_retries", low=0, integer=True)
    read("max_retry_wait", low=0)
    read("timeout", low=0, open_low=True)
    read("connect_timeout", low=0, open_low=True)
    read("max_response_bytes", low=1024, integer=True)
    read("temperature", low=0)
    read("seed", integer=True)
    read("max_tokens", low=1, integer=True)
    if "transport" in found:
        value, where = at(found, "transport")
        if value in TRANSPORTS:
            options["transport"] = value
        else:
            check.add(
                where,
                join(path, "transport"),
                f"expected one of {', '.join(TRANSPORTS)} (fast: aiohttp directly, the default; "
                f"sdk: through the openai SDK), got {describe(value)}",
            )
    _provider(check, found, path, options)
    for key in ("structured_output", "reasoning", "batch"):
        if key in found:
            options[key] = check.boolean(*at(found, key), join(path, key))
    for key in ("organization", "project"):
        if key in found:
            options[key] = check.string(*at(found, key), join(path, key))
    if "extra_body" in found:
        value, where = at(found, "extra_body")
        if not within_nodes(value, EXTRA_BODY_NODES):
            check.add(
                where,
                join(path, "extra_body"),
                f"expected at most {EXTRA_BODY_NODES:,} values once YAML aliases are expanded "
                "(a request body's extra fields are a few settings); remove the aliases",
            )
        elif isinstance(value, Mapping) and all(isinstance(k, str) for k in value):
            options["extra_body"] = json.loads(json.dumps(value, default=str))
        else:
            check.add(
                where,
                join(path, "extra_body"),
                "expected a mapping of request body fields (e.g. {reasoning_effort: low}), got "
                f"{describe(value)}",
            )
    if "default_headers" in found:
        options["default_headers"] = _headers(check, *at(found, "default_headers"), path)
    prices: dict[str, Price] = {}
    if "price_per_million" in found and model is not None:
        price = _price(check, *at(found, "price_per_million"), join(path, "price_per_million"))
        if price is not None:
            prices[model] = price
    if "prices" in found:
        prices = {**_prices_file(check, base, *at(found, "prices"), join(path, "prices")), **prices}
    if len(check.problems) > n_before:
        return None
    api_key_env = options.pop("api_key_env", None)
    where = f"{check.file}:{found.value_lines.get('api_key_env', line)}: {path}.api_key_env"
    return JudgeSpec(
        kind="openai",
        model=model,
        api_key_env=api_key_env,
        options=options,
        prices=prices,
        where=where,
    )


def _provider(check: Checker, found: Any, path: str, options: dict[str, Any]) -> None:
    """``provider``: openai (the default) or anthropic, whose judge has no OpenAI-only keys;
    and ``score_from``: answer or logprobs."""
    if "score_from" in found:
        value, where = at(found, "score_from")
        if value in ("answer", "logprobs"):
            options["score_from"] = value
        else:
            check.add(where, join(path, "score_from"), "expected answer (the written score) or "
                      f"logprobs (the rubric's expectation), got {describe(value)}")  # fmt: skip
    if "provider" not in found:
        return
    value, where = at(found, "provider")
    if value not in PROVIDERS:
        check.add(
            where,
            join(path, "provider"),
            f"expected one of {', '.join(PROVIDERS)} (openai: any OpenAI-compatible endpoint; "
            f"anthropic: the Messages API), got {describe(value)}",
        )
        return
    options["provider"] = value
    if value == "anthropic":
        for key in (k for k in OPENAI_ONLY if k in found):
            check.add(
                found.value_lines.get(key, where),
                join(path, key),
                f"{key} is an OpenAI setting; the anthropic judge has none: leave it out",
            )


def _prices_file(check: Checker, base: str, raw: Any, line: int, path: str) -> dict[str, Price]:
    """``prices: FILE``: a prices file (the shipped file's columns), relative to the manifest."""
    if not isinstance(raw, str) or not raw:
        check.add(line, path, f"expected the path of a prices file (CSV), got {describe(raw)}")
        return {}
    try:
        return load_prices(os.path.join(base, raw))
    except OptionError as exc:
        check.add(line, path, str(exc))
        return {}


def _price(check: Checker, raw: Any, line: int, path: str) -> Price | None:
    value: Any = raw
    if isinstance(raw, Mapping) and set(raw) <= {"input", "cached_input", "output"}:
        value = [raw.get("input"), raw.get("cached_input"), raw.get("output")]
        value = value if value[1] is not None else [value[0], value[2]]
    try:
        return as_price(value, name="price_per_million")
    except OptionError:
        check.add(
            line,
            path,
            "expected US dollars per million tokens: [input, output], [input, cached_input, "
            f"output] or {{input: X, cached_input: Y, output: Z}}, got {describe(raw)}",
        )
        return None


def _headers(check: Checker, raw: Any, line: int, path: str) -> dict[str, str] | None:
    where = join(path, "default_headers")
    if not isinstance(raw, Mapping):
        check.add(
            line,
            where,
            f"expected a mapping of header names to text (e.g. {{X-Team: fairness}}), got "
            f"{describe(raw)}",
        )
        return None
    headers: dict[str, str] = {}
    for name, value in raw.items():
        key_line = raw.key_lines.get(name, line)
        if not isinstance(name, str) or not isinstance(value, str):
            check.add(key_line, join(where, name), f"expected text, got {describe(value)}")
        elif name.lower() in _CREDENTIAL_HEADERS:
            check.add(
                key_line,
                join(where, name),
                "a credential header must never be written in the manifest (it would end up in "
                "version control); the key comes from OPENAI_API_KEY or the variable "
                "api_key_env names",
            )
        else:
            headers[name] = value
    return headers if len(headers) == len(raw) else None


def _cache(check: Checker, base: str, raw: Any, line: int, path: str) -> bool | str | None:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip():
        return os.path.join(base, raw)
    check.add(
        line,
        path,
        "expected true, false or the path of a cache file (relative to the "
        f"manifest), got {describe(raw)}",
    )
    return None
