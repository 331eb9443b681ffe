"""Where a run's files live: a local folder, or a prefix in an S3-compatible object store.

Object stores have no rename, so a file becomes visible only when it is complete in another
way: one PUT (or one completed multipart upload) is atomic, so a part is uploaded whole, and the
journal (``run.json``), uploaded after its part, is what names a finished part. Two writers are
kept apart by a lock object created with a conditional PUT (``If-None-Match: *``) and renewed
while the run goes on; a killed run's lock expires after ``LOCK_TTL_S`` without renewal, so a
rerun can take it over (by a conditional PUT on the expired lock's ETag).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from pyarrow import ArrowException

from pairwise_polars._errors import OptionError, OutputError, RunStateError
from pairwise_polars.io import (
    checked_options,
    is_uri,
    likely_cause,
    output_error,
    redact_options,
)

LOCK_TTL_S = 60.0
"""A lock not renewed for this long belongs to a run that died: a new run may take it."""
RENEW_EVERY_S = 15.0
LOCK_NAME = ".run.lock"


def is_object_destination(destination: object) -> bool:
    """Whether a run's destination is in an object store (an ``s3://`` URI)."""
    return isinstance(destination, str) and destination.lower().startswith(("s3://", "s3a://"))


def run_store(
    destination: str | os.PathLike[str], storage_options: Mapping[str, str] | None = None
) -> LocalStore | ObjectStore:
    """Where a run's files go: a local folder, or an ``s3://`` prefix."""
    if is_object_destination(destination):
        return ObjectStore(str(destination).rstrip("/"), checked_options(storage_options))
    if is_uri(destination):
        raise OptionError(
            f"A run's destination can be a local folder or an s3:// prefix (any S3-compatible "
            f"store); got {str(destination)!r}. Score into s3://..., or into a local or shared "
            "folder and copy the results."
        )
    return LocalStore(Path(destination))


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
        error = output_error(exc, path, "the run's file", likely=likely_cause(path.parent))
        if error.errno is None and not isinstance(exc, (OSError, pl.exceptions.PolarsError)):
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


@dataclass(frozen=True)
class LocalStore:
    """A run's files in a local (or shared) folder: every file replaced in one ``os.replace``,
    one writer at a time by an advisory lock that dies with its process."""

    path: Path

    @property
    def where(self) -> str:
        return str(self.path)

    def url(self, name: str) -> str:
        return str(self.path / name)

    def prepare(self) -> None:
        (self.path / "scored").mkdir(parents=True, exist_ok=True)

    def exists(self, name: str) -> bool:
        return (self.path / name).exists()

    def read_text(self, name: str) -> str:
        return (self.path / name).read_text(encoding="utf-8")

    def write(self, name: str, write: Callable[[Path], object]) -> None:
        write_atomically(self.path / name, write)

    def names(self, prefix: str = "") -> list[str]:
        folder = self.path / prefix
        if not folder.is_dir():
            return []
        return sorted(str(p.relative_to(self.path)) for p in folder.iterdir() if p.is_file())

    def delete(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            (self.path / name).unlink()

    def parquet_rows(self, name: str) -> int | None:
        try:
            return pq.read_metadata(self.path / name).num_rows
        except (OSError, ValueError, ArrowException):
            return None

    def part_metadata(self, name: str) -> dict[str, str]:
        """A parquet file's footer key-value entries ({} when it is missing or broken)."""
        try:
            return pl.read_parquet_metadata(self.path / name)
        except (OSError, pl.exceptions.PolarsError):
            return {}

    def scan(self, pattern: str) -> pl.LazyFrame:
        return pl.scan_parquet(self.path / pattern)

    def scan_names(self, names: list[str]) -> pl.LazyFrame:
        return pl.scan_parquet([self.path / name for name in names])

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold an exclusive lock on the folder: two processes must not write one run. The
        lock dies with its process, so a killed run never leaves the folder locked."""
        self.path.mkdir(parents=True, exist_ok=True)
        handle = open(self.path / LOCK_NAME, "a+")  # noqa: SIM115 - held for the whole run
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
                        f"Another process is writing the run in {str(self.path)!r}. Wait for "
                        "it to finish, or stop it, before running this again."
                    ) from None
            yield
        finally:
            handle.close()


@dataclass(frozen=True)
class ObjectStore:
    """A run's files under ``s3://bucket/prefix`` (any S3-compatible store), through boto3.

    ``storage_options`` take polars' names (``aws_endpoint_url``, ``aws_region``,
    ``aws_access_key_id``, ``aws_secret_access_key``, ``aws_session_token``); what they leave
    out comes from the environment as boto3 finds it.
    """

    uri: str
    storage_options: Mapping[str, str] | None = field(default=None, repr=False)

    @property
    def where(self) -> str:
        return self.uri

    def prepare(self) -> None:
        """Nothing to make: a prefix exists as soon as an object is under it."""

    def scan_names(self, names: list[str]) -> pl.LazyFrame:
        return pl.scan_parquet([self.url(n) for n in names], storage_options=self._polars_options())

    @property
    def bucket(self) -> str:
        return self.uri.split("://", 1)[1].split("/", 1)[0]

    @property
    def prefix(self) -> str:
        rest = self.uri.split("://", 1)[1]
        return rest.split("/", 1)[1].strip("/") if "/" in rest else ""

    def key(self, name: str) -> str:
        return f"{self.prefix}/{name}" if self.prefix else name

    def url(self, name: str) -> str:
        return f"s3://{self.bucket}/{self.key(name)}"

    def client(self) -> Any:
        try:
            import boto3
        except ImportError as exc:  # pragma: no cover - the s3 extra is missing
            raise OptionError(
                "Writing a run to s3:// needs boto3: pip install 'pairwise-polars[s3]'."
            ) from exc
        options = dict(self.storage_options or {})
        endpoint = options.get("aws_endpoint_url") or options.get("endpoint_url")
        return boto3.client(
            "s3",
            endpoint_url=endpoint or os.environ.get("AWS_ENDPOINT_URL") or None,
            aws_access_key_id=options.get("aws_access_key_id"),
            aws_secret_access_key=options.get("aws_secret_access_key"),
            aws_session_token=options.get("aws_session_token"),
            region_name=options.get("aws_region") or options.get("region"),
        )

    def _call(self, what: str, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except Exception as exc:
            if _code(exc) in ("NoSuchKey", "404"):
                raise FileNotFoundError(what) from None
            text = redact_options(
                str(exc).splitlines()[0] if str(exc) else "", self.storage_options
            )
            raise OutputError(
                f"Cannot {what} in {self.uri!r}: {type(exc).__name__}: {text}. Check the bucket, "
                "the endpoint and the credentials; the run can be run again as it is (finished "
                "chunks are kept, paid judgements come from the cache)."
            ) from None

    def exists(self, name: str) -> bool:
        try:
            self._call(
                f"look up {name}",
                lambda: self.client().head_object(Bucket=self.bucket, Key=self.key(name)),
            )
        except FileNotFoundError:
            return False
        return True

    def read_text(self, name: str) -> str:
        body = self._call(
            f"read {name}",
            lambda: self.client().get_object(Bucket=self.bucket, Key=self.key(name))["Body"],
        )
        return body.read().decode("utf-8")

    def write(self, name: str, write: Callable[[Path], object]) -> None:
        """``write(local_tmp)`` then one upload: the object appears whole or not at all."""
        with tempfile.TemporaryDirectory(prefix="pairwise-upload-") as tmp:
            path = Path(tmp) / Path(name).name
            write(path)
            self._call(
                f"write {name}",
                lambda: self.client().upload_file(str(path), self.bucket, self.key(name)),
            )

    def names(self, prefix: str = "") -> list[str]:
        """Every object name under ``prefix`` (relative to the run's prefix)."""
        client = self.client()
        start = self.key(prefix)
        found: list[str] = []
        token: str | None = None
        while True:
            extra = {"ContinuationToken": token} if token else {}
            page = self._call(
                "list the run's objects",
                lambda extra=extra: client.list_objects_v2(
                    Bucket=self.bucket, Prefix=start, **extra
                ),
            )
            cut = len(self.prefix) + 1 if self.prefix else 0
            found += [item["Key"][cut:] for item in page.get("Contents", [])]
            token = page.get("NextContinuationToken")
            if not token:
                return sorted(found)

    def delete(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._call(
                f"delete {name}",
                lambda: self.client().delete_object(Bucket=self.bucket, Key=self.key(name)),
            )

    def parquet_rows(self, name: str) -> int | None:
        """The rows a parquet object holds (its footer), None when it is missing or broken."""
        footer = self._footer(name)
        return None if footer is None else footer.num_rows

    def part_metadata(self, name: str) -> dict[str, str]:
        """A parquet object's footer key-value entries ({} when it is missing or broken)."""
        footer = self._footer(name)
        if footer is None or footer.metadata is None:
            return {}
        return {k.decode(): v.decode() for k, v in footer.metadata.items()}

    def _footer(self, name: str) -> pq.FileMetaData | None:
        """The footer of a parquet object, read with two ranged GETs (the last 8 bytes, then the
        footer) instead of the whole object; None when it is missing or not parquet. Read through
        boto3, not polars: older polars cannot pass storage options to its metadata reader."""
        client = self.client()

        def tail(n: int) -> bytes:
            try:
                got = client.get_object(Bucket=self.bucket, Key=self.key(name), Range=f"bytes=-{n}")
            except Exception as exc:
                if _code(exc) == "InvalidRange":  # an empty object
                    return b""
                raise
            return got["Body"].read()

        try:  # a store that cannot be read raises (OutputError): a part is never dropped for it
            end = self._call(f"read {name}", lambda: tail(8))
            if len(end) != 8 or end[4:] != b"PAR1":
                return None
            size = int.from_bytes(end[:4], "little")
            footer = self._call(f"read {name}", lambda: tail(size + 8))
            if len(footer) != size + 8:
                return None
            return pq.read_metadata(pa.BufferReader(b"PAR1" + footer))
        except (FileNotFoundError, ValueError, ArrowException):
            return None

    def scan(self, pattern: str) -> pl.LazyFrame:
        return pl.scan_parquet(self.url(pattern), storage_options=self._polars_options())

    def _polars_options(self) -> dict[str, str] | None:
        return dict(self.storage_options) if self.storage_options else None

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the run's lock object for the whole run (renewed in the background)."""
        owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        etag = self._acquire(owner)
        stop = threading.Event()
        state = {"etag": etag}
        renewer = threading.Thread(
            target=self._renew, args=(owner, state, stop), name="pairwise-lock", daemon=True
        )
        renewer.start()
        try:
            yield
        finally:
            stop.set()
            renewer.join(timeout=5)
            self.delete(LOCK_NAME)

    def _lock_body(self, owner: str) -> bytes:
        return json.dumps({"owner": owner, "renewed_at": time.time()}).encode()

    def _acquire(self, owner: str) -> str:
        client = self.client()
        key = self.key(LOCK_NAME)
        try:
            made = client.put_object(
                Bucket=self.bucket, Key=key, Body=self._lock_body(owner), IfNoneMatch="*"
            )
            return str(made["ETag"])
        except Exception as exc:
            if _code(exc) not in ("PreconditionFailed", "412", "ConditionalRequestConflict"):
                raise self._lock_error(exc) from None
        held = client.get_object(Bucket=self.bucket, Key=key)
        info = json.loads(held["Body"].read() or b"{}")
        age = time.time() - float(info.get("renewed_at", 0))
        if age < LOCK_TTL_S and not _died_here(str(info.get("owner", ""))):
            raise RunStateError(
                f"Another process is writing the run in {self.uri!r} ({info.get('owner')}, "
                f"lock renewed {age:.0f} s ago). Wait for it to finish, or stop it; a stopped "
                f"run's lock expires {LOCK_TTL_S:.0f} s after its last renewal."
            )
        try:  # a dead run's lock: take it over, unless another process just did
            made = client.put_object(
                Bucket=self.bucket, Key=key, Body=self._lock_body(owner), IfMatch=held["ETag"]
            )
        except Exception:
            raise RunStateError(
                f"Another process took over the expired lock of the run in {self.uri!r} just "
                "now. Wait for it to finish before running this again."
            ) from None
        return str(made["ETag"])

    def _renew(self, owner: str, state: dict[str, str], stop: threading.Event) -> None:
        client = self.client()
        while not stop.wait(RENEW_EVERY_S):
            with contextlib.suppress(Exception):  # a missed renewal is retried next time
                made = client.put_object(
                    Bucket=self.bucket,
                    Key=self.key(LOCK_NAME),
                    Body=self._lock_body(owner),
                    IfMatch=state["etag"],
                )
                state["etag"] = str(made["ETag"])

    def _lock_error(self, exc: BaseException) -> OutputError:
        text = _first_line(exc, self.storage_options)
        return OutputError(
            f"Cannot create the run's lock in {self.uri!r}: {text}. The store must accept "
            "conditional writes (If-None-Match), as AWS S3 and current S3-compatible stores do."
        )


def _died_here(owner: str) -> bool:
    """Whether a lock's owner was a process on this machine that is gone (killed, say): its
    lock need not wait for the TTL."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False


def _code(exc: BaseException) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Code", ""))
    return ""


def _first_line(exc: BaseException, options: Mapping[str, str] | None) -> str:
    lines = str(exc).strip().splitlines()
    return redact_options(lines[0] if lines else "", options)
