"""Errors that used to be raw (exit 3) or spoke Python to a CLI user: each is one line naming the
thing and the fix, exit 2, no traceback; a manifest's secrets are treated as code."""

from __future__ import annotations

import hashlib
import os
import resource
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pytest

import pairwise_polars as pp
from pairwise_polars.cli import EXIT_INCONCLUSIVE, EXIT_INVALID, EXIT_PASS, main
from pairwise_polars.testing import TestServer

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copy(DATA / "letters_contrastive.parquet", tmp_path / "letters.parquet")
    shutil.copy(DATA / "jobs_group.parquet", tmp_path / "jobs.parquet")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(name: str, text: str) -> str:
    Path(name).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return name


def one_line_error(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), err
    assert "Traceback" not in err
    return lines[0]


# -- the CLI speaks flags and manifest keys ---------------------------------------------------


def test_a_column_error_names_the_flag_or_the_manifest_key(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pl.read_parquet("jobs.parquet").rename({"group_id": "prompt"}).write_parquet("r.parquet")
    assert main(["pairs", "r.parquet"]) == EXIT_INVALID
    err = capsys.readouterr().err
    assert err.startswith("Error: Missing column 'group_id' (the group of rows sent for the same ")
    assert err.endswith(". Map your column names with --column group_by=<your column>.\n")
    assert "form_pairs" not in err
    write("m.yaml", "targets: {t: {pairwise: {data: r.parquet}}}\n")
    assert main(["run", "m.yaml"]) == EXIT_INVALID
    err = capsys.readouterr().err
    assert err.endswith(
        ". Map your column names in the block's columns: {group_by: <your column>}.\n"
    )


def test_invalid_groups_name_on_invalid_and_the_skip_warning_prints_once(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["score", "letters.parquet", "-o", "s.parquet"]) == EXIT_INVALID
    err = capsys.readouterr().err
    assert err.endswith(
        "`pairwise-polars pairs DATA --diagnostics FILE` lists them all; fix the data, or pass "
        "--on-invalid skip to leave these groups out.\n"
    )
    assert 'on_invalid="skip"' not in err and "check_groups" not in err
    argv = ["score", "letters.parquet", "--run-dir", "run", "--on-invalid", "skip",
            "--chunk-size", "10", "-q"]  # fmt: skip
    assert main(argv) == EXIT_INCONCLUSIVE  # every group left out: nothing scored, no verdict
    err = capsys.readouterr().err
    assert err.count("Warning: Skipped 60 of 60 groups") == 1
    assert err.rstrip().endswith("`pairwise-polars pairs DATA --diagnostics FILE` lists them all.")
    write("m.yaml", "targets: {t: {pairwise: {data: letters.parquet}}}\n")
    assert main(["run", "m.yaml"]) == EXIT_INVALID
    assert capsys.readouterr().err.endswith(
        "fix the data, or set on_invalid: skip in the block to leave these groups out.\n"
    )


def test_empty_input_exits_2(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pl.read_parquet("jobs.parquet").head(0).write_csv("empty.csv")
    assert main(["score", "empty.csv", "-o", "s.parquet"]) == EXIT_INVALID
    assert one_line_error(capsys.readouterr().err) == (
        "Error: The input ('empty.csv') has no rows: there is nothing to pair or judge. Check "
        "the source (the path, a filter that removed every row)."
    )
    assert not Path("s.parquet").exists()


def test_report_keeps_every_by(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["score", "jobs.parquet", "-o", "s.parquet", "-q"]
    assert main(argv) == EXIT_PASS
    assert main(["report", "s.parquet", "-o", "r.html", "--by", "dimension", "--by", "model_b",
                 "--json"]) == EXIT_PASS  # fmt: skip
    capsys.readouterr()
    html = Path("r.html").read_text(encoding="utf-8")
    assert "<th>dimension</th><th>model_b</th>" in html
    assert main(["summarize", "s.parquet", "--by", "dimension", "--by", "model_b", "-o",
                 "s.csv"]) == EXIT_PASS  # fmt: skip
    assert pl.read_csv("s.csv").columns[:4] == ["metric", "scope", "dimension", "model_b"]


# -- item 6: raw errors that exited 3 ---------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--chunk-size", "0", "--run-dir", "r"],
         "argument --chunk-size: must be at least 1, got 0"),
        (["--max-concurrency", "0", "-o", "s.parquet"],
         "argument --max-concurrency: must be at least 1, got 0"),
        (["--requests-per-minute", "-1", "-o", "s.parquet"],
         "argument --requests-per-minute: must be a number above 0, got -1"),
        (["--tokens-per-minute", "nan", "-o", "s.parquet"],
         "argument --tokens-per-minute: must be a number above 0, got nan"),
    ],
)  # fmt: skip
def test_bad_numeric_flags(
    workdir: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    assert main(["score", "jobs.parquet", *flags]) == EXIT_INVALID
    assert one_line_error(capsys.readouterr().err) == (
        f"Error: pairwise-polars score: {message}. See pairwise-polars score --help."
    )


def test_mixed_schemas_and_a_truncated_file_are_named(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = pl.read_parquet("jobs.parquet")
    Path("runs").mkdir()
    rows.head(100).write_parquet("runs/a.parquet")
    rows.slice(100).with_columns(pl.col("id").cast(pl.String)).write_parquet("runs/b.parquet")
    assert main(["score", "runs", "-o", "s.parquet"]) == EXIT_INVALID
    assert one_line_error(capsys.readouterr().err).startswith(
        "Error: 'runs/b.parquet' does not share the schema of 'runs/a.parquet' (the first "
        "file): column 'id' is String here and Int64 in the first file."
    )
    rows.slice(100).write_parquet("runs/b.parquet")
    data = Path("runs/b.parquet").read_bytes()
    Path("runs/b.parquet").write_bytes(data[: len(data) - 100])
    assert main(["score", "runs", "--run-dir", "out"]) == EXIT_INVALID
    assert one_line_error(capsys.readouterr().err).startswith(
        "Error: Cannot read 'runs/b.parquet' as parquet: "
    )


def test_a_corrupt_cache_is_named_and_left_alone(
    workdir: Path, capsys: pytest.CaptureFixture[str], judge_server: TestServer
) -> None:
    Path("cache.sqlite").write_bytes(b"this is not a database, it is a shopping list\n" * 50)
    before = hashlib.sha256(Path("cache.sqlite").read_bytes()).hexdigest()
    argv = ["score", "jobs.parquet", "-o", "s.parquet", "--judge", "judge-small", "--base-url",
            judge_server.base_url, "--cache", "cache.sqlite"]  # fmt: skip
    assert main(argv) == EXIT_INVALID
    assert one_line_error(capsys.readouterr().err) == (
        "Error: Cannot open the judgement cache 'cache.sqlite': the file is not a SQLite "
        "database. Run with --no-cache (or --cache OTHER.sqlite), or move the file away to start "
        "a new cache there; the file was not modified."
    )
    assert hashlib.sha256(Path("cache.sqlite").read_bytes()).hexdigest() == before
    assert judge_server.stats.requests == 0  # nothing paid for


def test_a_damaged_database_is_named_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    pp.JudgementCache(path).close()
    data = bytearray(path.read_bytes())
    data[100:4096] = bytes(range(256)) * 15 + bytes(range(156))  # the first page, past the header
    path.write_bytes(bytes(data))
    judge = pp.OpenAIJudge("m", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(pp.CacheError) as info:
        pp.score(DATA / "jobs_group.parquet", cache=path, judge=judge, progress=False)
    assert str(info.value).startswith(f"Cannot open the judgement cache {str(path)!r}: ")
    assert str(info.value).endswith("the file was not modified.")
    assert path.read_bytes() == bytes(data)


def test_a_full_output_is_found_before_judging(
    workdir: Path, capsys: pytest.CaptureFixture[str], judge_server: TestServer
) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    argv = ["score", "jobs.parquet", "-o", "/dev/full", "--judge", "judge-small", "--base-url",
            judge_server.base_url, "--no-cache"]  # fmt: skip
    assert main(argv) == EXIT_INVALID
    assert one_line_error(capsys.readouterr().err) == (
        "Error: Cannot write the scored frame (-o) '/dev/full': no space left on the device (the "
        "disk or the quota is full)."
    )
    assert judge_server.stats.requests == 0  # checked before any judgement was paid for


def _limited(size: int) -> None:  # in the child: writes past `size` bytes fail (EFBIG)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))


def _cli(args: list[str], limit: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pairwise_polars", *args],
        capture_output=True, text=True, timeout=120, check=False,
        preexec_fn=lambda: _limited(limit), env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )  # fmt: skip


def test_a_run_directory_that_fills_up_says_which_file(workdir: Path) -> None:
    done = _cli(["score", "jobs.parquet", "--run-dir", "run", "--no-cache", "-q"], limit=20_000)
    assert done.returncode == EXIT_INVALID, done.stderr
    line = one_line_error(done.stderr)
    assert line.startswith("Error: Cannot write the run's file 'run/scored/part-000000.parquet': ")
    assert "file size limit" in line and "run the same call again" in line


def test_a_cache_that_fills_up_says_so(workdir: Path, judge_server: TestServer) -> None:
    args = ["score", "jobs.parquet", "-o", "s.parquet", "--judge", "judge-small", "--base-url",
            judge_server.base_url, "--cache", "c.sqlite", "-q"]  # fmt: skip
    done = _cli(args, limit=40_000)
    assert done.returncode == EXIT_INVALID, done.stderr
    assert one_line_error(done.stderr).startswith("Error: Cannot write the judgement cache ")


# -- manifests: deep YAML, templates that load files or grow without bound ---------------------


def test_deeply_nested_yaml_is_a_manifest_problem(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("m.yaml").write_text("targets: " + "[" * 5000 + "]" * 5000 + "\n")
    assert main(["validate", "m.yaml"]) == EXIT_INVALID
    err = capsys.readouterr().err
    assert err.startswith("Error: Manifest 'm.yaml' has 1 problem:\n  m.yaml:1: the YAML nests too")
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("user", "message"),
    [
        ("{% include 'secrets.txt' %}", "uses {% include %} on line 1; a metric template is one"),
        ("{% extends 'base.j2' %}", "uses {% extends %} on line 1"),
        ("{% import 'x.j2' as x %}{{ output_a }}", "uses {% import %} on line 1"),
    ],
)
def test_templates_that_load_files_are_refused_at_load(
    workdir: Path, capsys: pytest.CaptureFixture[str], user: str, message: str
) -> None:
    write("metric.yaml", f"""
        name: tricky
        kind: pairwise
        version: "1"
        rubric: {{max: 2}}
        system: Compare.
        user: "{user}"
        """)  # fmt: skip
    write(
        "m.yaml",
        """
        targets:
          t:
            pairwise: {data: jobs.parquet, metrics: [metric.yaml]}
        """,
    )
    assert main(["validate", "m.yaml"]) == EXIT_INVALID
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("user", "message"),
    [
        ("{% for i in range(10**9) %}x{% endfor %}{{ output_a }}", "Range too big"),
        ("{{ output_a * 10**9 }}", "exceeds the template limit of 1,000,000"),
        ("{{ 'ab' * 1000 * 1000 }}", "exceeds the template limit of 1,000,000"),
        ("{{ 10 ** 100000 }}", "is too large for a template"),
        ("{{ output_a|center(10**9) }}", "the center filter's width exceeds the limit"),
    ],
)
def test_templates_that_grow_without_bound_are_template_errors(
    workdir: Path, capsys: pytest.CaptureFixture[str], user: str, message: str
) -> None:
    write("metric.yaml", f"""
        name: greedy
        kind: pairwise
        version: "1"
        rubric: {{max: 2}}
        system: Compare.
        user: "{user}"
        """)  # fmt: skip
    argv = ["score", "jobs.parquet", "-o", "s.parquet", "-m", "metric.yaml", "--judge",
            "judge-small", "--base-url", "http://127.0.0.1:9"]  # fmt: skip
    assert main(argv) == EXIT_INVALID
    line = one_line_error(capsys.readouterr().err)
    assert line.startswith("Error: Metric 'greedy' (metric.yaml) failed to render: ")
    assert message in line


# -- item 7: a manifest is code -----------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "HOME", "CI_JOB_TOKEN", "CARGO_REGISTRY_TOKEN",
     "STRIPE_API_KEY", "SLACK_BOT_TOKEN", "MY_JUDGE_API_KEY"],
)  # fmt: skip
def test_a_manifest_cannot_send_any_variable_as_a_key(
    workdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv(name, "s3cr3t-value")
    write(
        "m.yaml",
        f"""
        targets:
          t:
            pairwise:
              data: jobs.parquet
              judge: {{model: m, base_url: "http://127.0.0.1:9/v1", api_key_env: {name}}}
        """,
    )
    assert main(["run", "m.yaml"]) == EXIT_INVALID
    err = capsys.readouterr().err
    assert f"m.yaml:5: targets.t.pairwise.judge.api_key_env: {name!r} " in err
    assert f"--allow-key-env {name}" in err and "s3cr3t-value" not in err
    # The user who runs the command may allow it; then validation passes.
    assert main(["validate", "m.yaml", "--allow-key-env", name]) == EXIT_PASS


def test_provider_key_names_need_no_opt_in(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        write(
            "m.yaml",
            f"""
            targets:
              t: {{pairwise: {{data: jobs.parquet, judge: {{model: m, api_key_env: {name}}}}}}}
            """,
        )
        assert main(["validate", "m.yaml", "-q"]) == EXIT_PASS, capsys.readouterr().err
