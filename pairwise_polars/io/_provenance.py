"""Where a scored file came from: what the command that wrote it recorded (the data, the
strategy, the metrics, the judge, the time), so a report made later from the file can say so.

A scored parquet file written by the command line carries it as key-value metadata in its
footer (key ``pairwise_polars``, a JSON object); the parts of a chunked run have it in the run's
journal (``run.json``, beside the ``scored/`` folder).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from pairwise_polars.io._sources import Source

PROVENANCE_KEY = "pairwise_polars"
"""The key of the JSON provenance in a scored parquet file's footer."""


def provenance(source: Source) -> dict[str, Any]:
    """What the first file of ``source`` (or its run journal) recorded; ``{}`` when nothing."""
    if source.format != "parquet" or not source.files:
        return {}
    first = Path(source.files[0])
    try:
        metadata = pq.read_metadata(first).metadata or {}
        recorded = metadata.get(PROVENANCE_KEY.encode())
        if recorded:
            found = json.loads(recorded)
            return found if isinstance(found, dict) else {}
    except (OSError, ValueError):
        return {}
    journal = first.parent.parent / "run.json"
    if first.parent.name == "scored" and journal.is_file():
        return _from_journal(journal)
    return {}


def _from_journal(path: Path) -> dict[str, Any]:
    try:
        run = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    fingerprint = run.get("fingerprint") or {}
    judge = fingerprint.get("judge") or {}
    return {
        "data": run.get("source_paths") or [],
        "strategy": fingerprint.get("strategy"),
        "metrics": [m.get("name") for m in fingerprint.get("metrics") or []],
        "judge": judge.get("name"),
        "both_orders": fingerprint.get("both_orders"),
        "scored_at": run.get("finished_at") or run.get("updated_at"),
    }
