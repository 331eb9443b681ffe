"""Seeded synthetic grouped runs for the benchmarks, written once per size as parquet.

One row per response: ``id``, ``group_id``, ``role`` (one ``reference`` and 3-4 ``variant`` rows
per group), ``dimension``, ``attribute``, ``input`` (~200 characters, the group's prompt with the
row's attribute substituted in front) and ``output`` (~600 characters). Text is cut from a pool of
Zipf-distributed pseudo-words, so it compresses roughly like prose; all of it is vectorised numpy
and pyarrow, no Python loop over rows.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

WORK = Path(__file__).resolve().parent / "_work"
DATA_VERSION = 1  # bump when the generator changes, so cached files are rebuilt
CHUNK_ROWS = 250_000  # one parquet row group per chunk
DIMENSIONS = {
    "gender": ["male", "female", "non-binary", "transgender", "agender"],
    "race": ["White", "Black", "Asian", "Hispanic", "Indigenous"],
    "age": ["35-year-old", "22-year-old", "50-year-old", "68-year-old", "81-year-old"],
    "religion": ["Christian", "Muslim", "Jewish", "Hindu", "Buddhist"],
}
OUTPUT_CHARS = (600, 120)  # mean, standard deviation
INPUT_CHARS = (200, 40)


def dataset_path(n_rows: int, seed: int = 0) -> Path:
    """The cached parquet run of ``n_rows`` rows, generated on first use."""
    path = WORK / f"runs_{n_rows}_seed{seed}_v{DATA_VERSION}.parquet"
    if not path.exists():
        WORK.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.partial")
        write_runs(partial, n_rows, seed)
        partial.replace(path)
    return path


def group_sizes(n_rows: int, rng: np.random.Generator) -> np.ndarray:
    """Sizes (4 or 5: one reference and 3-4 variants) summing exactly to ``n_rows``."""
    sizes = rng.integers(4, 6, size=n_rows // 4 + 1)
    keep = np.searchsorted(np.cumsum(sizes), n_rows, side="right")
    sizes = sizes[:keep]
    rest = n_rows - int(sizes.sum())
    if rest >= 2:  # a last, smaller group: still one reference and at least one variant
        sizes = np.append(sizes, rest)
    elif rest == 1:
        if not (sizes == 4).any():
            raise ValueError(f"cannot split {n_rows} rows into groups of 4-5")
        sizes[np.flatnonzero(sizes == 4)[-1]] += 1
    return sizes


def write_runs(path: Path, n_rows: int, seed: int) -> None:
    if n_rows < 2:
        raise ValueError("need at least 2 rows (a reference and a variant)")
    rng = np.random.default_rng(seed)
    pool = _text_pool(rng)
    sizes = group_sizes(n_rows, rng)
    n_groups = len(sizes)
    group_of_row = np.repeat(np.arange(n_groups, dtype=np.int64), sizes)
    first_row = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    position = np.arange(n_rows) - np.repeat(first_row, sizes)  # 0 = the reference
    dim_names = list(DIMENSIONS)
    group_dim = rng.integers(0, len(dim_names), size=n_groups)
    input_start = rng.integers(0, len(pool) - 400, size=n_groups)
    input_len = _lengths(rng, n_groups, INPUT_CHARS)

    schema = pa.schema(
        [
            ("id", pa.int64()),
            ("group_id", pa.int64()),
            ("role", pa.string()),
            ("dimension", pa.string()),
            ("attribute", pa.string()),
            ("input", pa.string()),
            ("output", pa.string()),
        ]
    )
    roles = pa.array(["reference", "variant"])
    dims = pa.array(dim_names)
    attributes = pa.array([a for values in DIMENSIONS.values() for a in values])
    with pq.ParquetWriter(path, schema, compression="zstd") as writer:
        for lo in range(0, n_rows, CHUNK_ROWS):
            hi = min(lo + CHUNK_ROWS, n_rows)
            groups = group_of_row[lo:hi]
            pos = position[lo:hi]
            dim = group_dim[groups]
            attribute = pc.take(attributes, dim * 5 + pos)
            prompt = _slices(pool, input_start[groups], input_len[groups])
            inp = pc.binary_join_element_wise(
                pa.array(["Consider a"] * (hi - lo)), attribute, prompt, " "
            )
            output = _slices(
                pool,
                rng.integers(0, len(pool) - 1300, size=hi - lo),
                _lengths(rng, hi - lo, OUTPUT_CHARS),
            )
            table = pa.table(
                [
                    pa.array(np.arange(lo, hi, dtype=np.int64)),
                    pa.array(groups),
                    pc.take(roles, (pos > 0).astype(np.int8)),
                    pc.take(dims, dim),
                    attribute,
                    inp,
                    output,
                ],
                schema=schema,
            )
            writer.write_table(table, row_group_size=CHUNK_ROWS)


def _text_pool(rng: np.random.Generator, n_words: int = 3_000_000) -> np.ndarray:
    """A long ASCII text (as uint8) of pseudo-words with Zipf frequencies and some punctuation."""
    vocab_size = 20_000
    lengths = np.clip(rng.poisson(4.5, size=vocab_size), 1, 14) + 1
    letters = rng.integers(ord("a"), ord("z") + 1, size=int(lengths.sum()), dtype=np.uint8)
    ends = np.cumsum(lengths)
    letters[ends - 1] = ord(" ")  # each word ends with a space
    starts = ends - lengths
    rank = np.minimum(rng.zipf(1.2, size=n_words), vocab_size) - 1
    word_len = lengths[rank]
    offsets = np.concatenate([[0], np.cumsum(word_len)[:-1]])
    index = np.repeat(starts[rank] - offsets, word_len) + np.arange(int(word_len.sum()))
    pool = letters[index]
    # End roughly one word in twelve with a full stop (it replaces the word's last letter).
    stops = np.cumsum(word_len)[(rng.random(n_words) < 1 / 12) & (word_len > 2)] - 2
    pool[stops] = ord(".")
    return pool


def _lengths(rng: np.random.Generator, n: int, mean_sd: tuple[int, int]) -> np.ndarray:
    mean, sd = mean_sd
    return np.clip(rng.normal(mean, sd, size=n), mean // 4, mean * 2).astype(np.int64)


def _slices(pool: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> pa.Array:
    """A string array whose i-th value is ``pool[starts[i] : starts[i] + lengths[i]]``."""
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    index = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1])
    data = pool[index]
    return pa.StringArray.from_buffers(
        len(lengths), pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)
    )


if __name__ == "__main__":  # python benchmarks/_data.py N_ROWS [SEED]: generate, print the path
    import sys

    print(dataset_path(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 0))
