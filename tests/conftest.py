"""Shared fixtures: the same data as every accepted input kind, frame equality, env isolation."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"

KINDS = ("polars", "lazy", "arrow", "pandas", "parquet")
AWS_VARIABLES = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
)


PROVIDER_VARIABLES = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
)
"""The providers' keys and endpoints, which the judges read from the environment."""


@pytest.fixture(autouse=True)
def _no_stray_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test may reach a real provider with a real key, or write into the user's cache."""
    for name in PROVIDER_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name in AWS_VARIABLES:  # object-store tests talk to the local S3 server only
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


def as_kind(frame: pl.DataFrame, kind: str, tmp_path: Path) -> object:
    """The same rows as a polars/lazy/pyarrow/pandas frame or a parquet path."""
    if kind == "polars":
        return frame
    if kind == "lazy":
        return frame.lazy()
    if kind == "arrow":
        return frame.to_arrow()
    if kind == "pandas":
        return frame.to_pandas()
    path = tmp_path / f"input-{kind}.parquet"
    frame.write_parquet(path)
    return str(path)


@pytest.fixture(params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return request.param


def collect(frame: object) -> pl.DataFrame:
    return frame.collect() if isinstance(frame, pl.LazyFrame) else frame  # type: ignore[return-value]


def assert_same_rows(left: pl.DataFrame, right: pl.DataFrame, by: str | list[str]) -> None:
    """Frame equality that ignores row order (results are joined by key, never by position)."""
    assert_frame_equal(left.sort(by), right.sort(by), check_row_order=True)


AssertSame = Callable[[pl.DataFrame, pl.DataFrame, str], None]


# The local OpenAI-compatible server: the real `openai` client talks to it over real HTTP.
# The local S3-compatible server (moto's threaded server on 127.0.0.1), a bucket per test.
from s3_server import s3_bucket, s3_server  # noqa: E402, F401

from pairwise_polars.testing.fixtures import (  # noqa: E402, F401
    judge_server,
    judge_server_session,
)


def letters() -> pl.DataFrame:
    """The shipped contrastive sample (60 male/female reference-letter pairs)."""
    return pl.read_parquet(DATA / "letters_contrastive.parquet")


def jobs(groups: int | None = None) -> pl.DataFrame:
    """The shipped group sample (DecodingTrust jobs answers); ``groups``: only the first n."""
    frame = pl.read_parquet(DATA / "jobs_group.parquet")
    if groups is None:
        return frame
    keep = frame["group_id"].unique(maintain_order=True).head(groups)
    return frame.filter(pl.col("group_id").is_in(keep.implode()))


@pytest.fixture(scope="session")
def ray_cluster() -> object:
    """One local Ray session for every Ray test (skipped without the ``[ray]`` extra): four
    logical CPUs, a small object store, no dashboard. Yields the ``ray`` module."""
    ray = pytest.importorskip("ray")
    if not ray.is_initialized():
        ray.init(
            num_cpus=4,
            object_store_memory=500 * 1024 * 1024,
            include_dashboard=False,
            logging_level="WARNING",
            log_to_driver=False,  # workers' lines would land in a later test's captured stdout
        )
    yield ray
    ray.shutdown()


def scattered_run(
    folder: Path, *, copies: int = 2, files: int = 4, ids: bool = False, groups: int | None = None
) -> Path:
    """The jobs sample ``copies`` times over (group ids made distinct), rows shuffled and dealt
    over ``files`` parquet files, so every group's rows are spread across files. Without
    ``ids`` the ``id`` column is left out: rows are identified by their position; ``groups``:
    only the sample's first n groups."""
    frames = [
        jobs(groups).with_columns(pl.col("group_id") + f"-copy{i}", pl.col("id") + i * 100_000)
        for i in range(copies)
    ]
    frame = pl.concat(frames).sample(fraction=1.0, shuffle=True, seed=7)
    if not ids:
        frame = frame.drop("id")
    source = folder / "source"
    source.mkdir()
    for i in range(files):
        frame[i::files].write_parquet(source / f"part-{i}.parquet")
    return source


def together_run(
    folder: Path, *, copies: int = 1, files: int = 2, ids: bool = False, groups: int | None = None
) -> Path:
    """As :func:`scattered_run`, but each group's rows sit together, as runs are usually
    written: the rows in group order, cut into ``files`` consecutive parquet files (a group may
    straddle two files). On Ray each worker reads its own chunk's rows (no shuffle)."""
    frames = [
        jobs(groups).with_columns(pl.col("group_id") + f"-copy{i}", pl.col("id") + i * 100_000)
        for i in range(copies)
    ]
    frame = pl.concat(frames).sort("group_id", maintain_order=True)
    if not ids:
        frame = frame.drop("id")
    source = folder / "source"
    source.mkdir()
    size = -(-frame.height // files)
    for i in range(files):
        frame.slice(i * size, size).write_parquet(source / f"part-{i}.parquet")
    return source
