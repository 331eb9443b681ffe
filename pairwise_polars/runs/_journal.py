"""The run journal (``run.json``): what a run is, and which chunks are done.

Every write replaces the journal in one step (a local ``os.replace``, or one upload to an
object store: see ``_store.py``), after the chunk's part has been written the same way. Killed
at any moment, a destination holds the journal before or after a chunk, never half of one. A
part the journal does not list yet (written just before a kill; on Ray, where workers write
parts and the driver journals them as their results arrive, several can be) is adopted on
resume when its footer says it is this run's part of that chunk, whole (see :func:`adoptable`);
any other unlisted part is removed and redone (its paid judgements come back from the cache).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl

from pairwise_polars._errors import Fix, RunStateError
from pairwise_polars.runs._store import LOCK_NAME, LocalStore, ObjectStore

RunStore = LocalStore | ObjectStore

JOURNAL = "run.json"
SUMMARY = "summary.parquet"
SCORED = "scored"
LOCK = LOCK_NAME
FORMAT = "pairwise-polars/offline-run"
FORMAT_VERSION = 1
_OVERWRITE = Fix("overwrite", {"overwrite": "True"})
PAIRING_DEFAULTS: dict[str, Any] = {
    "reference": "reference",
    "poles": ["pole_a", "pole_b"],
    "control": "control",
    "on_invalid": "raise",
}
"""What a journal that recorded only the pairing options given (before resolved values were
recorded) left out; filled in when it is compared."""


PART_METADATA = "pairwise_polars.part"
"""The key of a part's footer entry: its run, its chunk and its journal entry (JSON)."""


def part_name(index: int) -> str:
    return f"{SCORED}/part-{index:06d}.parquet"


def run_digest(fingerprint: dict[str, Any]) -> str:
    """A short digest of what the run is (source, pairs, options): written into each part, so
    a part found without its journal entry can be told to belong to this run."""
    return hashlib.sha256(_canonical(fingerprint).encode()).hexdigest()[:32]


def part_footer(digest: str, index: int, entry: dict[str, Any]) -> dict[str, str]:
    """The footer entry a part is written with (see :func:`adoptable`)."""
    return {PART_METADATA: json.dumps({"run": digest, "chunk": index, "entry": entry})}


def adoptable(store: RunStore, name: str, digest: str) -> tuple[int, dict[str, Any]] | None:
    """The chunk and journal entry of an unlisted part whose content checks out: its footer
    names this run and the chunk its name says, and it holds the rows it was written with
    (a part is uploaded or renamed whole, so a readable footer means a whole file). None for
    anything else (a part of another run, an older part without a footer, a broken file)."""
    stem = Path(name).name
    if not (stem.startswith("part-") and stem.endswith(".parquet")):
        return None
    try:
        index = int(stem[len("part-") : -len(".parquet")])
        found = json.loads(store.part_metadata(name).get(PART_METADATA, "null"))
        entry = found["entry"]
        if found["run"] != digest or found["chunk"] != index:
            return None
        if store.parquet_rows(name) != entry["scored_rows"]:
            return None
    except (ValueError, TypeError, KeyError, AttributeError):
        return None
    return index, {"part": part_name(index), **entry, "adopted": True}


class Journal:
    """The journal of one destination. ``chunks`` maps a chunk index to what its part holds."""

    def __init__(
        self, store: RunStore, fingerprint: dict[str, Any], n_chunks: int, info: dict[str, Any]
    ) -> None:
        self.store = store
        self.destination: Path | str = store.path if isinstance(store, LocalStore) else store.uri
        self.fingerprint = fingerprint
        self.digest = run_digest(fingerprint)
        self.n_chunks = n_chunks
        self.info = info
        self.chunks: dict[int, dict[str, Any]] = {}
        self.started_at = _now()
        self.finished_at: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "fingerprint": self.fingerprint,
            **self.info,
            "n_chunks": self.n_chunks,
            "chunks": {str(i): self.chunks[i] for i in sorted(self.chunks)},
            "started_at": self.started_at,
            "updated_at": _now(),
            "finished_at": self.finished_at,
            "summary": SUMMARY if self.finished_at else None,
        }

    def save(self) -> None:
        text = json.dumps(self.to_json(), indent=1, default=str)
        self.store.write(JOURNAL, lambda tmp: tmp.write_text(text, encoding="utf-8"))

    def mark_done(self, index: int, entry: dict[str, Any]) -> None:
        self.chunks[index] = {"part": part_name(index), **entry, "finished_at": _now()}
        self.finished_at = None
        self.save()

    def mark_finished(self) -> None:
        self.finished_at = _now()
        self.save()

    def parts(self) -> list[str]:
        """Where every finished part is (paths, or object URIs)."""
        return [self.store.url(part_name(i)) for i in sorted(self.chunks)]

    def scan_parts(self) -> pl.LazyFrame:
        """Every finished part, read lazily from wherever the run is."""
        return self.store.scan_names([part_name(i) for i in sorted(self.chunks)])


def open_journal(
    store: RunStore,
    fingerprint: dict[str, Any],
    n_chunks: int,
    info: dict[str, Any],
    *,
    overwrite: bool,
) -> Journal:
    """Start or resume the run in ``store``; refuse one that holds a different run."""
    journal = Journal(store, fingerprint, n_chunks, info)
    destination = store.where
    if overwrite:
        _discard(store)
    elif store.exists(JOURNAL):
        old = _read(store)
        differences = _differences(_upgrade(old.get("fingerprint", {})), fingerprint)
        if differences and _holds_nothing(store, old):
            _discard(store)  # e.g. a first attempt stopped by a missing key: nothing to keep
        elif differences:
            detail = f"The destination {destination!r} holds another run: " + "; ".join(differences)
            raise RunStateError(
                f"{detail}. Score into a new destination, or pass overwrite=True to discard the "
                "results there (judgements already paid for stay in the cache).",
                detail=detail + ".",
                fixes=[_OVERWRITE],
            )
        else:
            journal.started_at = old.get("started_at", journal.started_at)
            for key, entry in old.get("chunks", {}).items():
                rows = entry.get("scored_rows")
                if rows is not None and store.parquet_rows(entry.get("part", "")) == rows:
                    journal.chunks[int(key)] = entry
    elif store.exists(SCORED) or store.names(f"{SCORED}/") or store.exists(SUMMARY):
        detail = (
            f"The destination {destination!r} holds scored parts or a summary but no "
            f"{JOURNAL}, so it cannot be resumed safely."
        )
        raise RunStateError(
            f"{detail} Pass overwrite=True to replace them, or score into a new destination.",
            detail=detail,
            fixes=[_OVERWRITE],
        )
    store.prepare()
    listed = {part_name(i) for i in journal.chunks}
    for name in store.names(f"{SCORED}/"):  # a part written just before a kill, or temp files
        if name in listed or not Path(name).name.startswith(("part-", ".part-")):
            continue
        adopted = None if overwrite else adoptable(store, name, journal.digest)
        if adopted is not None and adopted[0] < n_chunks:
            journal.chunks[adopted[0]] = adopted[1]
        else:
            store.delete(name)
    for name in store.names():
        if Path(name).name.startswith(".") and ".tmp-" in name:
            store.delete(name)
    store.delete(SUMMARY)  # the summary is rewritten at the end from the parts
    journal.save()
    return journal


@contextlib.contextmanager
def locked(store: RunStore) -> Iterator[None]:
    """Hold the run's lock: two processes must not write one run (see the stores)."""
    with store.locked():
        yield


def _discard(store: RunStore) -> None:
    """Remove this package's files only: the user's other files in the folder stay."""
    for name in (JOURNAL, SUMMARY):
        store.delete(name)
    for name in store.names(f"{SCORED}/"):
        if Path(name).name.startswith(("part-", ".part-")):
            store.delete(name)


def _holds_nothing(store: RunStore, old: dict[str, Any]) -> bool:
    """Whether a journal's run finished no chunk and left no part: another run may take the
    destination without ``overwrite`` (what it was would be redone, from the cache)."""
    parts = [n for n in store.names(f"{SCORED}/") if Path(n).name.startswith("part-")]
    return not old.get("chunks") and not old.get("finished_at") and not parts


def _read(store: RunStore) -> dict[str, Any]:
    path = store.url(JOURNAL)
    try:
        data = json.loads(store.read_text(JOURNAL))
    except (OSError, ValueError) as exc:
        detail = f"Cannot read the run journal {str(path)!r} ({exc})."
        raise RunStateError(
            f"{detail} Pass overwrite=True to start the run again (paid judgements stay in the "
            "cache).",
            detail=detail,
            fixes=[_OVERWRITE],
        ) from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        detail = f"{str(path)!r} is not a pairwise_polars run journal."
        raise RunStateError(
            f"{detail} Score into another destination, or pass overwrite=True to replace it.",
            detail=detail,
            fixes=[_OVERWRITE],
        )
    if data.get("format_version") != FORMAT_VERSION:
        detail = (
            f"The run journal {str(path)!r} has format version {data.get('format_version')}, "
            f"this package writes {FORMAT_VERSION}."
        )
        raise RunStateError(
            f"{detail} Pass overwrite=True to start the run again.",
            detail=detail,
            fixes=[_OVERWRITE],
        )
    return data


_LABELS = {
    "source": "the source files changed (size or modification time)",
    "pairs": "the pairs differ",
    "strategy": "the strategy differs",
    "pairing": "the pairing options differ",
    "metrics": "the metrics differ",
    "judge": "the judge differs",
    "both_orders": "both_orders differs",
    "order": "the order (random or fixed) differs",
    "chunk_size": "chunk_size differs",
    "keep_text": "keep_text differs",
}


def _differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    found = []
    for key in sorted(
        set(old) | set(new), key=lambda k: list(_LABELS).index(k) if k in _LABELS else len(_LABELS)
    ):
        before, after = old.get(key), new.get(key)
        if _canonical(before) == _canonical(after):
            continue
        label = _LABELS.get(key, f"{key} differs")
        if key == "source":
            found.append(label)
            continue
        changed = _changes(before, after, "")
        if changed == [""]:
            found.append(f"{label} (was {_short(before)}, now {_short(after)})")
        else:
            found.append(f"{label} ({'; '.join(changed)})")
    return found


def _changes(before: Any, after: Any, path: str) -> list[str]:
    """Where two recorded values differ, down to the leaves: ``judge.identity.temperature:
    was 0, now 0.7``, so the message names the option that differs however deep it lies (a
    list of metrics is indexed by their names). ``[""]`` when the values themselves differ."""
    if _canonical(before) == _canonical(after):
        return []
    if isinstance(before, dict) and isinstance(after, dict):
        return [
            change
            for name in sorted(set(before) | set(after))
            for change in _changes(before.get(name), after.get(name), _join(path, str(name)))
        ]
    if isinstance(before, list) and isinstance(after, list):
        names = [_name(item, i) for i, item in enumerate(before)]
        if names == [_name(item, i) for i, item in enumerate(after)]:
            return [
                change
                for name, b, a in zip(names, before, after, strict=True)
                for change in _changes(b, a, f"{path}[{name}]")
            ]
        if all(isinstance(item, dict) and "name" in item for item in (*before, *after)):
            was = ", ".join(str(item["name"]) for item in before) or "none"
            now = ", ".join(str(item["name"]) for item in after) or "none"
            return [f"{path or 'names'}: was {was}, now {now}"]
    if not path:
        return [""]
    return [f"{path}: was {_short(before)}, now {_short(after)}"]


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _name(item: Any, index: int) -> str:
    return str(item["name"]) if isinstance(item, dict) and "name" in item else str(index)


def _upgrade(fingerprint: dict[str, Any]) -> dict[str, Any]:
    """A recorded fingerprint with the pairing defaults an older journal left out filled in, so
    an equal run compares equal."""
    pairing = fingerprint.get("pairing")
    if not isinstance(pairing, dict):
        return fingerprint
    strategy = fingerprint.get("strategy", "group")
    filled = dict(pairing)
    for key in ("group_by", "role", "dimension", "attribute", "input", "output", "id"):
        filled.setdefault(key, "group_id" if key == "group_by" else key)
    relevant = ("reference",) if strategy == "group" else ("poles",)
    for key in relevant:
        filled.setdefault(key, PAIRING_DEFAULTS[key])
    filled.setdefault("on_invalid", PAIRING_DEFAULTS["on_invalid"])
    filled.setdefault("control", PAIRING_DEFAULTS["control"])
    if strategy == "group":
        filled.pop("poles", None)
    else:
        filled.pop("reference", None)
    return {**fingerprint, "pairing": dict(sorted(filled.items()))}


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= 120 else text[:117] + "..."


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
