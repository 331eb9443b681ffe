"""The one judge factory: the judge a configuration names (the manifest's ``judge:`` block, the
CLI's ``--judge``), built the same way from both."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pairwise_polars._errors import OptionError
from pairwise_polars.judges._anthropic import AnthropicJudge
from pairwise_polars.judges._anthropic_batch import AnthropicBatchJudge
from pairwise_polars.judges._batch import OpenAIBatchJudge
from pairwise_polars.judges._openai import OpenAIJudge
from pairwise_polars.judges._protocol import Judge
from pairwise_polars.judges.heuristic import HeuristicJudge

PROVIDERS = ("openai", "anthropic")
"""The API families a model judge speaks: OpenAI-compatible chat completions (OpenAI, Azure,
vLLM, Ollama, llama.cpp, gateways) or Anthropic's Messages."""
OPENAI_ONLY = ("seed", "reasoning", "organization", "project", "score_from")
"""Settings of the OpenAI judges that Anthropic's API has no counterpart for."""
HEURISTIC_NAMES = ("heuristic", "offline")
"""The names that choose the heuristic judge (no key, no network) instead of a model."""
_CHAT_ONLY = (
    "max_concurrency",
    "requests_per_minute",
    "tokens_per_minute",
    "reask",
    "max_retry_wait",
    "transport",
)
_BATCH_ONLY = ("poll_interval", "max_poll_interval")
"""Settings only a Batch API judge has (how often it asks whether its batches are done)."""
_NOT_THIS_KIND = {
    True: "The Batch API judge has no {names}: batches are not sent request by request. Leave "
    "them out, or drop --batch / batch=True.",
    False: "The chat judge has no {names}: only a Batch API judge polls for its batches. Add "
    "--batch / batch=True, or leave them out.",
}
"""What a batch judge (True) or a chat judge (False) says of the other kind's settings."""
_JUDGES: dict[tuple[str, bool], Callable[..., Judge]] = {
    ("openai", False): OpenAIJudge,
    ("anthropic", False): AnthropicJudge,
    ("openai", True): OpenAIBatchJudge,
    ("anthropic", True): AnthropicBatchJudge,
}
"""The judge class of each (provider, batch)."""


def build_judge(
    model: str | None = None,
    *,
    provider: str = "openai",
    batch: bool = False,
    api_key: str | None = None,
    base_url: str | None = None,
    **settings: Any,
) -> Judge:
    """The heuristic judge for ``None``, ``"heuristic"`` or ``"offline"`` (its former name);
    else the ``provider``'s judge for ``model``: an :class:`OpenAIJudge` (``"openai"``) or an
    :class:`AnthropicJudge` (``"anthropic"``), their Batch API judges with ``batch=True``.
    ``settings`` are the judge's keywords; ``None`` values are left to the judge's defaults.

    >>> build_judge("gpt-4o-mini", api_key="sk-secret", max_concurrency=8)
    OpenAIJudge(model='gpt-4o-mini', base_url=None, api_key='***', max_concurrency=8)
    >>> build_judge("claude-haiku-4-5", provider="anthropic", api_key="sk-ant-secret")
    AnthropicJudge(model='claude-haiku-4-5', base_url=None, api_key='***', max_concurrency=32)
    """
    given = {name: value for name, value in settings.items() if value is not None}
    if model is None or model in HEURISTIC_NAMES:
        if given.get("score_from") == "logprobs":
            raise OptionError(
                "score_from='logprobs' needs a model judge that returns log-probabilities; "
                "the heuristic judge has none. Name a model (--judge MODEL) or leave it out."
            )
        return HeuristicJudge()
    if provider not in PROVIDERS:
        raise OptionError(
            f"Unknown judge provider {provider!r}: expected one of {', '.join(PROVIDERS)} "
            "('openai' for any OpenAI-compatible endpoint, 'anthropic' for the Messages API)."
        )
    openai_only = sorted(set(given) & set(OPENAI_ONLY))
    if provider == "anthropic" and openai_only:
        why = (
            " Anthropic's API returns no log-probabilities, so score_from='logprobs' cannot be "
            "read from it; use an OpenAI-compatible judge that returns them (OpenAI, vLLM)."
            if "score_from" in openai_only
            else ""
        )
        raise OptionError(
            f"The anthropic judge has no {', '.join(openai_only)} (OpenAI settings): leave "
            f"them out.{why}"
        )
    # The other kind's settings (a batch judge's on a chat judge, or the reverse) are refused.
    batched = bool(batch)
    other_kind = sorted(set(given) & set(_CHAT_ONLY if batched else _BATCH_ONLY))
    if other_kind:
        raise OptionError(_NOT_THIS_KIND[batched].format(names=", ".join(other_kind)))
    judge_class = _JUDGES[provider, batched]
    return judge_class(model, api_key=api_key, base_url=base_url, **given)
