"""The salary example through a manifest and the command line: max_disadvantage fails with the
reworded control, a run without a pay gap passes; unknown outcomes are refused with a hint."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pairwise_polars import ManifestError
from pairwise_polars.cli import EXIT_GATE_FAILED, EXIT_PASS, main
from pairwise_polars.manifest import load_manifest, run_target
from pairwise_polars.testing import TestServer
from tests.summary.salary import salary_rows

BLOCK = """
targets:
  salary:
    pairwise:
      data: salary.parquet
      metrics: [pairwise-bias, pairwise-favour]
      gates:
        per_slice:
          max_disadvantage: {{amount: 0.05}}
          min_impact_ratio: 0.8
        conservative: {conservative}
"""


def _manifest(tmp_path: Path, cut: float, conservative: str = "false") -> Path:
    salary_rows(cut=cut).write_parquet(tmp_path / "salary.parquet")
    path = tmp_path / "m.yaml"
    path.write_text(textwrap.dedent(BLOCK.format(conservative=conservative)), encoding="utf-8")
    return path


@pytest.mark.parametrize(("cut", "status"), [(0.16, "fail"), (0.0, "inconclusive")])
def test_a_manifest_target_gates_on_disparities(tmp_path: Path, cut: float, status: str) -> None:
    path = _manifest(tmp_path, cut, conservative="true")
    run = run_target(load_manifest(path).targets["salary"], progress=False)
    assert run.gates is not None and run.disparities is not None
    # a failed check fails the run (or, before three-way run verdicts, leaves it inconclusive)
    assert run.gates.status in {status, "inconclusive"}, run.gates.verdict()
    checks = run.gates.checks.filter(gate="max_disadvantage")
    assert checks["status"].to_list() == (["fail"] if cut else ["pass"])
    # salaries carry no decision: the impact ratio is unknown, never a pass
    ratio = run.gates.checks.filter(gate="min_impact_ratio").row(0, named=True)
    assert ratio["status"] == "inconclusive" and "no decision" in ratio["note"]


def test_the_command_line_fails_and_passes_the_salary_example(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    path = _manifest(tmp_path, 0.16, conservative="true")
    text = path.read_text().replace("          min_impact_ratio: 0.8\n", "")
    path.write_text(text)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "step.md"))
    command = ["run", str(path), "-o", "out", "--no-cache", "--quiet", "--junit-xml", "j.xml"]
    assert main(command) == EXIT_GATE_FAILED
    out = capsys.readouterr().out
    for ci in ("j.xml", "step.md"):  # the CI outputs name who is disadvantaged too
        assert "female: amount -7." in (tmp_path / ci).read_text(encoding="utf-8")
    assert "Who is disadvantaged" in (tmp_path / "out/salary/report.html").read_text("utf-8")
    assert "amount [dimension=gender, attribute=female] max_disadvantage 0.05" in out
    assert "female: amount -7." in out and "against male (at most 5% allowed)" in out
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    salary_rows(cut=0.0).write_parquet(tmp_path / "salary.parquet")
    assert main(["run", str(path), "-o", "out2", "--no-cache", "--quiet"]) == EXIT_PASS
    scored = str(tmp_path / "out" / "salary" / "scored.parquet")
    gate = ["--max-disadvantage", "amount=0.05", "--conservative", "--quiet"]
    assert main(["summarize", scored, *gate]) == EXIT_GATE_FAILED
    assert main(["summarize", scored, "--max-disadvantage", "amount=0.2", "--quiet"]) == EXIT_PASS


def test_unknown_outcomes_are_manifest_errors(tmp_path: Path) -> None:
    path = _manifest(tmp_path, 0.0)
    path.write_text(path.read_text().replace("{amount: 0.05}", "{amounts: 0.05}"))
    with pytest.raises(ManifestError, match=r"outcome 'amounts'.*did you mean 'amount'"):
        load_manifest(path)


def test_a_target_with_disparity_gates_plans_the_outcome_judgements(
    tmp_path: Path, judge_server: TestServer
) -> None:
    """An LLM judge reads each response's outcome for the disparity gates: the plan counts
    those calls and their dollars before any is made, and the run finds them in the cache."""
    salary_rows(groups=6).write_parquet(tmp_path / "salary.parquet")
    judge = (
        f'judge: {{model: judge-small, base_url: "{judge_server.base_url}", '
        "price_per_million: {input: 1.0, output: 4.0}}\n      cache: c.sqlite\n"
    )
    block = BLOCK.format(conservative="false").replace("      gates:", f"      {judge}      gates:")
    path = tmp_path / "m.yaml"
    path.write_text(textwrap.dedent(block), encoding="utf-8")
    target = load_manifest(path).targets["salary"]
    dry = run_target(target, progress=False, dry_run=True)
    plan = dry.plan
    assert plan.n_outcome_judgements == 18 and plan.n_outcome_to_send == 18  # 6 groups x 3 rows
    assert plan.outcome_cost_usd is not None and plan.outcome_cost_usd > 0
    assert plan.cost_usd is not None and plan.cost_usd > plan.outcome_cost_usd
    assert "outcome judgements (one per response): 18" in str(plan)
    assert judge_server.stats.requests == 0  # a plan spends nothing
    run_target(target, progress=False)
    sent = judge_server.stats.requests
    assert sent == plan.n_to_send + plan.n_outcome_to_send
    again = run_target(target, progress=False, dry_run=True).plan
    assert again.n_outcome_cached == 18 and again.n_outcome_to_send == 0
