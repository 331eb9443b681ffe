"""One chunk, whichever runner scores it: its pairs checked against the plan, its scored frame
written as a part, and the counts the journal records for it."""

from __future__ import annotations

import warnings
from typing import Any

import polars as pl

from pairwise_polars._errors import EmptyDataWarning, RunStateError
from pairwise_polars.outcome._sided import with_sided_outcomes
from pairwise_polars.pairing import SKIP_REASON, PairingOptions, Strategy, form_pairs
from pairwise_polars.runs._journal import RunStore, part_footer, part_name

TEXT_COLUMNS = ("input_a", "input_b", "output_a", "output_b")
"""Left out of the scored parts unless ``keep_text=True``: the source holds them (join on
``id_a`` / ``id_b``), and writing them again would cost more than the pairing itself."""


def chunk_pairs(
    rows: pl.DataFrame, index: int, n_pairs: int, strategy: Strategy, pairing: PairingOptions
) -> pl.DataFrame:
    """The pairs of one chunk's rows; refused when they are not the pairs the plan counted."""
    if n_pairs == 0:  # the one empty chunk of a run without pairs: said once, when planned
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EmptyDataWarning)
            return form_pairs(rows, strategy, **pairing)
    pairs = form_pairs(rows, strategy, **pairing)
    if pairs.height != n_pairs:
        raise RunStateError(
            f"Chunk {index} has {pairs.height} pairs where the plan counted "
            f"{n_pairs}: the source changed while the run was going. Rerun once the files "
            "are final (finished chunks are kept if they still match)."
        )
    return pairs


def write_part(
    store: RunStore,
    index: int,
    n_pairs: int,
    scored: pl.DataFrame,
    *,
    keep_text: bool,
    run: str,
) -> tuple[pl.DataFrame, dict[str, Any]]:
    """Write a chunk's scored frame as its part; the frame written and the journal's entry
    (plus ``not_judged``: pairs that could not be judged, which the journal does not keep).
    The part's footer carries ``run`` (the run's digest), the chunk and the entry, so a resume
    can adopt a part whose journal entry a kill prevented."""
    # Outcomes of both sides, read while the texts are here: the run's disparities need them.
    scored = with_sided_outcomes(scored)
    if not keep_text:
        scored = scored.drop(TEXT_COLUMNS, strict=False)
    counts = scored.select(
        cached=pl.col("cached").sum(),
        errors=pl.col("error").is_not_null().sum(),
        not_judged=pl.col(SKIP_REASON).is_not_null().sum(),
    ).row(0, named=True)
    entry = {
        "pairs": n_pairs,
        "scored_rows": scored.height,
        "from_cache": counts["cached"],
        "errors": counts["errors"],
    }
    footer = part_footer(run, index, entry)
    store.write(part_name(index), lambda path: scored.write_parquet(path, metadata=footer))
    return scored, {**entry, "not_judged": counts["not_judged"]}
