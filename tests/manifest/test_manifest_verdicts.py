"""The verdict keys of a manifest's gates (issue 23): min_groups, errors_as and require,
validated with the file's line, and familywise reaching the fairness gates of a run."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from pairwise_polars import ManifestError
from pairwise_polars.manifest import load_manifest, run_target

DATA = Path(__file__).resolve().parents[2] / "data"


def manifest(tmp_path: Path, gates: str, extra: str = "") -> Path:
    shutil.copy(DATA / "letters_contrastive.parquet", tmp_path / "letters.parquet")
    block = textwrap.dedent(f"""
        data: letters.parquet
        strategy: contrastive
        metrics: [pairwise-bias]
        {extra}
        gates:
        """) + textwrap.indent(textwrap.dedent(gates), "  ")  # fmt: skip
    text = "targets:\n  demo:\n    pairwise:\n" + textwrap.indent(block, " " * 6)
    path = tmp_path / "m.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_verdict_keys_reach_the_gates_of_a_run(tmp_path: Path) -> None:
    # 60 groups, a bias mean of 0.06 [0.04, 0.10]: passes 0.15 with min_groups 30 ...
    base = "overall: {max_mean_divergence: 0.15}\n"
    run = run_target(load_manifest(manifest(tmp_path, base)).targets["demo"], progress=False)
    assert run.gates is not None and run.gates.status == "pass"
    # ... not with min_groups 61, and not when the run must cover race, which it never measured
    strict = base + "min_groups: 61\nrequire: [gender, race]\nerrors_as: ignore\n"
    target = load_manifest(manifest(tmp_path, strict)).targets["demo"]
    assert (target.gates.min_groups, target.gates.require, target.gates.errors_as) == (
        61,
        ("gender", "race"),
        "ignore",
    )
    run = run_target(target, progress=False)
    assert run.gates is not None and run.gates.status == "inconclusive"
    failed = run.gates.failures.select("slice", "gate").rows()
    assert ("overall", "max_mean_divergence") in failed
    assert ("dimension=race", "required_dimension") in failed
    assert "60 groups, under min_groups=61" in run.gates.verdict()


def test_familywise_judges_the_fairness_gates_too(tmp_path: Path) -> None:
    gates = "per_slice: {max_mean_divergence: 0.01}\n"
    path = manifest(tmp_path, gates, extra="familywise: holm")
    run = run_target(load_manifest(path).targets["demo"], progress=False)
    assert run.gates is not None
    assert (run.gates.familywise, run.gates.family) == ("holm", 1)
    assert run.gates.status == "fail"  # 0.06 [0.04, 0.10] is clear of 0.01 after Holm too


@pytest.mark.parametrize(
    ("gates", "extra", "message"),
    [
        (
            "min_groups: 0\n",
            "",
            "gates.min_groups: expected an integer of at least 1, got 0",
        ),
        ("min_groups: 2.5\n", "", "gates.min_groups: expected an integer of at least 1"),
        (
            "errors_as: best\n",
            "",
            "gates.errors_as: expected worst or ignore, got a string ('best')",
        ),
        ("require: []\n", "", "gates.require: expected a list of strings"),
        (
            "conservative: true\noverall: {max_mean_divergence: 0.2}\n",
            "familywise: holm",
            "gates.conservative: conservative: true fails on the unfavourable bound without "
            "evidence, and familywise: holm judges the evidence",
        ),
    ],
)
def test_verdict_keys_are_validated(tmp_path: Path, gates: str, extra: str, message: str) -> None:
    with pytest.raises(ManifestError) as caught:
        load_manifest(manifest(tmp_path, gates, extra=extra))
    assert message in str(caught.value)
