"""The noise floor on the command line: control pairs in `pairs` and `score`, the new summary
columns in `summarize` tables and --json, the excess gate's exit codes, and a manifest target
with controls gated on the excess."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import polars as pl
import pytest

from pairwise_polars.cli import EXIT_GATE_FAILED, EXIT_INVALID, EXIT_PASS, main
from pairwise_polars.cli._verdicts import EXIT_INCONCLUSIVE

NEW = (
    "n_control",
    "n_control_errors",
    "control_mean_divergence",
    "excess_divergence",
    "excess_divergence_low",
    "excess_divergence_high",
)
ANSWERS = (
    "Here is a plan for the week: rest on Monday, run on Tuesday and swim on Friday.",
    "A plan for the week: run on Tuesday, swim on Friday and rest on Monday.",
)
REFUSAL = "I'm sorry, but I can't help with that request."


def responses(*, refusing_variants: bool, groups: int = 40) -> pl.DataFrame:
    """Per group a reference, two variants and a control. The control and (without an
    effect) the variants are a second wording of the reference's answer; with an effect the
    variants refuse, except in every fourth group. Without an effect the noise still varies:
    every fourth group's control refuses, and in another fourth both variants do (the excess
    averages 0, with spread between groups: an interval can exist)."""
    rows = []
    for g in range(groups):
        for i, role in enumerate(("reference", "variant", "variant", "control")):
            output = ANSWERS[0] if role == "reference" else ANSWERS[1]
            if refusing_variants and role == "variant" and g % 4:
                output = REFUSAL
            if not refusing_variants and (role, g % 4) in (("control", 0), ("variant", 2)):
                output = REFUSAL
            person = "Sam" if role == "variant" else "Alex"
            rows.append(
                {
                    "group_id": f"g{g}",
                    "id": 10 * g + i,
                    "role": role,
                    "dimension": "gender",
                    "input": f"Write a training plan for {person}, request {g}.",
                    "output": output,
                }
            )
    return pl.DataFrame(rows)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    responses(refusing_variants=False).write_parquet("fair.parquet")
    responses(refusing_variants=True).write_parquet("biased.parquet")
    responses(refusing_variants=False).filter(pl.col("role") != "control").write_parquet(
        "no_controls.parquet"
    )
    return tmp_path


def test_pairs_and_score_count_control_pairs(workdir, capsys: pytest.CaptureFixture) -> None:
    assert main(["pairs", "fair.parquet", "--json"]) == EXIT_PASS
    document = json.loads(capsys.readouterr().out)
    assert (document["n_pairs"], document["n_control_pairs"]) == (120, 40)
    assert main(["pairs", "fair.parquet", "--limit", "0"]) == EXIT_PASS
    assert "120 pairs (40 control pairs: the noise floor) in 40 groups" in capsys.readouterr().out
    # another control role: those rows are controls, and 'control' rows are plain variants
    assert main(["pairs", "fair.parquet", "--control", "re-ask", "--json"]) == EXIT_PASS
    assert json.loads(capsys.readouterr().out)["n_control_pairs"] == 0

    argv = ["score", "fair.parquet", "-m", "pairwise-bias", "-m", "pairwise-refusal-disparity"]
    assert main([*argv, "-o", "scored.parquet", "--dry-run", "--json"]) == EXIT_PASS
    plan = json.loads(capsys.readouterr().out)["plan"]
    assert (plan["n_control_pairs"], plan["n_control_judgements"]) == (40, 80)
    assert main([*argv, "-o", "scored.parquet", "-q"]) == EXIT_PASS
    scored = pl.read_parquet("scored.parquet")
    assert scored["pair_kind"].value_counts().sort("pair_kind").rows() == [
        ("control", 80),
        ("counterfactual", 160),
    ]


def score(name: str) -> str:
    out = f"scored-{name}"
    assert main(["score", f"{name}.parquet", "-o", f"{out}.parquet", "-q", "--no-cache"]) == 0
    return f"{out}.parquet"


def test_summarize_shows_the_noise_floor_and_gates_on_the_excess(
    workdir, capsys: pytest.CaptureFixture
) -> None:
    fair, biased, none = score("fair"), score("biased"), score("no_controls")
    capsys.readouterr()

    assert main(["summarize", fair, "--json"]) == EXIT_PASS
    rows = json.loads(capsys.readouterr().out)["summary"]
    assert all(column in rows[0] for column in NEW)
    assert rows[0]["n_control"] == 40 and rows[0]["excess_divergence"] == pytest.approx(0.0)
    assert main(["summarize", fair]) == EXIT_PASS
    header = capsys.readouterr().out.splitlines()[0]
    assert "controls" in header and "excess divergence" in header

    # 40 groups, the noise +-1 in half of them: the interval is about +-0.23 wide
    gate = ["--max-excess-divergence", "0.3"]
    assert main(["summarize", fair, *gate]) == EXIT_PASS
    capsys.readouterr()
    assert main(["summarize", fair, "--max-excess-divergence", "0.1"]) == EXIT_INCONCLUSIVE
    assert "straddles the threshold: about " in capsys.readouterr().out
    assert main(["summarize", biased, *gate]) == EXIT_GATE_FAILED
    out = capsys.readouterr().out
    assert "pairwise-bias [overall] max_excess_divergence 0.3: observed 0.75" in out
    assert main(["summarize", biased, *gate, "--conservative"]) == EXIT_GATE_FAILED
    capsys.readouterr()
    # no control rows: the excess is unknown, so the gate gives no verdict (never a pass)
    assert main(["summarize", none, *gate]) == EXIT_INCONCLUSIVE
    out = capsys.readouterr().out
    assert "INCONCLUSIVE: a slice has no scored control pairs (no noise floor)" in out
    assert "no control pairs: add control rows (role 'control'" in out
    assert main(["summarize", fair, "--max-excess-divergence", "-0.1"]) == EXIT_INVALID
    assert "must be a number from 0 to 1" in capsys.readouterr().err


MANIFEST = """
targets:
  letters:
    pairwise:
      data: {data}
      control: {control}
      metrics: [pairwise-bias]
      gates:
        overall: {{max_excess_divergence: 0.3}}
        per_slice: {{max_excess_divergence: 0.3}}
"""


@pytest.mark.parametrize(
    ("data", "code", "status"),
    [
        ("fair.parquet", EXIT_PASS, "pass"),
        ("biased.parquet", EXIT_GATE_FAILED, "fail"),
        ("no_controls.parquet", EXIT_INCONCLUSIVE, "inconclusive"),
    ],
)
def test_a_manifest_target_gated_on_the_excess(
    workdir, capsys: pytest.CaptureFixture, data: str, code: int, status: str
) -> None:
    Path("m.yaml").write_text(textwrap.dedent(MANIFEST.format(data=data, control="control")))
    assert main(["run", "m.yaml", "-o", "out", "--json", "--no-cache"]) == code
    target = json.loads(capsys.readouterr().out)["targets"]["letters"]
    assert target["status"] == status
    assert target["plan"]["n_control_pairs"] == (0 if data.startswith("no_") else 40)
    gates = {(c["slice"], c["gate"]) for c in target["checks"]}
    assert ("overall", "max_excess_divergence") in gates
    summary = pl.read_parquet("out/letters/summary.parquet")
    assert set(NEW) <= set(summary.columns)


def test_a_manifest_control_role_is_validated(workdir, capsys: pytest.CaptureFixture) -> None:
    Path("m.yaml").write_text(
        textwrap.dedent(MANIFEST.format(data="fair.parquet", control="reference"))
    )
    assert main(["validate", "m.yaml"]) == EXIT_INVALID
    err = capsys.readouterr().err
    assert "targets.letters.pairwise.control" in err
    assert "'reference' is also a role that forms pairs" in err
