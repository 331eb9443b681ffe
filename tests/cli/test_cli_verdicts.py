"""Verdicts that hold on the command line: failed judgements exit 4 (no verdict), never 0 and
never the fairness gate's 1; thresholds outside [0, 1] exit 2 with the one message."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import polars as pl
import pytest

from pairwise_polars.cli import (
    EXIT_GATE_FAILED,
    EXIT_INCONCLUSIVE,
    EXIT_INVALID,
    EXIT_PASS,
    main,
)
from pairwise_polars.testing import Faults, TestServer

DATA = Path(__file__).resolve().parents[2] / "data"
RULE = (
    "must be a number from 0 to 1, got {value} (scores are normalised: raw rubric score / rubric "
    "max, so 2 on a 0-4 rubric is 0.5; rates, like max_error_rate, are shares of pairs)"
)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copy(DATA / "letters_contrastive.parquet", tmp_path / "letters.parquet")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def score_with_broken_judge(server: TestServer, *extra: str) -> int:
    server.faults = Faults(rate_malformed=1.0)  # every answer is truncated JSON
    argv = ["score", "letters.parquet", "--strategy", "contrastive", "-o", "s.parquet", "-q",
            "--judge", "judge", "--base-url", server.base_url, "--no-cache", *extra]  # fmt: skip
    return main(argv)


def test_score_exits_4_when_judgements_failed_and_still_writes_them(
    workdir: Path, capsys: pytest.CaptureFixture[str], judge_server: TestServer
) -> None:
    assert score_with_broken_judge(judge_server) == EXIT_INCONCLUSIVE
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "scored 60 (pair, metric) rows, 60 errors -> s.parquet"
    assert out[1].startswith("INCONCLUSIVE: judgements failed beyond max_error_rate")
    assert out[2].startswith(
        "  pairwise-bias [overall] max_error_rate 0.05: observed 1.0000 (60 of 60 judgements "
        "failed; commonest error: unparseable reply: "
    )
    scored = pl.read_parquet("s.parquet")
    assert scored["score"].null_count() == 60  # errors are rows with a null score, never 0
    # The same gate as gate(max_error_rate=...): raised to 1, nothing fails it.
    assert score_with_broken_judge(judge_server, "--max-error-rate", "1") == EXIT_PASS


def test_score_json_reports_the_status(
    workdir: Path, capsys: pytest.CaptureFixture[str], judge_server: TestServer
) -> None:
    assert score_with_broken_judge(judge_server, "--json") == EXIT_INCONCLUSIVE
    document = json.loads(capsys.readouterr().out)
    assert document["exit_code"] == EXIT_INCONCLUSIVE and document["status"] == "inconclusive"
    assert [c["gate"] for c in document["checks"]] == ["max_error_rate"]


def test_a_clean_run_exits_0(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["score", "letters.parquet", "--strategy", "contrastive", "-o", "s.parquet", "-q"]
    assert main(argv) == EXIT_PASS
    assert capsys.readouterr().out == "scored 60 (pair, metric) rows, 0 errors -> s.parquet\n"


def test_summarize_and_report_tell_errors_from_unfairness(
    workdir: Path, capsys: pytest.CaptureFixture[str], judge_server: TestServer
) -> None:
    score_with_broken_judge(judge_server)
    capsys.readouterr()
    argv = ["summarize", "s.parquet", "--max-mean-divergence", "0.5", "-q"]
    assert main(argv) == EXIT_INCONCLUSIVE
    assert capsys.readouterr().out.startswith("INCONCLUSIVE: judgements failed beyond")
    argv = ["report", "s.parquet", "-o", "r.html", "--max-mean-divergence", "0.5", "-q"]
    assert main(argv) == EXIT_INCONCLUSIVE
    html = Path("r.html").read_text(encoding="utf-8")
    assert '<section class="verdict inconclusive" id="verdict">' in html
    assert '<div class="headline">INCONCLUSIVE</div>' in html
    # A measured run that is unfair still exits 1.
    main(["score", "letters.parquet", "--strategy", "contrastive", "-o", "h.parquet", "-q"])
    capsys.readouterr()
    assert main(["summarize", "h.parquet", "--max-mean-divergence", "0", "-q"]) == EXIT_GATE_FAILED
    assert capsys.readouterr().out.startswith("FAIL: ")


@pytest.mark.parametrize(("text", "shown"), [("nan", "nan"), ("-1", "-1"), ("2", "2"),
                                              ("inf", "inf"), ("half", "'half'")])  # fmt: skip
def test_cli_thresholds_are_refused_with_the_one_message(
    workdir: Path, capsys: pytest.CaptureFixture[str], text: str, shown: str
) -> None:
    main(["score", "letters.parquet", "--strategy", "contrastive", "-o", "h.parquet", "-q"])
    capsys.readouterr()
    for option in ("--max-mean-divergence", "--min-equivalence-rate", "--max-error-rate"):
        assert main(["summarize", "h.parquet", option, text]) == EXIT_INVALID
        err = capsys.readouterr().err
        assert f"argument {option}: {RULE.format(value=shown)}. See pairwise-polars" in err, err
    argv = ["score", "letters.parquet", "-o", "x.parquet", "--max-error-rate", text]
    assert main(argv) == EXIT_INVALID
    assert not Path("x.parquet").exists()


def write_manifest(body: str) -> str:
    Path("m.yaml").write_text(textwrap.dedent(body).lstrip("\n"), encoding="utf-8")
    return "m.yaml"


MANIFEST = """
targets:
  letters:
    pairwise:
      data: letters.parquet
      strategy: contrastive
      metrics: [pairwise-bias]
      judge: {{model: judge, base_url: "{url}"}}
      cache: false
      gates:
        overall: {{max_mean_divergence: 0.9{extra}}}
"""


def test_a_manifest_run_with_failed_judgements_exits_4_not_1(
    workdir: Path, capsys: pytest.CaptureFixture[str], judge_server: TestServer
) -> None:
    judge_server.faults = Faults(rate_malformed=1.0)
    manifest = write_manifest(MANIFEST.format(url=judge_server.base_url, extra=""))
    assert main(["run", manifest, "-q"]) == EXIT_INCONCLUSIVE
    out = capsys.readouterr().out
    assert out.startswith("letters: INCONCLUSIVE: judgements failed beyond max_error_rate")
    assert "60 of 60 judgements failed" in out
    document_code = main(["run", manifest, "--json"])
    document = json.loads(capsys.readouterr().out)
    assert document_code == document["exit_code"] == EXIT_INCONCLUSIVE
    assert document["targets"]["letters"]["status"] == "inconclusive"
    # max_error_rate: null switches the error gate off; the fairness gate still fails closed
    # on a slice with no scored pair (unknown is not fair), and still says why.
    manifest = write_manifest(
        MANIFEST.format(url=judge_server.base_url, extra=", max_error_rate: null")
    )
    assert main(["run", manifest, "-q"]) == EXIT_INCONCLUSIVE
    assert "no scored pairs: unknown is not fair" in capsys.readouterr().out


@pytest.mark.parametrize(("value", "shown"), [(".nan", "nan"), ("-.inf", "-inf"), ("4", "4"),
                                               ("-1", "-1"), ("yes", "True")])  # fmt: skip
def test_manifest_thresholds_are_refused_with_the_one_message(
    workdir: Path, capsys: pytest.CaptureFixture[str], value: str, shown: str
) -> None:
    manifest = write_manifest(f"""
        targets:
          letters:
            pairwise:
              data: letters.parquet
              strategy: contrastive
              gates:
                overall: {{max_error_rate: {value}}}
                per_slice: {{max_mean_divergence: {{pairwise-bias: {value}}}}}
        """)
    assert main(["validate", manifest]) == EXIT_INVALID
    err = capsys.readouterr().err
    rule = RULE.format(value=shown)
    assert f"m.yaml:7: targets.letters.pairwise.gates.overall.max_error_rate: {rule}" in err
    key = "targets.letters.pairwise.gates.per_slice.max_mean_divergence.pairwise-bias"
    assert f"m.yaml:8: {key}: {rule}" in err


def test_a_chunked_run_with_failed_judgements_exits_4_and_keeps_its_parts(
    workdir: Path, capsys: pytest.CaptureFixture[str], judge_server: TestServer
) -> None:
    judge_server.faults = Faults(rate_malformed=1.0)
    argv = ["score", "letters.parquet", "--strategy", "contrastive", "--run-dir", "run", "-q",
            "--judge", "judge", "--base-url", judge_server.base_url, "--no-cache",
            "--chunk-size", "20"]  # fmt: skip
    assert main(argv) == EXIT_INCONCLUSIVE
    out = capsys.readouterr().out
    assert "60 of 60 judgements failed" in out
    assert pl.scan_parquet("run/scored/part-*.parquet").collect().height == 60
