"""Running a validated target (pairs, plan, scores, summary, gates); judges built from the file."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import polars as pl
import pytest

from pairwise_polars import ColumnError, HeuristicJudge, ManifestError, OpenAIJudge
from pairwise_polars.manifest import _target_run, load_manifest, run_target
from pairwise_polars.runs._parts import TEXT_COLUMNS
from pairwise_polars.testing import TestServer

DATA = Path(__file__).resolve().parents[2] / "data"


def manifest(tmp_path: Path, block: str) -> Path:
    shutil.copy(DATA / "letters_contrastive.parquet", tmp_path / "letters.parquet")
    path = tmp_path / "m.yaml"
    text = "targets:\n  demo:\n    pairwise:\n" + textwrap.indent(textwrap.dedent(block), " " * 6)
    path.write_text(text, encoding="utf-8")
    return path


def test_run_target_scores_summarises_and_gates(tmp_path: Path) -> None:
    path = manifest(tmp_path, """
        data: letters.parquet
        strategy: contrastive
        metrics: [pairwise-refusal-disparity]
        gates:
          overall: {min_equivalence_rate: 0.9}
          per_slice: {max_mean_divergence: 0.1}
        """)  # fmt: skip
    run = run_target(load_manifest(path).targets["demo"], progress=False)
    assert run.scored is not None and run.summary is not None and run.gates is not None
    assert run.scored.height == 60 and run.plan.n_pairs == 60
    assert run.summary.select("metric", "scope", "dimension", "n_pairs").rows() == [
        ("pairwise-refusal-disparity", "overall", None, 60),
        ("pairwise-refusal-disparity", "slice", "gender", 60),
    ]
    checks = run.gates.checks.select("slice", "gate", "threshold", "passed").rows()
    assert checks == [
        ("overall", "max_error_rate", 0.05, True),  # on by default, overall and per slice
        ("overall", "min_equivalence_rate", 0.9, True),
        ("dimension=gender", "max_error_rate", 0.05, True),
        ("dimension=gender", "max_mean_divergence", 0.1, True),
    ]
    assert run.gates.passed


def test_a_dry_run_plans_and_scores_nothing(tmp_path: Path) -> None:
    path = manifest(tmp_path, "data: letters.parquet\nstrategy: contrastive\n")
    run = run_target(load_manifest(path).targets["demo"], dry_run=True)
    assert (run.plan.n_pairs, run.plan.n_unique, run.plan.judge_model) == (
        60,
        60,
        "heuristic",
    )
    assert run.scored is None and run.summary is None and run.gates is None


def test_slices_must_be_pair_columns(tmp_path: Path) -> None:
    path = manifest(tmp_path, """
        data: letters.parquet
        strategy: contrastive
        slices: [dimension, occupation, dimensoin]
        """)  # fmt: skip
    with pytest.raises(ColumnError) as caught:
        run_target(load_manifest(path).targets["demo"], dry_run=True)
    message = str(caught.value)
    assert message.startswith("Slice columns ['occupation', 'dimensoin'] are not in the pair frame")
    assert message.endswith(
        "Input columns other than the standard ones are carried with _a / _b suffixes (one per "
        "side of the pair). Did you mean: 'occupation' -> 'occupation_a' or 'occupation_b'; "
        "'dimensoin' -> 'dimension'?"
    )


def test_judges_built_from_the_manifest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    offline = load_manifest(manifest(tmp_path, "data: letters.parquet\njudge: offline\n"))
    assert isinstance(offline.targets["demo"].judge.build(), HeuristicJudge)

    path = manifest(tmp_path, """
        data: letters.parquet
        judge:
          model: judge-small
          api_key_env: MY_JUDGE_API_KEY
          max_concurrency: 4
          requests_per_minute: 120
        """)  # fmt: skip
    spec = load_manifest(path, allow_key_env=["MY_JUDGE_API_KEY"]).targets["demo"].judge
    with pytest.raises(ManifestError) as caught:
        spec.build()
    assert str(caught.value) == (
        f"{path}:8: targets.demo.pairwise.judge.api_key_env: the environment variable "
        "MY_JUDGE_API_KEY is not set. Export it before running (the key never goes in the "
        "manifest)."
    )
    assert spec.build(need_key=False).model == "judge-small"  # a dry run needs no key
    monkeypatch.setenv("MY_JUDGE_API_KEY", "sk-from-env")
    judge = spec.build()
    assert isinstance(judge, OpenAIJudge)
    assert (judge.api_key, judge.max_concurrency, judge.requests_per_minute) == (
        "sk-from-env",
        4,
        120,
    )
    assert "sk-from-env" not in repr(judge)


def test_an_llm_judge_over_http_in_both_orders(tmp_path: Path, judge_server: TestServer) -> None:
    path = manifest(tmp_path, f"""
        data: letters.parquet
        strategy: contrastive
        metrics: [pairwise-bias]
        both_orders: true
        judge: {{model: judge-small, base_url: "{judge_server.base_url}", max_concurrency: 16}}
        cache: judgements.sqlite
        """)  # fmt: skip
    target = load_manifest(path).targets["demo"]
    assert target.cache == str(tmp_path / "judgements.sqlite")
    run = run_target(target, progress=False)
    assert run.scored is not None
    assert run.scored["error"].null_count() == 60 and run.scored[
        "judge_model"
    ].unique().to_list() == ["judge-small"]
    assert {"score_ab", "score_ba", "position_gap"} <= set(run.scored.columns)
    assert judge_server.stats.requests == 120
    assert (tmp_path / "judgements.sqlite").is_file()
    again = run_target(target, progress=False)  # the manifest's cache answers the rerun
    assert judge_server.stats.requests == 120
    assert again.scored is not None and again.scored["cached"].all()
    assert again.scored.select(pl.col("score")).equals(run.scored.select(pl.col("score")))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Ray's own, about its internals
def test_runner_ray_gives_the_local_target_run(
    tmp_path: Path, ray_cluster: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    block = """
        data: letters.parquet
        strategy: contrastive
        metrics: [pairwise-bias, pairwise-refusal-disparity]
        cache: false
        gates:
          overall: {min_equivalence_rate: 0.5}
          per_slice: {max_disadvantage: {refusal: 0.1, decision: 0.5}}
        """
    local = run_target(load_manifest(manifest(tmp_path, block)).targets["demo"], progress=False)
    target = load_manifest(manifest(tmp_path, block + "runner: ray\n")).targets["demo"]
    assert target.runner == "ray"
    monkeypatch.setattr(_target_run, "CHUNK_SIZE", 16)  # 60 pairs: planned and scored in 4 chunks
    run_dir = tmp_path / "out" / "demo" / "run"
    on_ray = run_target(target, progress=False, run_dir=run_dir)
    assert local.scored is not None and on_ray.scored is not None
    key = ["pair_id", "metric"]
    assert (
        on_ray.scored.sort(key).drop("latency_s").equals(local.scored.sort(key).drop("latency_s"))
    )
    assert on_ray.summary is not None and on_ray.summary.equals(local.summary)
    assert on_ray.gates is not None and local.gates is not None
    assert on_ray.gates.checks.equals(local.gates.checks)
    # disparity gates work on a parquet run too (issue 24): the same figures and checks
    assert on_ray.disparities is not None and local.disparities is not None
    assert on_ray.disparities.equals(local.disparities)
    assert on_ray.gates.checks.filter(gate="max_disadvantage").height == 2
    assert (run_dir / "run.json").is_file() and (run_dir / "summary.parquet").is_file()
    assert json.loads((run_dir / "run.json").read_text())["n_chunks"] == 4
    # Planned chunk by chunk (issue 22): the in-memory plan, and the driver keeps no texts.
    assert on_ray.plan == local.plan
    assert not set(TEXT_COLUMNS) & set(on_ray.pairs.columns)
    assert on_ray.pairs.sort("pair_id").equals(local.pairs.drop(TEXT_COLUMNS).sort("pair_id"))
    dry = run_target(target, dry_run=True)
    assert dry.plan == local.plan and dry.scored is None
    again = run_target(target, progress=False, run_dir=run_dir)  # resumed: every chunk done
    assert again.scored is not None and again.summary is not None
    assert again.scored.sort(key).equals(on_ray.scored.sort(key))
    assert again.summary.equals(local.summary)
