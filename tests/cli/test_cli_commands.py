"""The one-off commands (validate, pairs, score, summarize, report, serve-test-judge), usage."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from pairwise_polars import __version__
from pairwise_polars.cli import EXIT_GATE_FAILED, EXIT_INVALID, EXIT_PASS, main
from pairwise_polars.testing import TestServer

DATA = Path(__file__).resolve().parents[2] / "data"
LETTERS = str(DATA / "letters_contrastive.parquet")


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The letters sample scored offline by the CLI (two metrics), shared by this module."""
    path = tmp_path_factory.mktemp("scored") / "scored.parquet"
    code = main(["score", LETTERS, "--strategy", "contrastive", "-m", "pairwise-refusal-disparity",
                 "-m", "pairwise-bias", "-o", str(path), "--quiet"])  # fmt: skip
    assert code == EXIT_PASS
    return str(path)


def test_usage_help_and_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == EXIT_INVALID
    assert capsys.readouterr().err.startswith("usage: pairwise-polars [-h]")
    assert main(["--version"]) == EXIT_PASS
    assert capsys.readouterr().out == f"pairwise-polars {__version__}\n"
    assert main(["run"]) == EXIT_INVALID
    assert capsys.readouterr().err == (
        "Error: pairwise-polars run: the following arguments are required: MANIFEST. See "
        "pairwise-polars run --help.\n"
    )
    assert main(["validate", "m.yaml", "--frobnicate"]) == EXIT_INVALID
    assert capsys.readouterr().err == (
        "Error: pairwise-polars: unrecognized arguments: --frobnicate. See pairwise-polars "
        "--help.\n"
    )
    assert main(["run", "--help"]) == EXIT_PASS
    assert "--dry-run" in capsys.readouterr().out


def test_validate(capsys: pytest.CaptureFixture[str]) -> None:
    example = str(DATA / "example.yaml")
    assert main(["validate", example]) == EXIT_PASS
    assert capsys.readouterr().out == f"OK: {example} is valid (2 targets: letters, jobs).\n"
    assert main(["validate", example, "--json"]) == EXIT_PASS
    assert json.loads(capsys.readouterr().out) == {
        "valid": True, "manifest": example, "targets": ["letters", "jobs"], "exit_code": 0,
    }  # fmt: skip


def test_pairs_shows_writes_and_diagnoses(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["pairs", LETTERS, "--strategy", "contrastive", "--limit", "2", "-o", "p/pairs.parquet"]
    assert main(argv) == EXIT_PASS
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == ["groups: every group can form pairs", "60 pairs in 60 groups"]
    assert out[2].startswith("| group_id         |              pair_id | dimension | role_a |")
    assert out[4].startswith("| letters-actor-20 | ") and len(out) == 7
    assert out[-1] == "wrote p/pairs.parquet"
    assert pl.read_parquet("p/pairs.parquet").height == 60

    # The letters have no reference role: as group pairs, every group is invalid.
    assert main(["pairs", LETTERS, "--diagnostics", "d.parquet"]) == EXIT_INVALID
    captured = capsys.readouterr()
    assert captured.out.startswith(
        "invalid groups (60):\n  no_reference: 60 group(s), e.g. 'letters-actor-20', "
        "'letters-actor-30', 'letters-actor-40'\n"
    )
    assert captured.err.startswith(
        "Error: 60 of 60 groups cannot form 'group' pairs (group column 'group_id', role column "
        "'role'):\n"
    )
    assert pl.read_parquet("d.parquet")["problem"].unique().to_list() == ["no_reference"]

    assert main(["pairs", LETTERS, "--on-invalid", "skip", "-q"]) == EXIT_PASS
    captured = capsys.readouterr()
    assert captured.out == "0 pairs in 0 groups\n"
    assert captured.err.startswith(
        "Warning: Skipped 60 of 60 groups that cannot form 'group' pairs:\n"
    )


def test_pairs_column_mapping(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pl.read_parquet(LETTERS).rename({"group_id": "prompt_id", "output": "response"}).write_parquet(
        "renamed.parquet"
    )
    argv = ["pairs", "renamed.parquet", "--strategy", "contrastive", "--column",
            "group_by=prompt_id", "--column", "output=response", "--json"]  # fmt: skip
    assert main(argv) == EXIT_PASS
    document = json.loads(capsys.readouterr().out)
    assert (document["n_pairs"], document["n_groups"], document["problems"]) == (60, 60, {})
    assert main(["pairs", "renamed.parquet", "--column", "group=prompt_id"]) == EXIT_INVALID
    assert capsys.readouterr().err == (
        "Error: --column expects FIELD=NAME with FIELD one of group_by, role, dimension, "
        "attribute, input, output, id; got 'group=prompt_id'. Example: --column "
        "group_by=prompt_id.\n"
    )
    assert main(["pairs", "missing.parquet"]) == EXIT_INVALID
    assert capsys.readouterr().err == (
        "Error: Input file 'missing.parquet' does not exist. Check the path, or pass a "
        "folder or a glob such as 'runs/*.parquet'.\n"
    )


def test_score_rows_or_a_pair_frame(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pairs", LETTERS, "--strategy", "contrastive", "-o", "pairs.parquet", "-q"]) == 0
    assert main(["score", "pairs.parquet", "-o", "a.parquet", "--dry-run"]) == EXIT_PASS
    out = capsys.readouterr().out
    assert "pairs: 60 (0 not judgeable)\n" in out and not Path("a.parquet").exists()
    assert out.endswith("Dry run: nothing was judged or written.\n")
    assert main(["score", "pairs.parquet", "-o", "a.parquet", "-q"]) == EXIT_PASS
    assert capsys.readouterr().out == ("scored 60 (pair, metric) rows, 0 errors -> a.parquet\n")
    main(["score", LETTERS, "--strategy", "contrastive", "-o", "b.parquet", "-q"])
    capsys.readouterr()
    a, b = pl.read_parquet("a.parquet"), pl.read_parquet("b.parquet")
    assert (
        a.select("pair_id", "score")
        .sort("pair_id")
        .equals(b.select("pair_id", "score").sort("pair_id"))
    )
    assert main(["score", LETTERS, "-o", "c.parquet", "-m", "pairwise-bais"]) == EXIT_INVALID
    assert capsys.readouterr().err.startswith("Error: Unknown metric 'pairwise-bais'.")


def test_score_with_an_llm_judge_over_http(
    workdir: Path, capsys: pytest.CaptureFixture[str], judge_server: TestServer
) -> None:
    argv = ["score", LETTERS, "--strategy", "contrastive", "-o", "s.parquet", "--judge",
            "judge-small", "--base-url", judge_server.base_url, "--max-concurrency", "8",
            "--both-orders", "--cache", "cache.sqlite", "--json"]  # fmt: skip
    assert main(argv) == EXIT_PASS
    document = json.loads(capsys.readouterr().out)
    assert document["plan"]["n_to_send"] == 120 and document["n_errors"] == 0
    assert judge_server.stats.requests == 120
    scored = pl.read_parquet("s.parquet")
    assert scored["judge_model"].unique().to_list() == ["judge-small"]
    assert {"score_ab", "score_ba", "position_gap"} <= set(scored.columns)


def test_option_errors_exit_2_with_the_fix(
    workdir: Path, capsys: pytest.CaptureFixture[str], scored: str
) -> None:
    argv = ["score", LETTERS, "-o", "x.parquet", "--judge", "m", "--base-url", "http://127.0.0.1:9",
            "--max-concurrency", "0"]  # fmt: skip
    assert main(argv) == EXIT_INVALID
    assert capsys.readouterr().err == (
        "Error: pairwise-polars score: argument --max-concurrency: must be at least 1, got 0. "
        "See pairwise-polars score --help.\n"
    )
    argv = [
        "score",
        LETTERS,
        "-o",
        "x.parquet",
        "--judge",
        "m",
        "--batch",
        "--max-concurrency",
        "4",
    ]
    assert main(argv) == EXIT_INVALID
    assert "The Batch API judge has no max_concurrency" in capsys.readouterr().err
    chat = [*argv[:-3], "--poll-interval", "2"]  # polling is the Batch API judge's alone
    assert main(chat) == EXIT_INVALID
    assert "The chat judge has no poll_interval" in capsys.readouterr().err
    assert main(["summarize", scored, "--by", "scope"]) == EXIT_INVALID  # not a crash (exit 3)
    assert "clash with summary column names" in capsys.readouterr().err


def test_summarize(scored: str, workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["summarize", scored]) == EXIT_PASS
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split("|")[1:4] == [" metric                     ", " dimension ", " pairs "]
    assert lines[2].startswith("| pairwise-refusal-disparity | overall   |    60 |     60 |")
    assert len(lines) == 6

    assert main(["summarize", scored, "--by", "-o", "s.csv", "-q"]) == EXIT_PASS
    assert pl.read_csv("s.csv").select("metric", "scope").rows() == [
        ("pairwise-refusal-disparity", "overall"), ("pairwise-bias", "overall"),
    ]  # fmt: skip
    assert main(["summarize", scored, "--by", "dimension", "attribute_b", "-o", "s.parquet"]) == 0
    assert pl.read_parquet("s.parquet").columns[:4] == [
        "metric",
        "scope",
        "dimension",
        "attribute_b",
    ]
    capsys.readouterr()

    argv = ["summarize", scored, "--max-mean-divergence", "0.02", "-o", "s.md"]
    assert main(argv) == EXIT_GATE_FAILED
    out = capsys.readouterr().out
    bias = pl.read_parquet(scored).filter(metric="pairwise-bias")["score"].mean()
    # bias fails (its interval lies above 0.02); no refusal in 60 pairs is [0, 0.063]: it
    # straddles 0.02, so those checks are undecided, and the fail is reported beside them
    assert (
        "FAIL: 4 of 8 gate checks passed. Also inconclusive: an interval straddles its threshold.\n"
    ) in out
    for where in ("overall", "dimension=gender"):
        assert (
            f"  pairwise-bias [{where}] max_mean_divergence 0.02: observed {bias:.4f} (interval ["
        ) in out
        assert f"  pairwise-refusal-disparity [{where}] max_mean_divergence 0.02: " in out
    assert Path("s.md").read_text().startswith("| metric ")
    argv = ["summarize", scored, "--max-mean-divergence", "0.8", "--conservative", "--json"]
    assert main(argv) == EXIT_PASS
    document = json.loads(capsys.readouterr().out)
    assert document["passed"] is True and len(document["summary"]) == 4
    assert {c["note"] for c in document["checks"] if c["gate"] != "max_error_rate"} == {
        "on the interval bound mean_divergence_high"
    }

    assert main(["summarize", scored, "-o", "s.txt"]) == EXIT_INVALID
    assert capsys.readouterr().err == (
        "Error: Cannot write the summary (-o; .md for the table shown) 's.txt': its suffix picks "
        "the format, so name it .parquet, .csv, .tsv, .ndjson/.jsonl or .json.\n"
    )
    assert main(["summarize", scored, "--by", "model"]) == EXIT_INVALID
    assert capsys.readouterr().err.startswith("Error: aggregate needs columns ['model']")


def test_report(scored: str, workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", scored, "-o", "r/report.html", "--title", "Letters <audit>"]) == 0
    assert capsys.readouterr().out == f"wrote {Path('r/report.html')}\n"
    html = Path("r/report.html").read_text(encoding="utf-8")
    assert "<title>Letters &lt;audit&gt;</title>" in html
    assert '<section class="verdict none" id="verdict">' in html
    argv = ["report", scored, "-o", "g.html", "--max-mean-divergence", "0.02", "-q"]
    assert main(argv) == EXIT_GATE_FAILED
    assert capsys.readouterr().out.startswith("FAIL: 4 of 8 gate checks passed. Also incon")
    assert '<section class="verdict fail" id="verdict">' in Path("g.html").read_text()


def test_serve_test_judge(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve-test-judge", "--help"]) == EXIT_PASS
    assert "--rate-429 RATE" in capsys.readouterr().out
    assert main(["serve-test-judge", "--latency", "-1"]) == EXIT_INVALID
    assert capsys.readouterr().err == "error: latency must not be negative, got -1.0.\n"
    # python -m pairwise_polars: serves until SIGTERM, then exits 0.
    with subprocess.Popen(
        [sys.executable, "-m", "pairwise_polars", "serve-test-judge", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    ) as server:  # fmt: skip
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        server.send_signal(signal.SIGTERM)
        _, err = server.communicate(timeout=30)
    assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
    assert (server.returncode, err) == (0, "served 0 requests (none)\n")
