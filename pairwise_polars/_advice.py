"""The command line's words for a fix. An error raised deep in the package names its fix as
settings (``error.fixes``, see :class:`~pairwise_polars._errors.Fix`) beside the message without
the Python-spelled advice (``error.detail``); here those settings become the flags a command
takes, or the keys of a manifest, so a CLI user is never told to pass a Python keyword."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pairwise_polars._errors import Fix

Dialect = Literal["cli", "manifest"]
"""Where the user sets things: flags (``cli``) or a manifest's keys (``manifest``)."""

_LIST = "`pairwise-polars pairs DATA --diagnostics FILE` lists them all"


def say(error: BaseException, dialect: Dialect) -> str:
    """The message of ``error`` with its fixes said the ``dialect``'s way (the message as is
    when it names no settings)."""
    detail = getattr(error, "detail", None)
    fixes: tuple[Fix, ...] = getattr(error, "fixes", ())
    if detail is None or not fixes:
        return str(error)
    advice = [text for text in (_advice(fix, dialect) for fix in fixes) if text]
    return ("\n" if "\n" in detail else " ").join([detail, *advice])


def _advice(fix: Fix, dialect: Dialect) -> str:
    speak = _SPOKEN.get(fix.action)
    return speak(dict(fix.settings), dialect == "manifest") if speak is not None else ""


def _columns(settings: dict[str, str], manifest: bool) -> str:
    if manifest:
        pairs = ", ".join(f"{field}: {value}" for field, value in settings.items())
        return f"Map your column names in the block's columns: {{{pairs}}}."
    flags = " ".join(f"--column {field}={value}" for field, value in settings.items())
    return f"Map your column names with {flags}."


def _cast(settings: dict[str, str], manifest: bool) -> str:
    return (
        f"Store column {settings.get('column')!r} as text in the data (cast it before "
        "writing the file)."
    )


def _skip_invalid(settings: dict[str, str], manifest: bool) -> str:
    skip = "set on_invalid: skip in the block" if manifest else "pass --on-invalid skip"
    return f"{_LIST}; fix the data, or {skip} to leave these groups out."


def _api_key(settings: dict[str, str], manifest: bool) -> str:
    env = settings.get("api_key", "OPENAI_API_KEY")
    url_env = "ANTHROPIC_BASE_URL" if env == "ANTHROPIC_API_KEY" else "OPENAI_BASE_URL"
    if manifest:
        return (
            f"Set the {env} environment variable before running (or name another "
            "variable with api_key_env: NAME in the judge block; the key never goes in the "
            "manifest). For a local server (vLLM, Ollama, llama.cpp) set base_url: URL in "
            f"the judge block (or the {url_env} environment variable); no key is "
            "needed then."
        )
    return (
        f"Set the {env} environment variable (or name another variable with "
        "--api-key-env NAME). For a local server (vLLM, Ollama, llama.cpp) pass --base-url "
        f"URL (or set {url_env}); no key is needed then."
    )


def _base_url(settings: dict[str, str], manifest: bool) -> str:
    where = "base_url: in the judge block" if manifest else "--base-url"
    env = settings.get("env", "OPENAI_BASE_URL")
    kept = (
        "nothing was cached (no cache in use)"
        if settings.get("cached") == "no"
        else ("results so far are cached")
    )
    return (
        f"Check that the server is running and that {where} (or {env}) names it, "
        f"host and port; {kept}."
    )


def _summary_columns(settings: dict[str, str], manifest: bool) -> str:
    if manifest:
        return (
            "Name existing columns in the block's slices: [...], and the group column in "
            "columns: {group_by: NAME} if yours differs."
        )
    return (
        "Pass --by with existing slice columns, and --group-by with the group column if "
        "yours differs."
    )


def _attribute_under_test(settings: dict[str, str], manifest: bool) -> str:
    metric = settings.get("metric", "pairwise-demographic-bias")
    where = "in the block's metrics" if manifest else "in a manifest's metrics"
    return (
        f"Fill the dimension column, or name the attribute {where}: {{metric: {metric}, "
        "params: {attribute_under_test: gender}}."
    )


_SPOKEN: dict[str, Callable[[dict[str, str], bool], str]] = {
    "columns": _columns,
    "cast": _cast,
    "skip_invalid": _skip_invalid,
    "list_invalid": lambda settings, manifest: f"{_LIST}.",
    "api_key": _api_key,
    "base_url": _base_url,
    "overwrite": lambda settings, manifest: (
        "Score into a new --run-dir, or pass --overwrite to discard the results there "
        "(judgements already paid for stay in the cache)."
    ),
    "cache": lambda settings, manifest: (
        "Run with --no-cache (or --cache OTHER.sqlite), or move the file away to start a "
        "new cache there; the file was not modified."
    ),
    "summary_columns": _summary_columns,
    "attribute_under_test": _attribute_under_test,
    "local_runner": lambda settings, manifest: (
        "Set runner: local in the block (the default), or drop the panel and repeats."
        if manifest
        else "Drop --runner ray, or the panel (several --judge) and --repeats."
    ),
    "chat_judge": lambda settings, manifest: (
        "Remove batch: true from the judge block to judge through the model's chat API."
        if manifest
        else "Drop --batch to judge through the model's chat API, or score in memory "
        "(-o FILE instead of --run-dir), where a Batch API judge takes part in a panel and "
        "repeats."
    ),
}
"""Each fix's words: its settings as a manifest's keys or as flags."""
