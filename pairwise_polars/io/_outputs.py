"""Writing outputs: a check that a destination can be written before any paid work starts, and
writes whose failure says which file and why (a full disk, no permission, a folder in the way).
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Mapping
from pathlib import Path

import polars as pl

from pairwise_polars._errors import OutputError

_PROBE_BYTES = 4096
_OS_ERROR = re.compile(r"os error (\d+)")


def check_writable(path: str | os.PathLike[str], *, what: str) -> Path:
    """Make sure ``path`` can be written before anything is spent: its folder is created, and a
    probe of 4 KiB is written beside it (or, for an existing non-regular file such as a device,
    into it) and removed. Raises :class:`OutputError` naming ``what`` and the path."""
    target = Path(path)
    try:
        if target.is_dir():
            raise OutputError(
                f"Cannot write {what} {str(target)!r}: it is a folder. Name a file instead."
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists() and not target.is_file():  # a device or a pipe: write to it
            with open(target, "ab") as handle:
                handle.write(b"\0")
                handle.flush()
            return target
        probe = target.parent / f".{target.name}.probe-{os.getpid()}"
        try:
            with open(probe, "wb") as handle:
                handle.write(b"\0" * _PROBE_BYTES)
                handle.flush()
                os.fsync(handle.fileno())
        finally:
            probe.unlink(missing_ok=True)
        if target.exists() and not os.access(target, os.W_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(target))
    except OSError as exc:
        if isinstance(exc, OutputError):
            raise
        raise output_error(exc, target, what) from exc
    return target


def check_folder_writable(path: str | os.PathLike[str], *, what: str) -> Path:
    """:func:`check_writable` for a folder: created if needed, and a probe written inside."""
    folder = Path(path)
    try:
        if folder.exists() and not folder.is_dir():
            raise OutputError(
                f"Cannot write {what} {str(folder)!r}: a file of that name is in the way of "
                "the folder. Move it, or name another folder."
            )
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        if isinstance(exc, OutputError):
            raise
        raise output_error(exc, folder, what) from exc
    check_writable(folder / ".pairwise-polars-probe", what=what)
    return folder


def write_parquet(
    frame: pl.DataFrame,
    path: str | os.PathLike[str],
    *,
    what: str,
    metadata: Mapping[str, str] | None = None,
) -> Path:
    """``frame.write_parquet(path)`` (with key-value ``metadata`` in the file's footer), its
    folder created; an I/O failure is an :class:`OutputError` naming ``what``."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if metadata:
            frame.write_parquet(target, metadata=dict(metadata))
        else:
            frame.write_parquet(target)
    except (OSError, pl.exceptions.PolarsError) as exc:
        if _errno(exc) is None and not isinstance(exc, OSError):
            raise  # not an I/O problem
        raise output_error(exc, target, what) from exc
    return target


def write_text(path: str | os.PathLike[str], text: str, *, what: str, append: bool = False) -> Path:
    """Write (or ``append``) UTF-8 text, its folder created; an I/O failure is an
    :class:`OutputError`."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "a" if append else "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise output_error(exc, target, what) from exc
    return target


def output_error(exc: BaseException, path: Path, what: str) -> OutputError:
    """The :class:`OutputError` for a failed write: which output, which path, and the reason in
    words (a full disk, a size limit, no permission)."""
    code = _errno(exc)
    if code in (errno.ENOSPC, errno.EDQUOT):
        reason = "no space left on the device (the disk or the quota is full)"
    elif code == errno.EFBIG:
        reason = "the file is larger than this process may write (a file size limit)"
    elif code in (errno.EACCES, errno.EPERM, errno.EROFS):
        reason = "no permission to write there"
    elif code in (errno.ENOTDIR, errno.EEXIST):
        reason = "a file is in the way of a folder on that path"
    else:
        reason = _first_line(exc)
    error = OutputError(f"Cannot write {what} {str(path)!r}: {reason}.")
    error.errno = code  # an OSError's errno, for callers that check it
    return error


def _errno(exc: BaseException) -> int | None:
    if isinstance(exc, OSError) and exc.errno is not None:
        return exc.errno
    found = _OS_ERROR.search(str(exc))
    return int(found.group(1)) if found else None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__).rstrip(".")
