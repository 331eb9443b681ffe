"""A panel (``judge:`` as a list), ``combine:`` and ``repeats:`` in a manifest: validated with
the key and the fix, and run through the real openai client against the test server (every
member judged, the plan counting every call, agreement and verdict stability in the summary)."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from pairwise_polars.cli import EXIT_INCONCLUSIVE, main
from pairwise_polars.manifest import load_manifest, validate_manifest
from pairwise_polars.testing import TestServer, judge_behaviour
from pairwise_polars.testing._replies import message_text, score_scale

DATA = Path(__file__).resolve().parents[2] / "data"
BLOCK = "targets.demo.pairwise"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copy(DATA / "letters_contrastive.parquet", tmp_path / "letters.parquet")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def problems(text: str) -> list[str]:
    Path("m.yaml").write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return [str(p) for p in validate_manifest("m.yaml")]


def manifest(block: str) -> str:
    head = "targets:\n  demo:\n    pairwise:\n      data: letters.parquet\n"
    return head + textwrap.indent(textwrap.dedent(block).lstrip("\n"), "      ")


def test_a_panel_in_a_manifest_is_a_list_under_judge(workdir: Path) -> None:
    text = manifest("""
        judge:
          - {model: judge-a, seed: 3}
          - heuristic
        combine: median
        repeats: 3
    """)
    assert problems(text) == []
    target = load_manifest("m.yaml").targets["demo"]
    assert [j.model for j in target.panel] == ["judge-a", None]
    assert (target.judge.model, target.combine, target.repeats) == ("judge-a", "median", 3)
    panel = target.judged_by(need_key=False)
    assert panel.names == ("judge-a", "heuristic") and panel.combine == "median"


def test_panel_problems_name_the_key_and_the_fix(workdir: Path) -> None:
    found = problems(
        manifest("""
            judge:
              - {model: judge-a}
              - {model: judge-a, max_concurency: 4}
              - {model: panel}
            combine: meen
            repeats: 0
            runner: ray
        """)
    )
    assert found == [
        f"m.yaml:7: {BLOCK}.judge[1].max_concurency: unknown key 'max_concurency'; did you "
        "mean 'max_concurrency'?",
        f"m.yaml:7: {BLOCK}.judge[1]: 'judge-a' is already {BLOCK}.judge[0]: every judge of a "
        "panel needs its own model (judge_model tells them apart in the scored frame); remove one",
        f"m.yaml:8: {BLOCK}.judge[2]: a judge cannot be named 'panel': that names the panel's "
        "combined rows; use the model's own name",
        f"m.yaml:9: {BLOCK}.combine: expected one of mean, median, majority, got a string "
        "('meen'); did you mean 'mean'?",
        f"m.yaml:10: {BLOCK}.repeats: expected an integer of at least 1, got 0",
        f"m.yaml:11: {BLOCK}.runner: a panel (judge: [...]) or repeats run with runner: local; "
        "the Ray runner judges one judge once per request: remove runner: ray, or the panel "
        "and repeats",
    ]
    assert problems(manifest("judge: [{model: a}, {model: b}, {model: a}]\n")) == [
        f"m.yaml:5: {BLOCK}.judge[2]: 'a' is already {BLOCK}.judge[0]: every judge of a panel "
        "needs its own model (judge_model tells them apart in the scored frame); remove one",
    ]
    assert problems(manifest("judge: []\n")) == [
        f"m.yaml:5: {BLOCK}.judge: expected at least one judge in the list (a panel: judge: "
        "[{model: a}, {model: b}]), got an empty list"
    ]
    assert problems(manifest("judge: {model: a}\ncombine: mean\n")) == [
        f"m.yaml:6: {BLOCK}.combine: combine says how a panel's judges are combined, and judge "
        "is one judge: make judge a list (judge: [{model: a}, {model: b}]) or remove combine"
    ]


def by_model(body: dict[str, Any]) -> dict[str, Any] | None:
    """``zero`` answers 0, ``noisy`` at random; the rest the server's steady hash."""
    behaviour = {"zero": judge_behaviour("always-zero"), "noisy": judge_behaviour("noisy")}.get(
        body["model"]
    )
    if behaviour is None:
        return None
    texts = [message_text(m) for m in body["messages"]]
    return {"score": behaviour(body["messages"], texts, score_scale(body)), "reason": "r"}


def test_a_manifest_panel_with_repeats_runs(
    workdir: Path, judge_server: TestServer, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    judge_server.reply = by_model
    url = judge_server.base_url
    Path("m.yaml").write_text(
        manifest(f"""
            strategy: contrastive
            judge:
              - {{model: steady, base_url: "{url}"}}
              - {{model: noisy, base_url: "{url}"}}
            repeats: 2
            gates:
              overall: {{min_judge_agreement: 0.6, max_mean_divergence: 0.9}}
        """)
    )
    assert main(["run", "m.yaml", "-o", "out", "--json", "--no-cache"]) == EXIT_INCONCLUSIVE
    document = json.loads(capsys.readouterr().out)["targets"]["demo"]
    assert judge_server.stats.requests == 60 * 2 * 2  # every pair, every judge, twice
    scored = pl.read_parquet("out/demo/scored.parquet")
    assert sorted(scored["judge_model"].unique().to_list()) == ["noisy", "panel", "steady"]
    summary = pl.read_parquet("out/demo/summary.parquet").filter(pl.col("scope") == "overall")
    assert summary["judge_agreement"].item() < 0.6
    assert summary["verdict_stability"].item() is not None
    gates = {c["gate"]: c for c in document["checks"]}
    assert gates["min_judge_agreement"]["status"] == "inconclusive"
    assert "verdict_stability" in gates
