"""Counterfactual prompts: copies of each prompt that differ in one attribute of its subject.

``counterfactuals(prompts, dimensions)`` finds the terms of each dimension (pronouns, gendered
words, names, group words) with the shipped lexicons, or your own (``load_lexicon``), and returns
the grouped rows (``group_id``, ``role``, ``dimension``, ``attribute``, ``input``) that
``form_pairs`` takes, with an audit column of every substitution made.
"""

from pairwise_polars.counterfactual._lexicon import Lexicon, LexiconSource, load_lexicon
from pairwise_polars.counterfactual._variants import CounterfactualReport, counterfactuals

__all__ = ["CounterfactualReport", "Lexicon", "LexiconSource", "counterfactuals", "load_lexicon"]
