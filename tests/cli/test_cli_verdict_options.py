"""The verdict flags of summarize (issue 23): --min-groups, --errors-as, --familywise and
--require speak gate_summary's keywords; a fail beside an undecided slice exits 1."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from pairwise_polars.cli import EXIT_GATE_FAILED, EXIT_INCONCLUSIVE, EXIT_INVALID, EXIT_PASS, main


def scored(groups: int, scores: list[float], dimension: str) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "pair_id": [f"{dimension}-{g}" for g in range(groups)],
            "group_id": [f"{dimension}-{g}" for g in range(groups)],
            "metric": "pairwise-bias",
            "dimension": dimension,
            "score": [scores[g % len(scores)] for g in range(groups)],
            "error": pl.Series([None] * groups, dtype=pl.String),
        }
    )


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    scored(40, [0.0, 0.25], "gender").write_parquet("fair.parquet")
    pl.concat([scored(40, [1.0, 0.75], "race"), scored(3, [0.0], "age")]).write_parquet(
        "mixed.parquet"
    )
    return tmp_path


def verdict(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    code = main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_min_groups_and_require_flags(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gate = ["summarize", "fair.parquet", "--max-mean-divergence", "0.2"]
    assert verdict(gate, capsys)[0] == EXIT_PASS
    code, document = verdict([*gate, "--min-groups", "41"], capsys)
    assert code == EXIT_INCONCLUSIVE
    assert "40 groups, under min_groups=41" in document["verdict"]
    code, document = verdict([*gate, "--require", "gender", "race"], capsys)
    assert code == EXIT_INCONCLUSIVE
    assert "dimension 'race' is required (require)" in document["verdict"]
    # --require alone is a gate of its own
    assert verdict(["summarize", "fair.parquet", "--require", "race"], capsys)[0] == 4
    assert main([*gate, "--min-groups", "0"]) == EXIT_INVALID
    assert "--min-groups: must be at least 1, got 0" in capsys.readouterr().err
    assert main([*gate, "--errors-as", "best"]) == EXIT_INVALID
    capsys.readouterr()
    assert main(["summarize", "fair.parquet", "--divergence-threshold", "nan"]) == EXIT_INVALID
    assert "--divergence-threshold: must be a number from 0 to 1" in capsys.readouterr().err


def test_a_fail_beside_an_undecided_slice_exits_1(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gate = ["summarize", "mixed.parquet", "--max-mean-divergence", "0.2"]
    code, document = verdict(gate, capsys)
    assert code == EXIT_GATE_FAILED
    assert document["verdict"].startswith("FAIL: ")
    assert "Also inconclusive: " in document["verdict"].splitlines()[0]
    statuses = {(c["slice"], c["gate"]): c["status"] for c in document["checks"]}
    assert statuses[("dimension=race", "max_mean_divergence")] == "fail"
    assert statuses[("dimension=age", "max_mean_divergence")] == "inconclusive"
    code, document = verdict([*gate, "--familywise", "holm"], capsys)
    assert code == EXIT_GATE_FAILED and "(familywise: holm over " in document["verdict"]
    assert main([*gate, "--familywise", "holm", "--conservative"]) == EXIT_INVALID
    assert "choose one" in capsys.readouterr().err
