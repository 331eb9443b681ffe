"""Manifests that would pass a gate or exhaust the machine by their shape (issue 30, items 8, 14
and 16): an empty gate map, an unbounded concurrency, a YAML alias bomb in extra_body."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path

import polars as pl
import pytest
from conftest import DATA

from pairwise_polars.cli import EXIT_INVALID, main
from pairwise_polars.manifest import validate_manifest

BLOCK = "targets.demo.pairwise"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "letters.parquet").write_bytes((DATA / "letters_contrastive.parquet").read_bytes())
    monkeypatch.chdir(tmp_path)
    return tmp_path


def problems(text: str) -> list[str]:
    Path("m.yaml").write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return [str(p) for p in validate_manifest("m.yaml")]


EMPTY = (
    "an empty mapping gates nothing: give thresholds (e.g. max_mean_divergence: "
    "{pairwise-bias: 0.2}) or remove the key"
)


@pytest.mark.parametrize(
    ("gates", "where"),
    [
        ("{overall: {max_mean_divergence: {}}}", "gates.overall.max_mean_divergence"),
        ("{overall: {}}", "gates.overall"),
        ("{}", "gates"),
    ],
)
def test_an_empty_gate_map_is_an_error(
    workdir: Path, capsys: pytest.CaptureFixture[str], gates: str, where: str
) -> None:
    text = f"""
        targets:
          demo:
            pairwise:
              data: letters.parquet
              strategy: contrastive
              gates: {gates}
        """
    assert problems(text) == [f"m.yaml:6: {BLOCK}.{where}: {EMPTY}"]
    assert main(["run", "m.yaml", "-q"]) == EXIT_INVALID  # never "PASS: 2 of 2"
    assert EMPTY in capsys.readouterr().err


def test_max_concurrency_is_bounded(workdir: Path) -> None:
    assert problems("""
        targets:
          demo:
            pairwise:
              data: letters.parquet
              judge: {model: m, max_concurrency: 1000000000}
        """) == [
        f"m.yaml:5: {BLOCK}.judge.max_concurrency: expected an integer from 1 to 4096, got "
        "1000000000"
    ]


def test_a_yaml_alias_bomb_in_extra_body_is_refused_quickly(workdir: Path) -> None:
    levels = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    levels += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 8)]
    bomb = "\n".join(f"          {line}" for line in levels)  # 9**8 = 43 million strings
    started = time.perf_counter()
    found = problems(
        "targets:\n  demo:\n    pairwise:\n      data: letters.parquet\n      judge:\n"
        "        model: m\n        extra_body:\n" + bomb + "\n"
    )
    assert time.perf_counter() - started < 5
    (problem,) = found
    assert f"{BLOCK}.judge.extra_body: expected at most 10,000 values" in problem


def _data_is_its_folder() -> None:
    """m.yaml: one contrastive target whose data is the manifest's own folder."""
    Path("m.yaml").write_text(
        "targets:\n  demo:\n    pairwise:\n      data: .\n      strategy: contrastive\n"
        "      poles: [pole_a, pole_b]\n      judge: heuristic\n",
        encoding="utf-8",
    )


def test_a_manifest_whose_data_is_its_own_folder_reruns_on_the_same_files(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _data_is_its_folder()
    assert main(["run", "m.yaml", "-q"]) == 0  # writes pairwise-results/demo/ into the data
    first = pl.read_parquet("pairwise-results/demo/summary.parquet")
    capsys.readouterr()
    # The default output folder is passed over: the rerun reads the same files, not its outputs.
    assert main(["run", "m.yaml", "-q"]) == 0
    assert pl.read_parquet("pairwise-results/demo/summary.parquet").equals(first)


def test_a_data_folder_holding_another_output_folder_is_named_on_the_rerun(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _data_is_its_folder()
    assert main(["run", "m.yaml", "-o", "results", "-q"]) == 0  # writes results/demo/
    capsys.readouterr()
    assert main(["run", "m.yaml", "-o", "results", "-q"]) == EXIT_INVALID
    err = capsys.readouterr().err
    assert "mixes file formats" not in err
    assert (
        "The folder '.' holds 'results/demo', the output folder of a run (its "
        "scored.parquet and summary.parquet)"
    ) in err
    assert "Point data at the input files" in err
    assert "write the outputs outside the data folder" in err
