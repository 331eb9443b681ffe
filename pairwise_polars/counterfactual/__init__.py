"""Counterfactual prompts: copies of each prompt that differ in one attribute of its subject.

``counterfactuals(prompts, dimensions)`` finds the terms of each dimension (pronouns, gendered
words, names, group words) with the shipped lexicons, or your own (``load_lexicon``), and returns
the grouped rows (``group_id``, ``role``, ``dimension``, ``attribute``, ``input``) that
``form_pairs`` takes, with an audit column of every substitution made.
``collect_responses(rows, target)`` then adds the system under test's ``output`` to each row,
through the judge's chat engine (an ``OpenAITarget``, or any ``Target``).
"""

from pairwise_polars.counterfactual._lexicon import Lexicon, LexiconSource, load_lexicon
from pairwise_polars.counterfactual._response_cache import ResponseCache
from pairwise_polars.counterfactual._responses import acollect_responses, collect_responses
from pairwise_polars.counterfactual._target import OpenAITarget, Target
from pairwise_polars.counterfactual._variants import CounterfactualReport, counterfactuals

__all__ = [
    "CounterfactualReport",
    "Lexicon",
    "LexiconSource",
    "OpenAITarget",
    "ResponseCache",
    "Target",
    "acollect_responses",
    "collect_responses",
    "counterfactuals",
    "load_lexicon",
]
