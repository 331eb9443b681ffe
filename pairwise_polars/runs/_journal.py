"""The run journal (``run.json``): what a run is, and which chunks are done.

Every write goes to a temporary file that replaces the journal in one ``os.replace``, after the
chunk's part has been replaced the same way. Killed at any moment, a destination holds the
journal before or after a chunk, never half of one: a part the journal does not list is
removed and redone on resume (its paid judgements come back from the cache).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from pairwise_polars._errors import Fix, OutputError, RunStateError
from pairwise_polars.io import output_error

JOURNAL = "run.json"
SUMMARY = "summary.parquet"
SCORED = "scored"
LOCK = ".run.lock"
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


def part_name(index: int) -> str:
    return f"{SCORED}/part-{index:06d}.parquet"


def write_atomically(path: Path, write: Any) -> None:
    """``write(tmp_path)``, flush it to disk, then replace ``path`` in one step."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        write(tmp)
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
        _fsync_dir(path.parent)
    except OutputError:
        raise
    except Exception as exc:
        error = output_error(exc, path, "the run's file")
        if error.errno is None and not isinstance(exc, OSError):
            raise
        raise OutputError(
            f"{error} The run in {str(path.parent)!r} stopped there: free space (or fix the "
            "folder) and run the same call again; finished chunks are kept and paid judgements "
            "come from the cache."
        ) from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _fsync_dir(directory: Path) -> None:
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Journal:
    """The journal of one destination. ``chunks`` maps a chunk index to what its part holds."""

    def __init__(
        self, destination: Path, fingerprint: dict[str, Any], n_chunks: int, info: dict[str, Any]
    ) -> None:
        self.destination = destination
        self.fingerprint = fingerprint
        self.n_chunks = n_chunks
        self.info = info
        self.chunks: dict[int, dict[str, Any]] = {}
        self.started_at = _now()
        self.finished_at: str | None = None

    @property
    def path(self) -> Path:
        return self.destination / JOURNAL

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
        write_atomically(self.path, lambda tmp: tmp.write_text(text, encoding="utf-8"))

    def mark_done(self, index: int, entry: dict[str, Any]) -> None:
        self.chunks[index] = {"part": part_name(index), **entry, "finished_at": _now()}
        self.finished_at = None
        self.save()

    def mark_finished(self) -> None:
        self.finished_at = _now()
        self.save()

    def parts(self) -> list[Path]:
        return [self.destination / part_name(i) for i in sorted(self.chunks)]


def open_journal(
    destination: Path,
    fingerprint: dict[str, Any],
    n_chunks: int,
    info: dict[str, Any],
    *,
    overwrite: bool,
) -> Journal:
    """Start or resume the run in ``destination``; refuse one that holds a different run."""
    journal = Journal(destination, fingerprint, n_chunks, info)
    scored = destination / SCORED
    if overwrite:
        _discard(destination)
    elif journal.path.exists():
        old = _read(journal.path)
        differences = _differences(_upgrade(old.get("fingerprint", {})), fingerprint)
        if differences:
            detail = f"The destination {str(destination)!r} holds another run: " + "; ".join(
                differences
            )
            raise RunStateError(
                f"{detail}. Score into a new destination, or pass overwrite=True to discard the "
                "results there (judgements already paid for stay in the cache).",
                detail=detail + ".",
                fixes=[_OVERWRITE],
            )
        journal.started_at = old.get("started_at", journal.started_at)
        for key, entry in old.get("chunks", {}).items():
            if _part_is_whole(destination / entry.get("part", ""), entry.get("scored_rows")):
                journal.chunks[int(key)] = entry
    elif scored.exists() or (destination / SUMMARY).exists():
        detail = (
            f"The destination {str(destination)!r} holds scored parts or a summary but no "
            f"{JOURNAL}, so it cannot be resumed safely."
        )
        raise RunStateError(
            f"{detail} Pass overwrite=True to replace them, or score into a new destination.",
            detail=detail,
            fixes=[_OVERWRITE],
        )
    scored.mkdir(parents=True, exist_ok=True)
    listed = {Path(part_name(i)).name for i in journal.chunks}
    for stray in scored.iterdir():  # a part written just before a kill, or temporary files
        if stray.name not in listed and (stray.name.startswith(("part-", ".part-"))):
            stray.unlink()
    for name in (SUMMARY, *(p.name for p in destination.glob(".*.tmp-*"))):
        with contextlib.suppress(FileNotFoundError):
            (destination / name).unlink()  # the summary is rewritten at the end from the parts
    journal.save()
    return journal


@contextlib.contextmanager
def locked(destination: Path) -> Iterator[None]:
    """Hold an exclusive lock on the destination: two processes must not write one run. The
    lock dies with its process, so a killed run never leaves the destination locked."""
    destination.mkdir(parents=True, exist_ok=True)
    handle = open(destination / LOCK, "a+")  # noqa: SIM115 - held for the whole run
    try:
        try:
            import fcntl
        except ImportError:  # Windows: no advisory locks here; one writer is the user's care
            fcntl = None
        if fcntl is not None:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise RunStateError(
                    f"Another process is writing the run in {str(destination)!r}. Wait for it "
                    "to finish, or stop it, before running this again."
                ) from None
        yield
    finally:
        handle.close()


def _discard(destination: Path) -> None:
    """Remove this package's files only: the user's other files in the folder stay."""
    for name in (JOURNAL, SUMMARY):
        with contextlib.suppress(FileNotFoundError):
            (destination / name).unlink()
    scored = destination / SCORED
    if scored.is_dir():
        for path in scored.iterdir():
            if path.name.startswith(("part-", ".part-")):
                path.unlink()


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
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


def _part_is_whole(path: Path, rows: int | None) -> bool:
    try:
        return rows is not None and pq.read_metadata(path).num_rows == rows
    except (OSError, ValueError, pq.lib.ArrowException):  # type: ignore[attr-defined]
        return False


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
