"""Manifest validation: every problem at once, each with its exact file, line, key and message."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from pairwise_polars import ManifestError
from pairwise_polars.manifest import load_manifest, validate_manifest
from pairwise_polars.manifest._schema import BLOCK_KEYS

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder holding the letters sample as letters.parquet, as the current folder (so that
    messages show the manifest's path as the user typed it: m.yaml)."""
    shutil.copy(DATA / "letters_contrastive.parquet", tmp_path / "letters.parquet")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def problems(text: str) -> list[str]:
    Path("m.yaml").write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return [str(p) for p in validate_manifest("m.yaml")]


BLOCK = "targets.demo.pairwise"


def test_the_example_manifest_is_valid() -> None:
    manifest = load_manifest(DATA / "example.yaml")
    assert list(manifest.targets) == ["letters", "jobs"]
    letters, jobs = manifest.targets.values()
    assert letters.strategy == "contrastive" and letters.poles == ("pole_a", "pole_b")
    assert Path(letters.data[0]) == DATA / "letters_contrastive.parquet"
    assert [m.name for m in jobs.metrics] == ["pairwise-refusal-disparity", "pairwise-bias"]
    assert jobs.judge.kind == "heuristic"
    assert jobs.control == "control"
    # per dimension 60 groups vouch for 0.25, not 0.15 (the example's comment says why)
    assert jobs.gates.per_slice == {"max_excess_divergence": 0.25}
    assert jobs.gates.overall == {"max_excess_divergence": 0.1, "max_error_rate": 0.05}
    assert (jobs.gates.min_groups, jobs.gates.errors_as) == (30, "worst")
    assert jobs.gates.require == ("gender", "race", "religion", "age")


def test_defaults_of_a_minimal_block(workdir: Path) -> None:
    assert problems("targets: {demo: {pairwise: {data: letters.parquet}}}") == []
    target = load_manifest("m.yaml").targets["demo"]
    assert target.data == ("letters.parquet",)
    assert (target.strategy, target.reference, target.on_invalid) == ("group", "reference", "raise")
    assert [m.name for m in target.metrics] == ["pairwise-bias"]
    assert (target.judge.kind, target.both_orders, target.slices) == ("heuristic", False, None)
    assert (target.equivalence_threshold, target.divergence_threshold) == (0.0, 0.5)
    assert target.cache is True and not target.gates


def test_unknown_keys_with_did_you_mean(workdir: Path) -> None:
    assert problems("""
        targets:
          demo:
            pairwise:
              data: letters.parquet
              metrcs: [pairwise-bias]
              zzz: 1
            descripton: letters
        """) == [
        f"m.yaml:5: {BLOCK}.metrcs: unknown key 'metrcs'; did you mean 'metrics'?",
        f"m.yaml:6: {BLOCK}.zzz: unknown key 'zzz'; expected one of: {', '.join(BLOCK_KEYS)}",
        "m.yaml:7: targets.demo.descripton: unknown key 'descripton'; did you mean 'description'?",
    ]


def test_wrong_types(workdir: Path) -> None:
    assert problems("""
        targets:
          demo:
            pairwise:
              data: [letters.parquet, 3]
              strategy: grup
              both_orders: "yes"
              slices: 3
              divergence_threshold: 2
              confidence: 1
              on_invalid: skp
              columns: {group_by: prompt_id, outptu: response}
              judge: {model: m, max_concurrency: 0, timeout: fast, seed: 1.5}
              cache: 7
        """) == [
        f"m.yaml:4: {BLOCK}.data[1]: expected a non-empty string, got a number (3)",
        f"m.yaml:5: {BLOCK}.strategy: expected group or contrastive, got a string ('grup'); "
        "did you mean 'group'?",
        f"m.yaml:6: {BLOCK}.both_orders: expected true or false, got a string ('yes')",
        f"m.yaml:7: {BLOCK}.slices: expected a list of strings, got a number (3)",
        f"m.yaml:8: {BLOCK}.divergence_threshold: expected a number from 0 to 1, got 2",
        f"m.yaml:9: {BLOCK}.confidence: expected a number above 0 and below 1, got 1",
        f"m.yaml:10: {BLOCK}.on_invalid: expected raise or skip, got a string ('skp'); did you "
        "mean 'skip'?",
        f"m.yaml:11: {BLOCK}.columns.outptu: unknown key 'outptu'; did you mean 'output'?",
        f"m.yaml:12: {BLOCK}.judge.max_concurrency: expected an integer from 1 to 4096, got 0",
        f"m.yaml:12: {BLOCK}.judge.timeout: expected a number above 0, got a string ('fast')",
        f"m.yaml:12: {BLOCK}.judge.seed: expected an integer, got a number (1.5)",
        f"m.yaml:13: {BLOCK}.cache: expected true, false or the path of a cache file (relative "
        "to the manifest), got a number (7)",
    ]


def test_missing_data_file_glob_and_folder(workdir: Path) -> None:
    (workdir / "empty").mkdir()
    assert problems("""
        targets:
          demo:
            pairwise:
              data:
                - runs/missing.parquet
                - "runs/*.parquet"
                - empty
                - letters.parquet
        """) == [
        f"m.yaml:5: {BLOCK}.data[0]: data file 'runs/missing.parquet' does not exist (paths are "
        "relative to the manifest's folder)",
        f"m.yaml:6: {BLOCK}.data[1]: no file matches the glob 'runs/*.parquet' (paths are "
        "relative to the manifest's folder)",
        f"m.yaml:7: {BLOCK}.data[2]: the folder 'empty' holds no .parquet, .csv, .tsv, .ndjson "
        "or .jsonl file",
    ]


def test_data_paths_are_relative_to_the_manifest(workdir: Path) -> None:
    (workdir / "sub").mkdir()
    Path("sub/m.yaml").write_text("targets: {demo: {pairwise: {data: ../letters.parquet}}}\n")
    manifest = load_manifest("sub/m.yaml")
    assert manifest.targets["demo"].data == (str(Path("sub/../letters.parquet")),)
    Path("sub/m.yaml").write_text("targets: {demo: {pairwise: {data: letters.parquet}}}\n")
    assert [str(p) for p in validate_manifest("sub/m.yaml")] == [
        f"{Path('sub/m.yaml')}:1: {BLOCK}.data: data file '{Path('sub/letters.parquet')}' does "
        "not exist (paths are relative to the manifest's folder)"
    ]


def test_unknown_metric_and_metric_files(workdir: Path) -> None:
    assert problems("""
        targets:
          demo:
            pairwise:
              data: letters.parquet
              metrics:
                - pairwise-bais
                - fairness
                - metrics/tone.yaml
                - pairwise-bias
                - pairwise-bias
        """) == [
        f"m.yaml:6: {BLOCK}.metrics[0]: unknown metric 'pairwise-bais'; did you mean "
        "'pairwise-bias'? Shipped metrics: outcome, pairwise-bias, pairwise-demographic-bias, "
        "pairwise-favour, pairwise-refusal-disparity; or give the path of a metric file (.yaml)",
        f"m.yaml:7: {BLOCK}.metrics[1]: unknown metric 'fairness'. Shipped metrics: outcome, "
        "pairwise-bias, pairwise-demographic-bias, pairwise-favour, pairwise-refusal-disparity; "
        "or give the path of a metric file (.yaml)",
        f"m.yaml:8: {BLOCK}.metrics[2]: metric file 'metrics/tone.yaml' does not exist (paths "
        "are relative to the manifest's folder)",
        f"m.yaml:10: {BLOCK}.metrics[4]: metric 'pairwise-bias' is listed twice (also on line "
        "9); metric names must be unique in a block",
    ]


REGRESSION_METRIC = """
name: answer-quality-regression
kind: regression
version: "1"
rubric: {max: 4}
system: Compare the baseline and the candidate.
user: "Baseline: {{ output_a }} Candidate: {{ output_b }}"
"""


def test_a_regression_metric_in_a_pairwise_block(workdir: Path) -> None:
    Path("quality.yaml").write_text(REGRESSION_METRIC, encoding="utf-8")
    assert problems("""
        targets:
          demo:
            pairwise:
              data: letters.parquet
              metrics: [pairwise-bias, quality.yaml]
        """) == [
        f"m.yaml:5: {BLOCK}.metrics[1]: metric 'answer-quality-regression' is of kind "
        "'regression'; a pairwise block takes only pairwise metrics. Pairwise metrics are "
        "symmetric divergences between counterfactual responses; regression metrics compare a "
        "baseline with a candidate (directional): the two never mix in one block. Remove it "
        "from this block",
    ]


def test_a_custom_metric_file_and_its_parameters(workdir: Path) -> None:
    Path("tone.yaml").write_text(
        REGRESSION_METRIC.replace("kind: regression", "kind: pairwise")
        .replace("answer-quality-regression", "tone")
        .replace("Compare", "Compare the {{ register }} of"),
        encoding="utf-8",
    )
    assert problems("""
        targets:
          demo:
            pairwise:
              data: letters.parquet
              metrics:
                - {metric: tone.yaml, params: {register: formal}}
                - metric: pairwise-demographic-bias
                  params: {attribute_under_tset: gender}
        """) == [
        f"m.yaml:8: {BLOCK}.metrics[1].params.attribute_under_tset: metric "
        "'pairwise-demographic-bias' has no parameter 'attribute_under_tset'; did you mean "
        "'attribute_under_test'? (it takes: attribute_under_test)",
    ]
    Path("m.yaml").write_text(Path("m.yaml").read_text().replace("tset", "test"))
    metrics = load_manifest("m.yaml").targets["demo"].metrics
    assert [(m.name, m.source, dict(m.params)) for m in metrics] == [
        ("tone", "tone.yaml", {"register": "formal"}),
        (
            "pairwise-demographic-bias",
            "pairwise-demographic-bias",
            {"attribute_under_test": "gender"},
        ),
    ]
    assert metrics[0].load().params == {"register": "formal"}


def test_gates_naming_unknown_metrics_and_misplaced_thresholds(workdir: Path) -> None:
    assert problems("""
        targets:
          demo:
            pairwise:
              data: letters.parquet
              metrics: [pairwise-bias, pairwise-refusal-disparity]
              slices: []
              gates:
                max_mean_divergence: 0.2
                overall:
                  max_mean_divergence: {pairwise-bias: 0.5, pairwise-bais: 0.5, tone: 0.1}
                  min_equivalence_rate: 1.5
                  max_divergense_rate: 0.1
                per_slice:
                  max_divergence_rate: 0.1
                conservative: 1
        """) == [
        f"m.yaml:8: {BLOCK}.gates.max_mean_divergence: max_mean_divergence is a gate threshold: "
        "thresholds go under overall: (the whole block) or per_slice: (every slice row), e.g. "
        "gates: {overall: {max_mean_divergence: 0.2}}",
        f"m.yaml:10: {BLOCK}.gates.overall.max_mean_divergence.pairwise-bais: the gate names "
        "metric 'pairwise-bais', which is not in this block's metrics; did you mean "
        "'pairwise-bias'? (metrics: pairwise-bias, pairwise-refusal-disparity)",
        f"m.yaml:10: {BLOCK}.gates.overall.max_mean_divergence.tone: the gate names metric "
        "'tone', which is not in this block's metrics (metrics: pairwise-bias, "
        "pairwise-refusal-disparity)",
        f"m.yaml:11: {BLOCK}.gates.overall.min_equivalence_rate: must be a number from 0 to 1, "
        "got 1.5 (scores are normalised: raw rubric score / rubric max, so 2 on a 0-4 rubric is "
        "0.5; rates, like max_error_rate, are shares of pairs)",
        f"m.yaml:12: {BLOCK}.gates.overall.max_divergense_rate: unknown key 'max_divergense_rate'; "
        "did you mean 'max_divergence_rate'?",
        f"m.yaml:13: {BLOCK}.gates.per_slice: per_slice gates need slice columns, and slices is "
        "empty; set slices: [dimension] or move the gates to overall",
        f"m.yaml:15: {BLOCK}.gates.conservative: expected true or false, got a number (1)",
    ]


def test_gates_per_metric_overall_and_per_slice(workdir: Path) -> None:
    assert (
        problems("""
        targets:
          demo:
            pairwise:
              data: letters.parquet
              metrics: [pairwise-bias, pairwise-refusal-disparity]
              gates:
                overall: {max_mean_divergence: 0.3}
                per_slice:
                  min_equivalence_rate: {pairwise-refusal-disparity: 0.9}
                conservative: true
        """)
        == []
    )
    gates = load_manifest("m.yaml").targets["demo"].gates
    assert gates.overall == {"max_mean_divergence": 0.3}
    assert gates.per_slice == {"min_equivalence_rate": {"pairwise-refusal-disparity": 0.9}}
    assert gates.conservative is True


def test_an_api_key_in_the_file_is_refused(workdir: Path) -> None:
    assert problems("""
        targets:
          demo:
            pairwise:
              data: letters.parquet
              judge:
                model: gpt-4o-mini
                api_key: sk-not-a-real-key
                base_url: http://localhost:8000/v1
        """) == [
        f"m.yaml:7: {BLOCK}.judge.api_key: an API key must never be written in the manifest (it "
        "would end up in version control); set the OPENAI_API_KEY environment variable, or name "
        "another variable with api_key_env: NAME",
    ]


def test_judge_forms(workdir: Path) -> None:
    assert problems("""
        targets:
          demo:
            pairwise:
              data: letters.parquet
              judge: gpt-4o
        """) == [
        f'm.yaml:5: {BLOCK}.judge: expected "heuristic" or a mapping with a model (e.g. {{model: '
        "gpt-4o-mini, max_concurrency: 32}), got a string ('gpt-4o')",
    ]
    assert problems("""
        targets:
          demo:
            pairwise:
              data: letters.parquet
              judge: {base_url: "http://localhost:8000/v1"}
        """) == [
        f"m.yaml:5: {BLOCK}.judge.model: missing required key 'model' (the judge model's name)"
    ]
    assert (
        problems("""
        targets:
          demo:
            pairwise:
              data: letters.parquet
              judge:
                model: judge-small
                base_url: http://localhost:8000/v1
                api_key_env: ANTHROPIC_API_KEY
                max_concurrency: 8
                requests_per_minute: 600
                temperature: 0
        """)
        == []
    )
    judge = load_manifest("m.yaml").targets["demo"].judge
    assert (judge.kind, judge.model) == ("openai", "judge-small")
    assert judge.api_key_env == "ANTHROPIC_API_KEY"
    assert dict(judge.options) == {"base_url": "http://localhost:8000/v1", "max_concurrency": 8,
                                   "requests_per_minute": 600, "temperature": 0}  # fmt: skip


def test_strategy_specific_keys(workdir: Path) -> None:
    assert problems("""
        targets:
          demo:
            pairwise:
              data: letters.parquet
              strategy: contrastive
              reference: male
              poles: [pole_a]
          other:
            pairwise:
              data: letters.parquet
              poles: [pole_a, pole_b]
        """) == [
        f"m.yaml:6: {BLOCK}.reference: reference applies to strategy group; a contrastive block "
        "names its two roles with poles: [pole_a, pole_b]",
        f"m.yaml:7: {BLOCK}.poles: expected two different role values, got 1",
        "m.yaml:11: targets.other.pairwise.poles: poles apply to strategy contrastive; a group "
        "block names its reference role with reference: NAME (or set strategy: contrastive)",
    ]


def test_thresholds_must_be_ordered(workdir: Path) -> None:
    assert problems("""
        targets:
          demo:
            pairwise:
              data: letters.parquet
              equivalence_threshold: 0.5
              divergence_threshold: 0.5
        """) == [
        f"m.yaml:5: {BLOCK}.equivalence_threshold: equivalence_threshold (0.5) must be below "
        "divergence_threshold (0.5): a score cannot be both equivalent and divergent",
    ]


def test_document_level_problems(workdir: Path) -> None:
    assert problems("") == [
        "m.yaml:1: expected a mapping of keys, got nothing (null)",
    ]
    assert problems("targest: {}\nversion: 2\n") == [
        "m.yaml:1: targest: unknown key 'targest'; did you mean 'targets'?",
        "m.yaml:1: targets: missing required key 'targets' (a mapping of target name -> pairwise "
        "block)",
        "m.yaml:2: version: only manifest version 1 exists, got a number (2)",
    ]
    assert problems("targets: {}\n") == [
        "m.yaml:1: targets: no target is defined; add one, e.g. targets: {demo: {pairwise: "
        "{data: runs.parquet}}}",
    ]
    assert problems("targets:\n  a/b:\n    description: x\n") == [
        "m.yaml:2: targets.a/b: a target name may hold only letters, digits, '_', '-' and '.' "
        "(it names the output folder)",
        "m.yaml:3: targets.a/b.pairwise: missing required key 'pairwise' (the pairwise block: "
        "data, metrics, gates)",
    ]
    assert problems("targets:\n  demo:\n    pairwise:\n      strategy: group\n") == [
        f"m.yaml:4: {BLOCK}.data: missing required key 'data' (the file(s) of response rows "
        "(parquet, CSV, TSV, NDJSON): a path, a folder, a glob or a list, relative to the "
        "manifest)",
    ]
    assert [str(p) for p in validate_manifest("nope.yaml")] == [
        "nope.yaml:1: the manifest file does not exist"
    ]


def test_yaml_syntax_errors_and_duplicate_keys(workdir: Path) -> None:
    assert problems("targets:\n  demo: [unclosed\n") == [
        "m.yaml:3: invalid YAML: expected ',' or ']', but got '<stream end>'",
    ]
    assert problems("targets:\n  demo:\n    pairwise:\n      slices: dimension: x\n") == [
        "m.yaml:4: invalid YAML: mapping values are not allowed here",
    ]
    assert problems("""
        targets:
          demo:
            pairwise:
              data: letters.parquet
              both_orders: true
              both_orders: false
        """) == [
        f"m.yaml:6: {BLOCK}.both_orders: duplicate key 'both_orders' (also on line 5); YAML would "
        "keep only the last value: remove one",
    ]


def test_every_problem_at_once_in_one_error(workdir: Path) -> None:
    Path("m.yaml").write_text(
        "targets:\n  demo:\n    pairwise:\n      data: gone.parquet\n      metrics: [nope]\n"
        "      judge: {model: m, api_key: k}\n"
    )
    with pytest.raises(ManifestError) as caught:
        load_manifest("m.yaml")
    assert str(caught.value) == "\n".join(
        [
            "Manifest 'm.yaml' has 3 problems:",
            f"  m.yaml:4: {BLOCK}.data: data file 'gone.parquet' does not exist (paths are "
            "relative to the manifest's folder)",
            f"  m.yaml:5: {BLOCK}.metrics[0]: unknown metric 'nope'. Shipped metrics: outcome, "
            "pairwise-bias, pairwise-demographic-bias, pairwise-favour, "
            "pairwise-refusal-disparity; or give the path of a metric file (.yaml)",
            f"  m.yaml:6: {BLOCK}.judge.api_key: an API key must never be written in the manifest "
            "(it would end up in version control); set the OPENAI_API_KEY environment variable, "
            "or name another variable with api_key_env: NAME",
            "Fix them and run again; `pairwise-polars validate MANIFEST` checks a manifest "
            "without running it.",
        ]
    )


def test_runner_is_local_or_ray(workdir: Path) -> None:
    assert problems("""
        targets:
          demo:
            pairwise:
              data: letters.parquet
              runner: rya
        """) == [
        f"m.yaml:5: {BLOCK}.runner: expected local or ray, got a string ('rya'); did you mean "
        "'ray'?"
    ]
    assert problems("targets: {demo: {pairwise: {data: letters.parquet, runner: ray}}}") == []
    assert load_manifest("m.yaml").targets["demo"].runner == "ray"
    assert problems("targets: {demo: {pairwise: {data: letters.parquet}}}") == []
    assert load_manifest("m.yaml").targets["demo"].runner == "local"
