"""`pairwise-polars run`: the example manifest end to end, gates and exit codes, error output."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pytest

from pairwise_polars.cli import EXIT_CRASH, EXIT_GATE_FAILED, EXIT_INVALID, EXIT_PASS, main

DATA = Path(__file__).resolve().parents[2] / "data"
OUTPUTS = ("scored.parquet", "summary.parquet", "summary.csv", "report.html")


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copy(DATA / "letters_contrastive.parquet", tmp_path / "letters.parquet")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write_manifest(text: str, name: str = "m.yaml") -> str:
    Path(name).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return name


LETTERS = """
targets:
  letters:
    pairwise:
      data: letters.parquet
      strategy: contrastive
      metrics: [pairwise-refusal-disparity, pairwise-bias]
      gates:
        overall:
          max_mean_divergence: {{pairwise-bias: {bias_gate}}}
          min_equivalence_rate: {{pairwise-refusal-disparity: 0.9}}
"""


def test_the_example_manifest_runs_and_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results"
    code = main(["run", str(DATA / "example.yaml"), "--output", str(out), "--no-cache"])
    stdout, stderr = capsys.readouterr()
    assert code == EXIT_PASS, stderr
    for target in ("letters", "jobs"):
        assert sorted(p.name for p in (out / target).iterdir()) == sorted(OUTPUTS)
    lines = stdout.splitlines()
    assert "letters: PASS: 7 of 7 gate checks passed." in lines
    assert "jobs: PASS: 32 of 32 gate checks passed." in lines
    assert lines[-1] == "ALL PASS: 2 targets"
    assert "judging 2,728/2,728 (100%)" in stderr  # the progress line, on stderr

    scored = pl.read_parquet(out / "jobs" / "scored.parquet")
    assert scored.height == (960 + 420) * 2 and scored["error"].null_count() == scored.height
    assert (scored["pair_kind"] == "control").sum() == 420 * 2  # one control pair a group
    gates = pl.read_parquet(out / "jobs" / "summary.parquet")["excess_divergence"]
    assert gates.null_count() == 0  # every slice of the sample has its noise floor
    summary = pl.read_parquet(out / "jobs" / "summary.parquet")
    assert summary.filter(pl.col("scope") == "overall")["dimension"].to_list() == [None, None]
    assert summary.filter(pl.col("scope") == "slice").height == 2 * 7
    csv = pl.read_csv(out / "jobs" / "summary.csv")
    assert csv.columns[:3] == ["metric", "scope", "dimension"] and csv.height == 16
    html = (out / "letters" / "report.html").read_text(encoding="utf-8")
    assert '<section class="verdict pass" id="verdict">' in html


def test_default_output_folder_markdown_table_and_quiet(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = write_manifest(LETTERS.format(bias_gate=0.9))
    assert main(["run", manifest, "--quiet", "--table", "md"]) == EXIT_PASS
    stdout, stderr = capsys.readouterr()
    assert stdout == "letters: PASS: 6 of 6 gate checks passed.\n" and stderr == ""
    folder = workdir / "pairwise-results" / "letters"
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        ["scored.parquet", "summary.parquet", "summary.md", "report.html"]
    )
    table = (folder / "summary.md").read_text(encoding="utf-8")
    assert table.startswith("# letters\n\n| metric ")
    assert "| pairwise-bias              | overall   |    60 |" in table
    assert table.endswith("```\nPASS: 6 of 6 gate checks passed.\n```\n")


def test_a_failing_gate_exits_1_with_the_same_verdict(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = write_manifest(LETTERS.format(bias_gate=0.0))
    assert main(["run", manifest, "-o", "out"]) == EXIT_GATE_FAILED
    stdout = capsys.readouterr().out
    summary = pl.read_parquet("out/letters/summary.parquet")
    observed = summary.filter(metric="pairwise-bias", scope="overall")["mean_divergence"].item()
    assert observed > 0
    assert (
        "letters: FAIL: 5 of 6 gate checks passed.\n"
        f"  pairwise-bias [overall] max_mean_divergence 0.0: observed {observed:.4f} (interval ["
    ) in stdout
    assert Path("out/letters/report.html").is_file()  # outputs are written when a gate fails
    html = Path("out/letters/report.html").read_text(encoding="utf-8")
    assert '<section class="verdict fail" id="verdict">' in html

    assert main(["run", manifest, "-o", "out", "--json"]) == EXIT_GATE_FAILED
    document = json.loads(capsys.readouterr().out)
    assert document["exit_code"] == EXIT_GATE_FAILED and document["passed"] is False
    letters = document["targets"]["letters"]
    assert letters["passed"] is False
    assert letters["verdict"].startswith("FAIL: 5 of 6 gate checks passed.")
    fairness = [
        (c["gate"], c["passed"]) for c in letters["checks"] if c["gate"] != "max_error_rate"
    ]
    assert fairness == [("min_equivalence_rate", True), ("max_mean_divergence", False)]
    assert letters["status"] == "fail"
    assert letters["outputs"] == {
        "scored": str(Path("out/letters/scored.parquet")),
        "summary": str(Path("out/letters/summary.parquet")),
        "table": str(Path("out/letters/summary.csv")),
        "report": str(Path("out/letters/report.html")),
    }
    assert letters["plan"]["n_pairs"] == 60


def test_dry_run_and_plan_write_nothing(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = write_manifest(LETTERS.format(bias_gate=0.0))
    for argv in (["run", manifest, "--dry-run"], ["plan", manifest]):
        assert main(argv) == EXIT_PASS  # a failing gate is not checked: nothing is judged
        stdout = capsys.readouterr().out
        assert "  pairs: 60 (0 not judgeable)\n" in stdout
        assert "  judgements (pair x metric x order): 120\n" in stdout
        assert stdout.endswith("Dry run: 1 target(s) planned; nothing was judged or written.\n")
    assert not Path("pairwise-results").exists()


def test_invalid_configuration_exits_2_before_reading_data(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("letters.parquet").write_text("not parquet")  # would fail if it were read
    manifest = write_manifest(LETTERS.format(bias_gate=0.0).replace("metrics:", "metrcs:"))
    assert main(["run", manifest]) == EXIT_INVALID
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == (
        "Error: Manifest 'm.yaml' has 2 problems:\n"
        "  m.yaml:6: targets.letters.pairwise.metrcs: unknown key 'metrcs'; did you mean "
        "'metrics'?\n"
        "  m.yaml:10: targets.letters.pairwise.gates.overall.min_equivalence_rate."
        "pairwise-refusal-disparity: the gate names metric 'pairwise-refusal-disparity', which is "
        "not in this block's metrics (metrics: pairwise-bias)\n"
        "Fix them and run again; `pairwise-polars validate MANIFEST` checks a manifest without "
        "running it.\n"
    )


def test_unreadable_data_missing_files_and_unknown_targets_exit_2(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = write_manifest(LETTERS.format(bias_gate=0.0))
    assert main(["run", manifest, "--target", "jobs"]) == EXIT_INVALID
    assert capsys.readouterr().err == (
        "Error: Manifest 'm.yaml' has no target 'jobs'; its targets are: letters.\n"
    )
    assert main(["run", "nope.yaml"]) == EXIT_INVALID
    assert capsys.readouterr().err.startswith(
        "Error: Manifest 'nope.yaml' has 1 problem:\n"
        "  nope.yaml:1: the manifest file does not exist\n"
    )
    Path("letters.parquet").write_text("not parquet")
    assert main(["run", manifest, "--json"]) == EXIT_INVALID
    captured = capsys.readouterr()
    assert captured.err == (
        "Error: Cannot read 'letters.parquet' as parquet: it holds text, not parquet data.\n"
    )
    assert json.loads(captured.out)["exit_code"] == EXIT_INVALID


def test_an_unexpected_error_exits_3_with_one_line(
    workdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the judge melted\nsecond line")

    monkeypatch.setattr("pairwise_polars.manifest._manifest_run.run_target", boom)
    manifest = write_manifest(LETTERS.format(bias_gate=0.0))
    assert main(["run", manifest, "-q"]) == EXIT_CRASH
    assert capsys.readouterr().err == (
        "Error: unexpected RuntimeError: the judge melted\nRun with --debug for the traceback.\n"
    )
    assert main(["--debug", "run", manifest]) == EXIT_CRASH
    err = capsys.readouterr().err
    assert err.startswith("Traceback (most recent call last):")
    assert err.endswith("Error: unexpected RuntimeError: the judge melted\n")


def test_the_api_key_comes_from_the_environment(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = write_manifest("""
        targets:
          demo:
            pairwise:
              data: letters.parquet
              strategy: contrastive
              judge: {model: gpt-4o-mini}
        """)
    assert main(["run", manifest]) == EXIT_INVALID
    assert capsys.readouterr().err.endswith(
        "Error: No API key for the model 'gpt-4o-mini'. Set the OPENAI_API_KEY environment "
        "variable before running (or name another variable with api_key_env: NAME in the judge "
        "block; the key never goes in the manifest). For a local server (vLLM, Ollama, "
        "llama.cpp) set base_url: URL in the judge block (or the OPENAI_BASE_URL environment "
        "variable); no key is needed then.\n"
    )
    # The same from score: flags, not manifest keys; Python keeps its own words.
    assert main(["score", "letters.parquet", "--strategy", "contrastive", "-o", "s.parquet",
                 "--judge", "gpt-4o-mini", "-q"]) == EXIT_INVALID  # fmt: skip
    assert capsys.readouterr().err == (
        "Error: No API key for the model 'gpt-4o-mini'. Set the OPENAI_API_KEY environment "
        "variable (or name another variable with --api-key-env NAME). For a local server "
        "(vLLM, Ollama, llama.cpp) pass --base-url URL (or set OPENAI_BASE_URL); no key is "
        "needed then.\n"
    )
    assert not Path("s.parquet").exists()


def test_the_installed_script(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("pairwise-polars")
    assert script.is_file(), "install the package (pip install -e .) to get the console script"
    done = subprocess.run(
        [str(script), "run", str(DATA / "example.yaml"), "--quiet", "--target", "letters"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (
        EXIT_PASS,
        "letters: PASS: 7 of 7 gate checks passed.\n",
        "",
    )
    assert (tmp_path / "pairwise-results" / "letters" / "report.html").is_file()
