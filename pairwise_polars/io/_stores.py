"""Object storage: URIs (``s3://``, ``gs://``, ``az://``, ``hf://``, ``https://``) read through
polars, which already speaks every major store, with the caller's ``storage_options``.

Credentials come from the provider's usual environment variables and credential chains, or from
``storage_options``; the values of secret options never appear in a message (see
:func:`redact_options`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from pairwise_polars._errors import DataSourceError, OptionError

SCHEMES = (
    "s3://",
    "s3a://",
    "gs://",
    "gcs://",
    "gcp://",
    "az://",
    "azure://",
    "abfs://",
    "abfss://",
    "adl://",
    "hf://",
    "http://",
    "https://",
)
"""URI prefixes read through polars' object-store readers."""
StorageOptions = Mapping[str, str]
"""Options for the object store, as polars takes them (e.g. ``aws_endpoint_url``,
``aws_region``, ``aws_access_key_id``, ``aws_secret_access_key``)."""
_SECRET_WORDS = ("secret", "token", "password", "account_key", "sas", "private_key", "credential")
_PUBLIC_KEYS = frozenset({"aws_access_key_id", "access_key_id", "azure_storage_account_name"})
FILE_COLUMN = "__pairwise_polars_file__"


def is_uri(path: object) -> bool:
    """Whether ``path`` names an object in a store (not a local file)."""
    return isinstance(path, str) and path.lower().startswith(SCHEMES)


def checked_options(options: object) -> dict[str, str] | None:
    """``storage_options`` as a plain dict of strings, or None; anything else is refused."""
    if options is None:
        return None
    if not isinstance(options, Mapping):
        raise OptionError(
            "storage_options must be a mapping of option names to strings, e.g. "
            f"{{'aws_region': 'eu-west-1'}}; got {type(options).__name__}."
        )
    out: dict[str, str] = {}
    for key, value in options.items():
        if not isinstance(key, str) or not key:
            raise OptionError(f"storage_options keys must be option names; got {key!r}.")
        if isinstance(value, bool):
            value = "true" if value else "false"
        if not isinstance(value, (str, int, float)):
            raise OptionError(
                f"storage_options[{key!r}] must be a string (or a number); got "
                f"{type(value).__name__}."
            )
        out[key] = str(value)
    return out


def is_secret_option(key: str) -> bool:
    """Whether a storage option holds a secret (its value is never shown or written)."""
    lower = key.lower()
    if lower in _PUBLIC_KEYS:
        return False
    return any(word in lower for word in _SECRET_WORDS) or lower.endswith("_key")


def secret_values(options: Mapping[str, str] | None) -> tuple[str, ...]:
    """The values of the secret options: what a message must never contain."""
    return tuple(v for k, v in (options or {}).items() if is_secret_option(k) and v)


def redact_options(text: str, options: Mapping[str, str] | None) -> str:
    """``text`` with every secret option's value replaced by ``***``."""
    for secret in sorted(secret_values(options), key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def expand_uri(uri: str, options: Mapping[str, str] | None, parquet: bool) -> list[str]:
    """The objects a URI names: a glob of parquet objects is expanded (through polars, reading
    only the footers); any other URI is one object, read as it is."""
    if not parquet or not any(c in uri for c in "*?["):
        return [uri]
    try:
        found = (
            scan_uri(uri, options, "parquet", include_file_paths=FILE_COLUMN)
            .select(pl.col(FILE_COLUMN).unique(maintain_order=True))
            .collect()
            .get_column(FILE_COLUMN)
            .to_list()
        )
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise unreadable_uri(uri, options, exc) from exc
    if not found:
        raise DataSourceError(f"No object matches the glob {uri!r}.")
    return sorted(found)


def scan_uri(uri: str, options: Mapping[str, str] | None, kind: str, **extra: Any) -> pl.LazyFrame:
    """A lazy scan of an object (or a glob of them) in a store."""
    opts = dict(options) if options else None
    if kind == "parquet":
        return pl.scan_parquet(uri, storage_options=opts, **extra)
    if kind in ("csv", "tsv"):
        separator = "\t" if kind == "tsv" else ","
        return pl.scan_csv(
            uri,
            separator=separator,
            infer_schema_length=None,
            storage_options=opts,
            schema_overrides=_unsigned_ids(uri, separator, opts) or None,
        )
    if kind == "ndjson":
        return pl.scan_ndjson(uri, infer_schema_length=None, storage_options=opts)
    raise DataSourceError(
        f"Cannot read {uri!r} from object storage as {kind}: store parquet, CSV, TSV or NDJSON "
        "objects there (JSON arrays are read from local files only)."
    )


def _unsigned_ids(
    uri: str, separator: str, options: dict[str, str] | None
) -> dict[str, pl.DataType]:
    """``{"pair_id": UInt64}`` where an object's ``pair_id`` holds only unsigned 64-bit
    integers (the package's pair ids, past the signed range older polars infers), as the local
    reader's record check finds for a file on disk. Reads that column as text once; a read that
    fails here fails again, named, where the caller reads the schema."""
    try:
        text = pl.scan_csv(uri, separator=separator, infer_schema=False, storage_options=options)
        if PAIR_ID not in text.collect_schema().names():
            return {}
        ids = text.select(pl.col(PAIR_ID).drop_nulls()).collect().to_series()
    except (pl.exceptions.PolarsError, OSError, ValueError):
        return {}
    unsigned = ids.str.contains(r"^[0-9]{1,20}$").all() and not (
        ids.cast(pl.UInt64, strict=False).null_count()  # past 2**64 - 1
    )
    return {PAIR_ID: pl.UInt64()} if unsigned else {}


PAIR_ID = "pair_id"


def unreadable_uri(
    uri: str, options: Mapping[str, str] | None, exc: BaseException
) -> DataSourceError:
    """A read that failed, named with its URI, the store's first line and what to check."""
    text = str(exc).strip().splitlines()
    first = redact_options(text[0] if text else type(exc).__name__, options)
    return DataSourceError(
        f"Cannot read {uri!r}: {first.rstrip('.')}. Check the URI, that the object exists, and "
        "the credentials (the provider's environment variables, or storage_options / "
        "--storage-option / the manifest's storage_options: block for non-secret settings such "
        "as the endpoint and region)."
    )
