"""Parts on disk that the journal does not list: adopted when their content checks out.

A runner writes a chunk's part, then records it in the journal. Killed between the two (on Ray
the workers write parts while the driver journals them, so a killed driver can leave several),
the part is whole but unlisted. Each part carries a stamp in its parquet footer: the run's
fingerprint digest, the chunk and its pairs. On resume an unlisted part is adopted when its
stamp is this run's, its chunk is the one its name says and it holds the rows the stamp says;
anything else (another run's part, a torn or foreign file) is removed and redone.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

PART_STAMP = "pairwise_polars.part"
"""The key of a part's stamp in its parquet footer."""


def fingerprint_stamp(fingerprint: dict[str, Any]) -> str:
    """A digest of the run's fingerprint: the same run, the same stamp."""
    text = json.dumps(fingerprint, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def part_metadata(stamp: str, index: int, n_pairs: int, rows: int) -> dict[str, str]:
    """The footer a part is written with."""
    return {PART_STAMP: json.dumps({"run": stamp, "chunk": index, "pairs": n_pairs, "rows": rows})}


def adopted_entry(path: Path, index: int, stamp: str) -> dict[str, Any] | None:
    """The journal entry of an unlisted part whose content checks out, else None."""
    try:
        metadata = pq.read_metadata(path)
        raw = (metadata.metadata or {}).get(PART_STAMP.encode())
        if raw is None:
            return None
        found = json.loads(raw)
        if found.get("run") != stamp or found.get("chunk") != index:
            return None
        if metadata.num_rows != found.get("rows"):
            return None
        counts = (
            pl.scan_parquet(path)
            .select(
                from_cache=pl.col("cached").sum(),
                errors=pl.col("error").is_not_null().sum(),
            )
            .collect()
            .row(0, named=True)
        )
    except (OSError, ValueError, pl.exceptions.PolarsError, pa.ArrowException):
        return None
    return {
        "pairs": int(found["pairs"]),
        "scored_rows": int(found["rows"]),
        "from_cache": int(counts["from_cache"]),
        "errors": int(counts["errors"]),
        "adopted": True,
    }

