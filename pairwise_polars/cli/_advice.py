"""The command line's words for a fix. An error raised deep in the package names its fix as
settings (``error.fixes``, see :class:`~pairwise_polars._errors.Fix`) beside the message without
the Python-spelled advice (``error.detail``); here those settings become the flags a command
takes, or the keys of a manifest, so a CLI user is never told to pass a Python keyword."""

from __future__ import annotations

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
    settings = dict(fix.settings)
    manifest = dialect == "manifest"
    if fix.action == "columns":
        if manifest:
            pairs = ", ".join(f"{field}: {value}" for field, value in settings.items())
            return f"Map your column names in the block's columns: {{{pairs}}}."
        flags = " ".join(f"--column {field}={value}" for field, value in settings.items())
        return f"Map your column names with {flags}."
    if fix.action == "cast":
        return (
            f"Store column {settings.get('column')!r} as text in the data (cast it before "
            "writing the file)."
        )
    if fix.action == "skip_invalid":
        skip = "set on_invalid: skip in the block" if manifest else "pass --on-invalid skip"
        return f"{_LIST}; fix the data, or {skip} to leave these groups out."
    if fix.action == "list_invalid":
        return f"{_LIST}."
    if fix.action == "api_key":
        if manifest:
            return (
                "Set the OPENAI_API_KEY environment variable before running (or name another "
                "variable with api_key_env: NAME in the judge block; the key never goes in the "
                "manifest). For a local server (vLLM, Ollama, llama.cpp) set base_url: URL in "
                "the judge block (or the OPENAI_BASE_URL environment variable); no key is "
                "needed then."
            )
        return (
            "Set the OPENAI_API_KEY environment variable (or name another variable with "
            "--api-key-env NAME). For a local server (vLLM, Ollama, llama.cpp) pass --base-url "
            "URL (or set OPENAI_BASE_URL); no key is needed then."
        )
    if fix.action == "base_url":
        where = "base_url: in the judge block" if manifest else "--base-url"
        kept = (
            "nothing was cached (no cache in use)"
            if fix.settings.get("cached") == "no"
            else ("results so far are cached")
        )
        return (
            f"Check that the server is running and that {where} (or OPENAI_BASE_URL) names it, "
            f"host and port; {kept}."
        )
    if fix.action == "overwrite":
        return (
            "Score into a new --run-dir, or pass --overwrite to discard the results there "
            "(judgements already paid for stay in the cache)."
        )
    if fix.action == "cache":
        return (
            "Run with --no-cache (or --cache OTHER.sqlite), or move the file away to start a "
            "new cache there; the file was not modified."
        )
    if fix.action == "summary_columns":
        if manifest:
            return (
                "Name existing columns in the block's slices: [...], and the group column in "
                "columns: {group_by: NAME} if yours differs."
            )
        return (
            "Pass --by with existing slice columns, and --group-by with the group column if "
            "yours differs."
        )
    if fix.action == "attribute_under_test":
        metric = settings.get("metric", "pairwise-demographic-bias")
        where = "in the block's metrics" if manifest else "in a manifest's metrics"
        return (
            f"Fill the dimension column, or name the attribute {where}: {{metric: {metric}, "
            "params: {attribute_under_test: gender}}."
        )
    return ""
