"""Inputs anywhere polars reads: object URIs with storage_options, against a real local S3
server (tests/s3_server.py), giving the same results as the same files on a local disk."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from conftest import assert_same_rows, jobs
from s3_server import SECRET_KEY, Bucket

import pairwise_polars as pp
from pairwise_polars._errors import DataSourceError, OptionError
from pairwise_polars.io import checked_options, input_files, is_uri, redact_options, scan_data
from pairwise_polars.manifest import validate_manifest


def _upload(bucket: Bucket, frame: pl.DataFrame, parts: int = 3) -> str:
    """The frame written as ``parts`` parquet objects under runs/, whole groups per object."""
    groups = frame["group_id"].unique(maintain_order=True)
    options = bucket.server.storage_options()
    for i in range(parts):
        keep = groups.gather_every(parts, offset=i)
        part = frame.filter(pl.col("group_id").is_in(keep.implode()))
        part.write_parquet(f"{bucket.uri}/runs/part-{i}.parquet", storage_options=options)
    return f"{bucket.uri}/runs/*.parquet"


def test_score_from_a_bucket_equals_the_local_run(s3_bucket: Bucket) -> None:
    rows = jobs(groups=12)
    uri = _upload(s3_bucket, rows)
    options = s3_bucket.server.storage_options()
    remote = pp.score(uri, storage_options=options, cache=False, progress=False)
    local = pp.score(rows, cache=False, progress=False)
    assert remote.height == local.height > 0
    same = [c for c in local.columns if c != "latency_s"]
    assert_same_rows(remote.select(same), local.select(same), "pair_id")


def test_form_pairs_check_groups_and_plan_read_object_uris(s3_bucket: Bucket) -> None:
    rows = jobs(groups=6)
    uri = _upload(s3_bucket, rows, parts=2)
    options = s3_bucket.server.storage_options()
    pairs = pp.form_pairs(uri, storage_options=options)
    assert isinstance(pairs, pl.LazyFrame)  # paths stay lazy, objects too
    assert pairs.collect().height == pp.form_pairs(rows).height
    assert pp.check_groups(uri, storage_options=options).collect().is_empty()
    assert pp.plan(uri, storage_options=options, cache=False).n_pairs == pairs.collect().height


def test_a_glob_of_objects_expands_to_each_object(s3_bucket: Bucket) -> None:
    uri = _upload(s3_bucket, jobs(groups=6), parts=3)
    source = input_files(uri, s3_bucket.server.storage_options())
    assert source.files == tuple(f"{s3_bucket.uri}/runs/part-{i}.parquet" for i in range(3))
    assert source.format == "parquet" and source.remote


def test_csv_objects_and_counterfactual_prompts_are_read_too(s3_bucket: Bucket) -> None:
    options = s3_bucket.server.storage_options()
    prompts = pl.DataFrame({"input": ["Should we hire John? He has ten years of experience."]})
    prompts.write_csv(f"{s3_bucket.uri}/prompts.csv", storage_options=options)
    made = pp.counterfactuals(f"{s3_bucket.uri}/prompts.csv", "gender", storage_options=options)
    local = pp.counterfactuals(prompts, "gender")
    assert made.drop("id").equals(local.drop("id")) or made.height == local.height > 1


def test_credentials_from_the_environment(
    s3_bucket: Bucket, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No storage_options: polars takes the provider's usual variables."""
    rows = jobs(groups=3)
    uri = _upload(s3_bucket, rows, parts=1)
    options = s3_bucket.server.storage_options()
    monkeypatch.setenv("AWS_ENDPOINT_URL", options["aws_endpoint_url"])
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", options["aws_access_key_id"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", options["aws_secret_access_key"])
    monkeypatch.setenv("AWS_REGION", options["aws_region"])
    monkeypatch.setenv("AWS_ALLOW_HTTP", "true")
    assert pp.form_pairs(uri).collect().height == pp.form_pairs(rows).height


def test_a_missing_object_is_named_and_the_secret_never_shown(s3_bucket: Bucket) -> None:
    options = s3_bucket.server.storage_options()
    with pytest.raises(DataSourceError) as glob_error:
        pp.form_pairs(f"{s3_bucket.uri}/nothing/*.parquet", storage_options=options)
    assert "nothing/*.parquet" in str(glob_error.value)
    with pytest.raises(DataSourceError) as missing:
        scan_data(f"{s3_bucket.uri}/absent.parquet", options)
    text = str(missing.value)
    assert "absent.parquet" in text and "storage_options" in text
    assert SECRET_KEY not in text + repr(missing.value)


def test_storage_options_are_checked_and_secrets_redacted() -> None:
    with pytest.raises(OptionError, match="mapping"):
        checked_options(["aws_region=x"])
    with pytest.raises(OptionError, match="aws_region"):
        checked_options({"aws_region": ["x"]})
    assert checked_options({"aws_allow_http": True}) == {"aws_allow_http": "true"}
    options = {"aws_secret_access_key": "s3cr3t-value", "aws_access_key_id": "AKIAEXAMPLE"}
    assert redact_options("denied for s3cr3t-value (AKIAEXAMPLE)", options) == (
        "denied for *** (AKIAEXAMPLE)"
    )
    assert is_uri("s3://b/k.parquet") and is_uri("hf://datasets/x/y") and not is_uri("a.parquet")


def test_score_parquet_reads_a_bucket_and_resumes(s3_bucket: Bucket, tmp_path: Path) -> None:
    rows = jobs(groups=12)
    uri = _upload(s3_bucket, rows)
    options = s3_bucket.server.storage_options()
    run = pp.score_parquet(
        uri, tmp_path / "out", chunk_size=20, cache=False, progress=False, storage_options=options
    )
    local = pp.score(rows, cache=False, progress=False)
    scored = run.scored().collect()
    assert_same_rows(scored.select("pair_id", "score"), local.select("pair_id", "score"), "pair_id")
    recorded = (tmp_path / "out" / "run.json").read_text()
    assert SECRET_KEY not in recorded and "storage_options" not in recorded
    again = pp.score_parquet(
        uri, tmp_path / "out", chunk_size=20, cache=False, progress=False, storage_options=options
    )
    assert again.scored().collect().height == scored.height


def test_the_manifest_reads_a_bucket_and_refuses_a_secret(
    s3_bucket: Bucket, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri = _upload(s3_bucket, jobs(groups=6), parts=2)
    options = s3_bucket.server.storage_options()
    secret = tmp_path / "secret.yaml"
    secret.write_text(
        f"targets:\n  t:\n    pairwise:\n      data: {uri}\n      storage_options:\n"
        f"        aws_secret_access_key: {SECRET_KEY}\n"
    )
    problems = validate_manifest(secret)
    assert [p.key for p in problems] == ["targets.t.pairwise.storage_options.aws_secret_access_key"]
    assert "environment" in problems[0].message
    good = tmp_path / "good.yaml"
    good.write_text(
        f"targets:\n  t:\n    pairwise:\n      data: {uri}\n      storage_options:\n"
        f"        aws_endpoint_url: {options['aws_endpoint_url']}\n"
        "        aws_region: us-east-1\n        aws_allow_http: true\n      cache: false\n"
    )
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", options["aws_access_key_id"])
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pairwise_polars",
            "run",
            str(good),
            "--output",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, 1), done.stderr
    assert "pairwise-bias" in done.stdout
    assert SECRET_KEY not in done.stdout + done.stderr


def test_the_cli_takes_storage_options(s3_bucket: Bucket, tmp_path: Path) -> None:
    uri = _upload(s3_bucket, jobs(groups=6), parts=2)
    flags = [f"--storage-option={k}={v}" for k, v in s3_bucket.server.storage_options().items()]
    out = tmp_path / "pairs.parquet"
    done = subprocess.run(
        [sys.executable, "-m", "pairwise_polars", "pairs", uri, "-o", str(out), *flags],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert pl.read_parquet(out).height == pp.form_pairs(jobs(groups=6)).height
    assert SECRET_KEY not in done.stdout + done.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "pairwise_polars", "pairs", uri, "--storage-option", SECRET_KEY],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and "KEY=VALUE" in bad.stderr
    assert SECRET_KEY not in bad.stderr


def test_pair_ids_in_a_csv_object_read_back_as_the_scored_frame_has_them(
    s3_bucket: Bucket,
) -> None:
    """An object holds a labelling sheet as the package writes it: its unsigned 64-bit pair ids
    read back as UInt64 (as from a local file) at every polars version; other text stays text."""
    options = s3_bucket.server.storage_options()
    ids = pl.Series("pair_id", [12906433255463780645, 5, 2**64 - 1], dtype=pl.UInt64)
    sheet = pl.DataFrame([ids, pl.Series("label", [1, None, 3])])
    sheet.write_csv(f"{s3_bucket.uri}/labels.csv", storage_options=options)
    back = scan_data(f"{s3_bucket.uri}/labels.csv", options).collect()
    assert back.schema["pair_id"] == pl.UInt64
    assert back["pair_id"].equals(ids)
    text = pl.DataFrame({"pair_id": ["a1", "5"], "label": [1, 2]})
    text.write_csv(f"{s3_bucket.uri}/text.csv", storage_options=options)
    assert scan_data(f"{s3_bucket.uri}/text.csv", options).collect()["pair_id"].to_list() == [
        "a1",
        "5",
    ]
