"""Smaller things a new user hit on the command line: no promise of a cache under --no-cache,
and a run of several targets that counts failed and inconclusive targets apart."""

from __future__ import annotations

import socket
import textwrap
from pathlib import Path

import polars as pl
import pytest

from pairwise_polars.cli import EXIT_GATE_FAILED, EXIT_INVALID, main
from pairwise_polars.cli._verdicts import targets_verdict

ANSWER = "Here is a plan for the week: rest on Monday, run on Tuesday and swim on Friday."
REFUSAL = "I'm sorry, but I can't help with that request."


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def rows(*, refusing: bool, controls: bool, groups: int = 40) -> pl.DataFrame:
    """Per group a reference, two variants (refusing when ``refusing``, except in every tenth
    group) and maybe a control. The noise varies between groups, so an interval exists: one
    group in ten refuses in its control, another in its variants, whatever ``refusing``."""
    roles = ("reference", "variant", "variant", *(("control",) if controls else ()))

    def output(g: int, role: str) -> str:
        refuses = (role == "variant" and refusing and g % 10 != 0) or (role, g % 10) in (
            ("control", 3),
            ("variant", 7),
        )
        return REFUSAL if refuses else ANSWER

    return pl.DataFrame(
        [
            {
                "group_id": f"g{g}",
                "id": 10 * g + i,
                "role": role,
                "dimension": "gender",
                "input": f"Write a training plan, request {g}.",
                "output": output(g, role),
            }
            for g in range(groups)
            for i, role in enumerate(roles)
        ]
    )


def test_no_cache_promised_when_there_is_none(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows(refusing=False, controls=False, groups=3).write_parquet("rows.parquet")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    argv = ["score", "rows.parquet", "-o", "s.parquet", "--judge", "m", "--base-url", dead, "-q"]
    assert main([*argv, "--no-cache"]) == EXIT_INVALID
    err = capsys.readouterr().err
    assert "nothing was cached (no cache in use)" in err
    assert "results so far are cached" not in err
    assert main([*argv, "--cache", "c.sqlite"]) == EXIT_INVALID
    assert "results so far are cached" in capsys.readouterr().err


MANIFEST = """
targets:
  fair:
    pairwise: {{data: fair.parquet, metrics: [pairwise-refusal-disparity], gates: {gates}}}
  biased:
    pairwise: {{data: biased.parquet, metrics: [pairwise-refusal-disparity], gates: {gates}}}
  unmeasured:
    pairwise: {{data: none.parquet, metrics: [pairwise-refusal-disparity], gates: {gates}}}
"""


def test_a_run_counts_failed_and_inconclusive_targets_apart(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows(refusing=False, controls=True).write_parquet("fair.parquet")
    rows(refusing=True, controls=True).write_parquet("biased.parquet")
    rows(refusing=False, controls=False).write_parquet("none.parquet")  # no noise floor
    gates = "{overall: {max_excess_divergence: 0.2}}"
    Path("m.yaml").write_text(textwrap.dedent(MANIFEST.format(gates=gates)))
    # a failed target fails the run (exit 1) even beside an inconclusive one
    assert main(["run", "m.yaml", "-o", "out", "--no-cache"]) == EXIT_GATE_FAILED
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last == "FAIL: 1 of 3 targets failed a gate (biased); 1 inconclusive (unmeasured)"


def test_targets_verdict_words() -> None:
    assert targets_verdict({"a": "pass", "b": "inconclusive"}, 2) == (
        "1 of 2 targets inconclusive (b)"
    )
    assert targets_verdict({"a": "fail", "b": "fail", "c": "pass"}, 3) == (
        "2 of 3 targets failed a gate (a, b)"
    )


def test_a_run_options_mismatch_names_the_option_with_its_old_and_new_value(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import pairwise_polars as pp

    rows(refusing=False, controls=False, groups=3).write_parquet("rows.parquet")
    bias = pp.get_metric("pairwise-demographic-bias", attribute_under_test="gender")
    pp.score_parquet("rows.parquet", "run", [pp.get_metric("pairwise-bias"), bias],
                     progress=False)  # fmt: skip
    age = bias.with_params(attribute_under_test="age")
    with pytest.raises(pp.RunStateError) as info:
        pp.score_parquet("rows.parquet", "run", [pp.get_metric("pairwise-bias"), age],
                         progress=False)  # fmt: skip
    assert "the metrics differ ([pairwise-demographic-bias].params.attribute_under_test: " in (
        str(info.value)
    )
    assert 'was "gender", now "age")' in str(info.value)
    argv = ["score", "rows.parquet", "--run-dir", "run", "-m", "pairwise-refusal-disparity"]
    assert main(argv) == EXIT_INVALID
    assert (
        "the metrics differ (names: was pairwise-bias, pairwise-demographic-bias, now "
        "pairwise-refusal-disparity)"
    ) in capsys.readouterr().err
