"""The manifest's ``judge:`` key: ``heuristic`` or a mapping naming a model and how to reach it.

Checked with file and line like the rest of the block; a key or credential header written into
the manifest is refused (it would end up in version control).
"""

from __future__ import annotations

import json
import os
from typing import Any

from pairwise_polars._errors import OptionError
from pairwise_polars.engine._bounds import MAX_CONCURRENCY
from pairwise_polars.engine._prices import Price, as_price, load_prices
from pairwise_polars.engine._wire import TRANSPORTS
from pairwise_polars.judges._factory import HEURISTIC_NAMES, OPENAI_ONLY, PROVIDERS
from pairwise_polars.manifest._checks import Checker, at, describe, join
from pairwise_polars.manifest._model import JudgeSpec
from pairwise_polars.manifest._trust import key_env_problem
from pairwise_polars.manifest._yaml import Mapping, within_nodes

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
# Each number's bounds, as Checker.number takes them.
_NUMBERS: dict[str, dict[str, Any]] = {
    "max_concurrency": {"low": 1, "high": MAX_CONCURRENCY, "integer": True},
    "requests_per_minute": {"low": 0, "open_low": True},
    "tokens_per_minute": {"low": 0, "open_low": True},
    "max_retries": {"low": 0, "integer": True},
    "max_retry_wait": {"low": 0},
    "timeout": {"low": 0, "open_low": True},
    "connect_timeout": {"low": 0, "open_low": True},
    "max_response_bytes": {"low": 1024, "integer": True},
    "temperature": {"low": 0},
    "seed": {"integer": True},
    "max_tokens": {"low": 1, "integer": True},
}
_CREDENTIAL_HEADERS = ("authorization", "api-key", "x-api-key", "proxy-authorization")
_CREDENTIAL_FIELDS = frozenset(
    {"api_key", "apikey", "key", "authorization", "token", "access_token", "password", "secret"}
)
_API_KEY = (
    "an API key must never be written in the manifest (it would end up in version control); "
    "set the OPENAI_API_KEY environment variable, or name another variable with "
    "api_key_env: NAME"
)
EXTRA_BODY_NODES = 10_000


def check_judge(check: Checker, raw: Any, line: int, path: str, base: str = "") -> JudgeSpec | None:
    """The judge block as a JudgeSpec, or None after reporting its problems."""
    if raw in HEURISTIC_NAMES:
        return JudgeSpec(kind="heuristic")
    found = _judge_mapping(check, raw, line, path)
    if found is None:
        return None
    n_before = len(check.problems)
    model = check.string(*at(found, "model"), join(path, "model"))
    options = _connection(check, found, path)
    _provider(check, found, path, options)
    options.update(_request(check, found, path))
    prices = _prices(check, base, found, path, model)
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


def _judge_mapping(check: Checker, raw: Any, line: int, path: str) -> Mapping | None:
    if not isinstance(raw, Mapping):
        check.add(
            line,
            path,
            'expected "heuristic" or a mapping with a model (e.g. {model: '
            f"gpt-4o-mini, max_concurrency: 32}}), got {describe(raw)}",
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
    return found if found is not None and "model" in found else None


def _connection(check: Checker, found: Mapping, path: str) -> dict[str, Any]:
    """Where the judge lives and how hard to press it: URL, key variable, limits, transport."""
    options: dict[str, Any] = {}
    for key in ("base_url", "api_key_env"):
        if key in found:
            options[key] = check.string(*at(found, key), join(path, key))
    if options.get("api_key_env"):
        refused = key_env_problem(options["api_key_env"], check.allow_key_env)
        if refused:
            check.add(found.value_lines["api_key_env"], join(path, "api_key_env"), refused)
    for key, bounds in _NUMBERS.items():
        if key in found:
            value, where = at(found, key)
            options[key] = check.number(value, where, join(path, key), **bounds)
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
    return options


def _request(check: Checker, found: Mapping, path: str) -> dict[str, Any]:
    """What each request carries: output format, reasoning, batch, extra body, headers."""
    options: dict[str, Any] = {}
    for key in ("structured_output", "reasoning", "batch"):
        if key in found:
            options[key] = check.boolean(*at(found, key), join(path, key))
    for key in ("organization", "project"):
        if key in found:
            options[key] = check.string(*at(found, key), join(path, key))
    if "extra_body" in found:
        body = _extra_body(check, *at(found, "extra_body"), join(path, "extra_body"))
        if body is not None:
            options["extra_body"] = body
    if "default_headers" in found:
        options["default_headers"] = _headers(check, *at(found, "default_headers"), path)
    return options


def _extra_body(check: Checker, value: Any, where: int, path: str) -> dict[str, Any] | None:
    if not within_nodes(value, EXTRA_BODY_NODES):
        check.add(
            where,
            path,
            f"expected at most {EXTRA_BODY_NODES:,} values once YAML aliases are expanded "
            "(a request body's extra fields are a few settings); remove the aliases",
        )
    elif isinstance(value, Mapping) and all(isinstance(k, str) for k in value):
        secrets = [name for name in value if _is_credential_field(name)]
        for name in secrets:
            check.add(
                value.key_lines.get(name, where),
                join(path, name),
                "a credential must never be written in the manifest (it would end up in version "
                "control); the key comes from OPENAI_API_KEY or the variable api_key_env names",
            )
        return None if secrets else json.loads(json.dumps(value, default=str))
    else:
        check.add(
            where,
            path,
            "expected a mapping of request body fields (e.g. {reasoning_effort: low}), got "
            f"{describe(value)}",
        )
    return None


def _is_credential_field(name: str) -> bool:
    """Whether a request body field holds a credential (``api_key``, ``access_token``,
    ``password``, ...); ``max_tokens`` and the like do not."""
    field = name.lower().replace("-", "_")
    return field in _CREDENTIAL_FIELDS or field.endswith(("_api_key", "_secret", "_password"))


def _prices(
    check: Checker, base: str, found: Mapping, path: str, model: str | None
) -> dict[str, Price]:
    """``price_per_million`` for the judge's model, over the rows of a ``prices`` file."""
    prices: dict[str, Price] = {}
    if "price_per_million" in found and model is not None:
        price = _price(check, *at(found, "price_per_million"), join(path, "price_per_million"))
        if price is not None:
            prices[model] = price
    if "prices" in found:
        prices = {**_prices_file(check, base, *at(found, "prices"), join(path, "prices")), **prices}
    return prices


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
