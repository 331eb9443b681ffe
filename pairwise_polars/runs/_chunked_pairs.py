"""A parquet run's pairs, chunk by chunk, as :func:`score_parquet` would score them: for a
caller that reads every pair once (a plan) without holding them all."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import polars as pl

from pairwise_polars.pairing import PairingOptions, Strategy
from pairwise_polars.runs._chunks import read_chunk
from pairwise_polars.runs._parquet_run import DEFAULT_CHUNK_SIZE, lay_out_source
from pairwise_polars.runs._parts import chunk_pairs

if TYPE_CHECKING:
    from typing_extensions import Unpack


def chunked_pairs(
    source: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    strategy: Strategy = "group",
    *,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    **pairing: Unpack[PairingOptions],
) -> Iterator[pl.DataFrame]:
    """Each chunk's pair frame, in the run's chunk order: the chunks ``score_parquet`` lays out
    from the key columns (a chunk never splits a group), read and paired one at a time, so at
    most one chunk's pairs and texts are held. Together they are the pairs of
    :func:`form_pairs` over the whole source (the same ids), in another row order. The source
    and the pairing options are checked before the first chunk is read."""
    # As the Ray runner lays it out (this is how a Ray target is planned): no scattered warning.
    found = lay_out_source(source, strategy, chunk_size, pairing, ray=True)
    for chunk in found.layout.chunks:
        rows = read_chunk(found.scan, chunk, found.group_by)
        yield chunk_pairs(rows, chunk.index, chunk.n_pairs, strategy, pairing)
