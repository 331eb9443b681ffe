"""CI outputs: the JUnit XML file and GitHub's step summary, parsed back; CSV and NDJSON data
through the CLI and a manifest."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path
from xml.etree import ElementTree as ET

import polars as pl
import pytest

from pairwise_polars.cli import EXIT_GATE_FAILED, EXIT_PASS, main
from pairwise_polars.report import Outcome, junit_xml, step_summary
from pairwise_polars.summary import gate_summary, summarize

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copy(DATA / "letters_contrastive.parquet", tmp_path / "letters.parquet")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return tmp_path


def manifest(bias_gate: float, data: str = "letters.parquet") -> str:
    Path("m.yaml").write_text(
        textwrap.dedent(f"""
        targets:
          letters:
            pairwise:
              data: {data}
              strategy: contrastive
              metrics: [pairwise-refusal-disparity, pairwise-bias]
              gates:
                overall:
                  max_mean_divergence: {{pairwise-bias: {bias_gate}}}
                  min_equivalence_rate: {{pairwise-refusal-disparity: 0.9}}
                per_slice:
                  max_mean_divergence: {{pairwise-bias: {bias_gate}}}
        """),
        encoding="utf-8",
    )
    return "m.yaml"


def test_junit_xml_has_one_case_per_check_and_fails_what_failed(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", manifest(0.0), "--junit-xml", "ci/junit.xml", "-q"]) == EXIT_GATE_FAILED
    capsys.readouterr()
    root = ET.parse("ci/junit.xml").getroot()
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    summary = pl.read_parquet("pairwise-results/letters/summary.parquet")
    bias = summary.filter(metric="pairwise-bias", scope="overall")["mean_divergence"].item()
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    assert sorted(cases) == sorted(
        [
            "pairwise-refusal-disparity [overall] min_equivalence_rate >= 0.9",
            "pairwise-bias [overall] max_mean_divergence <= 0",
            "pairwise-bias [dimension=gender] max_mean_divergence <= 0",
            "pairwise-refusal-disparity [overall] judged without errors",
            "pairwise-bias [overall] judged without errors",
            # The error gate is on by default (0.05) in both scopes, for each metric.
            *(
                f"{metric} [{scope}] max_error_rate <= 0.05"
                for metric in ("pairwise-bias", "pairwise-refusal-disparity")
                for scope in ("overall", "dimension=gender")
            ),
        ]
    )
    failure = cases["pairwise-bias [overall] max_mean_divergence <= 0"].find("failure")
    assert failure is not None
    assert failure.get("message", "").startswith(f"observed {bias:.4f}, threshold <= 0 (interval [")
    assert failure.get("message", "").endswith("] is beyond the threshold)")
    assert failure.get("type") == "max_mean_divergence"
    passed = cases["pairwise-refusal-disparity [overall] min_equivalence_rate >= 0.9"]
    assert list(passed) == []
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("9", "2", "0")
    assert (root.get("tests"), root.get("failures")) == ("9", "2")
    properties = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert properties["strategy"] == "contrastive" and properties["judge"] == "heuristic"
    assert "| pairwise-bias " in (suite.findtext("system-out") or "")


def test_judge_failures_are_junit_errors_and_any_gate_name_is_a_case() -> None:
    scored = pl.DataFrame(
        {
            "metric": "pairwise-bias",
            "group_id": [1, 2, 3, 4],
            "dimension": ["age", "age", "race", "race"],
            "score": [0.0, 0.5, None, 0.25],
            "error": [None, None, "timeout after 7 attempts", None],
        }
    )
    summary = summarize(scored)
    gates = gate_summary(summary, overall={"max_mean_divergence": 0.5})
    # A gate added later (e.g. by another stage) is rendered from its check row as is.
    extra = gates.checks.head(1).with_columns(
        gate=pl.lit("max_new_gate"), threshold=pl.lit(0.05), observed=pl.lit(0.25),
        passed=pl.lit(False), note=pl.lit(None, pl.String),
    )  # fmt: skip
    checks = pl.concat([gates.checks, extra])
    outcome = Outcome("demo", summary, type(gates)(passed=False, checks=checks))
    root = ET.fromstring(junit_xml([outcome]))
    cases = {case.get("name"): case for case in root.iter("testcase")}
    error = cases["pairwise-bias [overall] judged without errors"].find("error")
    assert error is not None and error.get("type") == "judge_errors"
    assert error.get("message", "").startswith("1 of 4 pairs have no score")
    new_gate = cases["pairwise-bias [overall] max_new_gate <= 0.05"].find("failure")
    assert new_gate is not None and new_gate.get("message") == "observed 0.25, threshold <= 0.05"
    # The default error gate: 1 of 4 pairs unscored is beyond 0.05 overall (and 1 of 2 on race).
    error_gate = cases["pairwise-bias [overall] max_error_rate <= 0.05"].find("failure")
    assert error_gate is not None and error_gate.get("message", "").startswith("observed 0.25")
    # and 4 groups cannot vouch for the mean (its interval straddles 0.5): not a pass either
    undecided = cases["pairwise-bias [overall] max_mean_divergence <= 0.5"].find("failure")
    assert undecided is not None and "straddles the threshold" in undecided.get("message", "")
    assert root.get("errors") == "1" and root.get("failures") == "4"


def test_the_step_summary_goes_to_the_github_page(
    workdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    page = workdir / "step-summary.md"
    page.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(page))
    assert main(["run", manifest(0.0), "-q"]) == EXIT_GATE_FAILED
    capsys.readouterr()
    text = page.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n### pairwise-polars run m.yaml: FAIL\n")  # appended
    assert "#### letters: FAIL (5 of 7 gate checks passed)" in text
    failed = [line for line in text.splitlines() if line.startswith("| FAIL ")]
    assert len(failed) == 2 and all("max_mean_divergence" in line for line in failed)
    assert "<details><summary>5 passing checks</summary>" in text
    assert "| pairwise-bias              | gender    |    60 |" in text


def test_the_step_summary_escapes_html_in_data() -> None:
    scored = pl.DataFrame(
        {"metric": "pairwise-bias", "group_id": [1, 2], "dimension": ["<img src=x>", "a|b"],
         "score": [0.0, 0.5]}
    )  # fmt: skip
    summary = summarize(scored)
    text = step_summary(
        [Outcome("t<1>", summary, gate_summary(summary, per_slice={"max_mean_divergence": 0.2}))],
        title="run",
    )
    assert "<img" not in text and "&lt;img src=x&gt;" in text and "a\\|b" in text
    assert "#### t&lt;1&gt;: INCONCLUSIVE" in text  # one group a slice: no verdict
    assert text.startswith("### run: INCONCLUSIVE\n")


@pytest.mark.parametrize("fmt", ["csv", "ndjson"])
def test_csv_and_ndjson_through_the_cli_and_a_manifest(
    workdir: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    rows = pl.read_parquet("letters.parquet")
    path = f"letters.{fmt}"
    rows.write_csv(path) if fmt == "csv" else rows.write_ndjson(path)
    assert main(["pairs", path, "--strategy", "contrastive", "-q"]) == EXIT_PASS
    assert capsys.readouterr().out == "60 pairs in 60 groups\n"
    assert main(["score", path, "--strategy", "contrastive", "-o", "s.parquet", "-q"]) == EXIT_PASS
    capsys.readouterr()
    expected = pl.read_parquet("s.parquet").select("pair_id", "score").sort("pair_id")
    assert main(["run", manifest(0.9, data=path), "-q", "--no-cache"]) == EXIT_PASS
    assert capsys.readouterr().out == "letters: PASS: 7 of 7 gate checks passed.\n"
    scored = pl.read_parquet("pairwise-results/letters/scored.parquet")
    got = scored.filter(metric="pairwise-bias").select("pair_id", "score").sort("pair_id")
    assert got.equals(expected)


def test_a_report_made_later_names_its_data_strategy_metrics_and_times(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pl.read_parquet("letters.parquet").write_csv("letters.csv")
    argv = ["score", "letters.csv", "--strategy", "contrastive", "-m", "pairwise-bias", "-o",
            "scored.parquet", "-q"]  # fmt: skip
    assert main(argv) == EXIT_PASS
    assert main(["report", "scored.parquet", "-o", "r.html", "-q"]) == EXIT_PASS
    header = Path("r.html").read_text(encoding="utf-8").split("<header>")[1].split("</header>")[0]
    for line in (
        "<dt>scored data</dt><dd>scored.parquet</dd>",
        "<dt>response data</dt><dd>letters.csv</dd>",
        "<dt>strategy</dt><dd>contrastive</dd>",
        "<dt>metrics</dt><dd>pairwise-bias</dd>",
        "<dt>judge</dt><dd>heuristic</dd>",
    ):
        assert line in header
    assert "<dt>scored</dt><dd>20" in header and "<dt>summarised</dt><dd>20" in header
    # The parts of a chunked run: the run's journal says the same.
    argv = ["score", "letters.parquet", "--strategy", "contrastive", "--run-dir", "run", "-q"]
    assert main(argv) == EXIT_PASS
    assert main(["report", "run/scored", "-o", "r2.html", "-q"]) == EXIT_PASS
    header = Path("r2.html").read_text(encoding="utf-8").split("<header>")[1].split("</header>")[0]
    assert "<dt>strategy</dt><dd>contrastive</dd>" in header
    assert f"<dt>response data</dt><dd>{(workdir / 'letters.parquet').resolve()}</dd>" in header
    capsys.readouterr()


def test_summarize_and_report_write_ci_outputs_and_speak_flags(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["score", "letters.parquet", "--strategy", "contrastive", "-o", "s.parquet", "-q"]
    assert main(argv) == EXIT_PASS
    argv = ["summarize", "s.parquet", "--max-mean-divergence", "0", "--junit-xml", "j.xml", "-q"]
    assert main(argv) == EXIT_GATE_FAILED
    suite = ET.parse("j.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("name") == "s.parquet"
    assert suite.get("failures") == "2"
    capsys.readouterr()
    assert main(["summarize", "s.parquet", "--by", "model"]) == 2
    assert capsys.readouterr().err.endswith(
        "Pass --by with existing slice columns, and --group-by with the group column if yours "
        "differs.\n"
    )


def test_the_readme_ci_recipes_parse_and_their_commands_exist() -> None:
    import re

    import yaml

    from pairwise_polars.cli import build_parser

    readme = (DATA.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("### CI\n")[1].split("\n### ")[0]
    blocks = re.findall(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert len(blocks) == 2  # GitHub Actions, GitLab CI

    def strings(node: object) -> list[str]:
        if isinstance(node, dict):
            return [s for value in node.values() for s in strings(value)]
        if isinstance(node, list):
            return [s for value in node for s in strings(value)]
        return [node] if isinstance(node, str) else []

    commands = []
    for block in blocks:
        found = strings(yaml.safe_load(block))
        commands += [s.split("pairwise-polars ", 1)[1] for s in found if "pairwise-polars run" in s]
        assert any(".pairwise-cache" in s for s in found)  # the cache is kept between runs
    assert len(commands) == 2
    for command in commands:
        args = build_parser().parse_args(command.split())
        assert args.cache == ".pairwise-cache/judgements.sqlite"
        assert args.junit_xml == "pairwise-junit.xml"


def test_a_target_that_stops_keeps_the_ci_outputs_of_the_others(
    workdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    page = workdir / "step.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(page))
    Path("m.yaml").write_text(
        textwrap.dedent("""
        targets:
          first:
            pairwise: {data: letters.parquet, strategy: contrastive}
          second:
            pairwise: {data: letters.parquet}
        """),
        encoding="utf-8",
    )
    assert main(["run", "m.yaml", "--junit-xml", "j.xml", "-q"]) == 2  # second: no reference
    capsys.readouterr()
    suites = {s.get("name"): s for s in ET.parse("j.xml").getroot().iter("testsuite")}
    assert sorted(suites) == ["first", "second"]
    assert suites["first"].get("errors") == "0"
    error = suites["second"].find("testcase/error")
    assert error is not None
    assert error.get("message", "").startswith("60 of 60 groups cannot form 'group' pairs")
    assert "set on_invalid: skip in the block" in (error.text or "")
    text = page.read_text(encoding="utf-8")
    assert "### pairwise-polars run m.yaml: ERROR" in text and "#### second: ERROR" in text
