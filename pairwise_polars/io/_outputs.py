"""Writing outputs: a check that a destination can be written before any paid work starts, and
writes whose failure says which file and why (a full disk, no permission, a folder in the way).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

import polars as pl

from pairwise_polars._errors import OutputError

_PROBE_BYTES = 4096
_FULL_BYTES = 16 * 2**20  # less free space than this: the disk is as good as full
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
    rescue: bool = False,
) -> Path:
    """``frame.write_parquet(path)`` (with key-value ``metadata`` in the file's footer), its
    folder created, written to a temporary file beside it and renamed over ``path`` only once
    whole: a failed write leaves ``path`` as it was, never a truncated file. A failure is an
    :class:`OutputError` naming ``what``; with ``rescue`` (results already paid for) the frame
    is first saved to the temporary folder, and the error says where."""
    target = Path(path)

    def write(tmp: Path) -> None:
        if metadata:
            frame.write_parquet(tmp, metadata=dict(metadata))
        else:
            frame.write_parquet(tmp)

    try:
        replace_atomically(target, write)
    except (OSError, pl.exceptions.PolarsError) as exc:
        error = output_error(exc, target, what, likely=likely_cause(target.parent))
        if rescue:
            raise rescued(error, frame, metadata) from exc
        raise error from exc
    return target


def write_text(path: str | os.PathLike[str], text: str, *, what: str, append: bool = False) -> Path:
    """Write (or ``append``) UTF-8 text, its folder created; a written file replaces ``path``
    only once whole. An I/O failure is an :class:`OutputError`."""
    target = Path(path)
    try:
        if append:
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "a", encoding="utf-8") as handle:
                handle.write(text)
        else:
            replace_atomically(target, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    except OSError as exc:
        raise output_error(exc, target, what) from exc
    return target


def replace_atomically(target: Path, write: Callable[[Path], object]) -> None:
    """``write`` a temporary file in ``target``'s folder (so the rename cannot cross devices),
    then rename it over ``target``; the temporary file never outlives a failure. A device or
    a pipe (``/dev/stdout``) is written directly: it cannot be renamed over."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists() and not target.is_file():
        write(target)
        return
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    try:
        write(tmp)
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(OSError):  # gone (renamed), or not a file we made
            tmp.unlink()


def rescued(
    error: OutputError, frame: pl.DataFrame, metadata: Mapping[str, str] | None
) -> OutputError:
    """``error``, saying where the frame was saved instead (the temporary folder), or that it
    could not be saved anywhere."""
    handle, spare = tempfile.mkstemp(prefix="pairwise-polars-scored-", suffix=".parquet")
    os.close(handle)
    try:
        frame.write_parquet(spare, metadata=dict(metadata or {}))
    except (OSError, pl.exceptions.PolarsError):
        Path(spare).unlink(missing_ok=True)
        return error
    rescued = OutputError(f"{error} The results were saved to {spare!r} instead.")
    rescued.errno = error.errno
    return rescued


def output_error(
    exc: BaseException, path: Path, what: str, *, likely: int | None = None
) -> OutputError:
    """The :class:`OutputError` for a failed write: which output, which path, and the reason in
    words (a full disk, a size limit, no permission). ``likely``: the errno to assume when the
    error carries none (polars reports a failed write as a broken file, e.g. "Invalid thrift")."""
    code = _errno(exc) or likely
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


def likely_cause(folder: Path) -> int | None:
    """Why a write that said nothing useful most likely failed: a file size limit in force, or
    a disk with (almost) no space left; None when neither holds."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
        if soft != resource.RLIM_INFINITY:
            return errno.EFBIG
    except (ImportError, OSError, ValueError):  # not on this platform
        pass
    try:
        if shutil.disk_usage(folder).free < _FULL_BYTES:
            return errno.ENOSPC
    except OSError:
        pass
    return None


def _errno(exc: BaseException) -> int | None:
    if isinstance(exc, OSError) and exc.errno is not None:
        return exc.errno
    found = _OS_ERROR.search(str(exc))
    return int(found.group(1)) if found else None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__).rstrip(".")
