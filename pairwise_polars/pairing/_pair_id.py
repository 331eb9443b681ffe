"""The stable pair id: three 32-bit MurmurHash3 values (the hash of the Iceberg bucket
transform, a published function) mixed with wrapping 64-bit arithmetic.

polars computes the hash natively from 2.1 on (``Expr._mm3_hash``, the hash its Iceberg
writer uses; not yet public API). On older polars the same function runs here, vectorised with
numpy; both give the same values (tests compare them, and check Iceberg's published vectors).
"""

from __future__ import annotations

import polars as pl

_MIX_1 = 0x9E3779B97F4A7C15
_MIX_2 = 0xC2B2AE3D27D4EB4F
_NATIVE = hasattr(pl.Expr, "_mm3_hash")


def pair_id(group: str, id_a: str, id_b: str, *, native: bool = _NATIVE) -> pl.Expr:
    """A stable UInt64 id of a pair: the same pair gets the same id on every run and input kind.

    Each key (as text) is hashed with the 32-bit MurmurHash3 of the Iceberg bucket transform;
    the three hashes are mixed with wrapping 64-bit arithmetic. Hashing each column once is much
    cheaper than hashing one concatenated string.
    """
    return pair_id_a(group, id_a, native=native) + mm3(id_b, native=native)


def pair_id_a(group: str, id_a: str, *, native: bool = _NATIVE) -> pl.Expr:
    """The part of :func:`pair_id` its ``_a`` row gives: ``pair_id = pair_id_a + mm3(id_b)``
    (wrapping), so the self-join hashes each row once rather than each pair."""
    mix_1, mix_2 = pl.lit(_MIX_1, pl.UInt64), pl.lit(_MIX_2, pl.UInt64)
    return (mm3(group, native=native) * mix_1 + mm3(id_a, native=native)) * mix_2


def mm3(column: str, *, native: bool = _NATIVE) -> pl.Expr:
    """The 32-bit MurmurHash3 (seed 0) of a column's UTF-8 text, as UInt64."""
    text = pl.col(column).cast(pl.String)
    if native:
        return text._mm3_hash().reinterpret(signed=False).cast(pl.UInt64)
    return text.map_batches(_mm3_series, return_dtype=pl.UInt32, is_elementwise=True).cast(
        pl.UInt64
    )


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """MurmurHash3_x86_32 of ``data`` as an unsigned int: the reference implementation.

    >>> murmur3_32("iceberg".encode()) - 2**32 * (murmur3_32("iceberg".encode()) >= 2**31)
    1210000089
    """
    c1, c2, mask = 0xCC9E2D51, 0x1B873593, 0xFFFFFFFF
    h = seed
    n_blocks = len(data) // 4
    for i in range(n_blocks):
        k = int.from_bytes(data[4 * i : 4 * i + 4], "little")
        k = (k * c1) & mask
        k = ((k << 15) | (k >> 17)) & mask
        k = (k * c2) & mask
        h ^= k
        h = ((h << 13) | (h >> 19)) & mask
        h = (h * 5 + 0xE6546B64) & mask
    tail = data[4 * n_blocks :]
    if tail:
        k = int.from_bytes(tail, "little")
        k = (k * c1) & mask
        k = ((k << 15) | (k >> 17)) & mask
        k = (k * c2) & mask
        h ^= k
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & mask
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & mask
    h ^= h >> 16
    return h


def _mm3_series(texts: pl.Series) -> pl.Series:
    """MurmurHash3 of every string of a Series; nulls stay null. Vectorised with numpy: the
    strings are laid out as rows of a zero-padded byte matrix and mixed block by block."""
    values = texts.to_list()
    encoded = [b"" if v is None else v.encode("utf-8") for v in values]
    try:
        import numpy as np
    except ImportError:  # numpy is not a dependency: the reference, one string at a time
        hashes = [
            None if v is None else murmur3_32(b) for v, b in zip(values, encoded, strict=True)
        ]
        return pl.Series(texts.name, hashes, dtype=pl.UInt32)
    n = len(encoded)
    lengths = np.fromiter((len(b) for b in encoded), dtype=np.int64, count=n)
    width = int(-(-int(lengths.max(initial=0)) // 4) * 4)
    matrix = np.zeros((n, max(width, 4)), dtype=np.uint8)
    for row, raw in enumerate(encoded):
        matrix[row, : len(raw)] = np.frombuffer(raw, dtype=np.uint8)
    words = matrix.view("<u4").astype(np.uint32)  # little-endian 4-byte blocks
    c1, c2 = np.uint32(0xCC9E2D51), np.uint32(0x1B873593)

    def mix(k: np.ndarray) -> np.ndarray:
        k = k * c1
        k = (k << np.uint32(15)) | (k >> np.uint32(17))
        return k * c2

    with np.errstate(over="ignore"):
        h = np.zeros(n, dtype=np.uint32)
        full = lengths // 4
        for block in range(words.shape[1]):
            k = words[:, block]
            whole = full > block
            mixed = h ^ mix(k)
            mixed = (mixed << np.uint32(13)) | (mixed >> np.uint32(19))
            mixed = mixed * np.uint32(5) + np.uint32(0xE6546B64)
            partial = (full == block) & (lengths % 4 > 0)  # the tail: zero-padded already
            h = np.where(whole, mixed, np.where(partial, h ^ mix(k), h))
        h ^= lengths.astype(np.uint32)
        h ^= h >> np.uint32(16)
        h = h * np.uint32(0x85EBCA6B)
        h ^= h >> np.uint32(13)
        h = h * np.uint32(0xC2B2AE35)
        h ^= h >> np.uint32(16)
    hashed = pl.Series(texts.name, h, dtype=pl.UInt32)
    return hashed.scatter(texts.is_null().arg_true(), None) if texts.null_count() else hashed
