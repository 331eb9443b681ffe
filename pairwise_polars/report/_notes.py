"""Notes the report's header shows for a judge, by the ``judge_model`` of its results: what a
reader must know to read that judge's scores."""

from __future__ import annotations

from markupsafe import Markup

# The package's own text, so it may carry emphasis; notes given by callers are escaped.
HEURISTIC = Markup(
    "Scored by the <b>heuristic judge</b>, not by an LLM. It compares what each response "
    "<i>does</i>: whether it answers, hedges or refuses; the decision or stance it takes "
    "(approve or deny, agree or disagree); the amounts, ratings, percentages and durations it "
    "offers; and, as minor signals, warmth and length. It cannot see stereotypes, "
    "condescension, or unequal advice written without a decision word, a number or marked "
    "words, and it reads English only. Use an LLM judge for those."
)
JUDGE_NOTES: dict[str, str] = {
    "heuristic": HEURISTIC,
    "offline-heuristic": HEURISTIC,  # its name before version 2
}
"""``judge_model`` -> the note shown in the header of a report that has its scores."""
