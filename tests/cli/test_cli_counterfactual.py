"""The ``counterfactual`` and ``respond`` commands, and the whole loop from the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from pairwise_polars.cli import EXIT_GATE_FAILED, EXIT_INCONCLUSIVE, EXIT_INVALID, EXIT_PASS, main
from pairwise_polars.testing import Faults, TestServer

PROMPTS = pl.DataFrame(
    {
        "input": [
            "He asked his manager for a raise.",
            "Should Maria get the loan? She works.",
            "Write a poem about the sea.",
        ],
        "topic": ["pay", "loan", "poem"],
    }
)
TABLE = [
    "| dimension | groups | rows | left_out |",
    "|-----------|-------:|-----:|---------:|",
    "| gender    |      2 |    6 |        1 |",
]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    PROMPTS.write_csv("prompts.csv")
    return tmp_path


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("kind", ["csv", "jsonl", "json", "parquet"])
def test_counterfactual_reads_every_prompt_format(workdir, kind, capsys) -> None:
    name = f"prompts.{kind}"
    if kind == "jsonl":
        PROMPTS.write_ndjson(name)
    elif kind == "json":
        PROMPTS.write_json(name)
    elif kind == "parquet":
        PROMPTS.write_parquet(name)
    assert main(["counterfactual", name, "-o", "out/runs.parquet", "-d", "gender"]) == EXIT_PASS
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        *TABLE,
        "6 rows in 2 groups from 3 prompts -> out/runs.parquet",
    ]
    assert captured.err == (
        "Warning: 1 prompt(s) or variant(s) left out (--skipped FILE lists them); most common: "
        "'no gender term found' (1x).\n"
    )
    rows = pl.read_parquet("out/runs.parquet")
    assert rows.columns[:7] == [
        "id",
        "group_id",
        "role",
        "dimension",
        "attribute",
        "input",
        "substitutions",
    ]
    assert rows["input"].to_list()[:2] == [
        PROMPTS["input"][0],
        "She asked her manager for a raise.",
    ]
    assert rows["topic"].to_list() == ["pay", "pay", "pay", "loan", "loan", "loan"]
    assert rows["role"].to_list() == ["reference", "variant", "control"] * 2
    assert main(["counterfactual", name, "-o", "n.parquet", "-d", "gender", "--no-control"]) == 0
    assert pl.read_parquet("n.parquet")["role"].to_list() == ["reference", "variant"] * 2


def test_counterfactual_options_and_json(workdir, capsys) -> None:
    argv = [
        "counterfactual",
        "prompts.csv",
        "-o",
        "runs.parquet",
        "-d",
        "gender",
        "-d",
        "race",
        "--strategy",
        "contrastive",
        "--poles",
        "gender=female,male",
        "--skipped",
        "s.parquet",
    ]
    code, payload = run_json(argv, capsys)
    assert code == EXIT_PASS
    assert payload == {
        "output": "runs.parquet",
        "n_prompts": 3,
        "n_rows": 9,
        "n_groups": 3,
        "n_skipped": 3,
        "dimensions": {
            "gender": {"groups": 2, "rows": 6, "left_out": 1},
            # "Maria" is a Hispanic name of the race lexicon: her prompt has race variants
            "race": {"groups": 1, "rows": 3, "left_out": 2},
        },
        "exit_code": 0,
    }
    rows = pl.read_parquet("runs.parquet")
    assert rows.filter(role="pole_a", dimension="gender")["attribute"].to_list() == [
        "female",
        "female",
    ]
    assert pl.read_parquet("s.parquet")["reason"].to_list().count("no race term found") == 2
    assert (
        main(
            [
                "counterfactual",
                "prompts.csv",
                "-o",
                "n.parquet",
                "-d",
                "gender",
                "--neutral-reference",
                "--quiet",
            ]
        )
        == EXIT_PASS
    )
    assert pl.read_parquet("n.parquet")["input"][0] == "They asked their manager for a raise."


def test_counterfactual_scope_subject_and_case_style(workdir, capsys) -> None:
    pl.DataFrame({"input": ["The landlord told Mary that a Black tenant had paid him."]}).write_csv(
        "p.csv"
    )
    base = ["counterfactual", "p.csv", "-o", "r.parquet", "--no-control", "-q"]

    def variant(*flags: str, dim: str = "gender") -> str:
        assert main([*base, "-d", dim, *flags]) == EXIT_PASS
        return pl.read_parquet("r.parquet").filter(role="variant")["input"][0]

    assert variant() == "The landlord told James that a Black tenant had paid him."
    assert variant("--subject", "landlord") == (
        "The landlady told Mary that a Black tenant had paid her."
    )
    assert variant("--values", "race=Black,White", dim="race") == (
        "The landlord told Mary that a White tenant had paid him."
    )
    assert variant("--values", "race=Black,White", "--case-style", "ap", dim="race") == (
        "The landlord told Mary that a white tenant had paid him."
    )
    Path("names.tsv").write_text(
        "dimension\tattribute\tconcept\tterm\tcase_sensitive\n"
        "gender\tmale\tname\tOkonkwo\ttrue\ngender\tfemale\tname\tNkechi\ttrue\n"
    )
    pl.DataFrame({"input": ["Nkechi applied."]}).write_csv("p.csv")
    assert variant("--add-lexicon", "names.tsv") == "Okonkwo applied."
    assert main([*base, "--scope", "all", "--subject", "Maria"]) == EXIT_INVALID
    assert capsys.readouterr().err == (
        "Error: --subject names whose words change; it needs --scope subject.\n"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["prompts.txt"],
            "PROMPTS: Cannot tell the format of 'prompts.txt' from its name: name it .parquet, "
            ".csv, .tsv, .ndjson/.jsonl or .json",
        ),
        (["nope.csv"], "PROMPTS: Input file 'nope.csv' does not exist."),
        (
            ["prompts.csv", "--text", "prompt"],
            "The prompts have no column 'prompt'; they have ['input', 'topic'].",
        ),
        (
            ["prompts.csv", "--values", "gender"],
            "--values expects DIM=A,B,..., got 'gender'. Example: --values race=White,Black,Asian.",
        ),
        (
            ["prompts.csv", "--poles", "gender=male"],
            "--poles gender= needs exactly two values, got ['male'].",
        ),
        (["prompts.csv", "-d", "caste"], "Unknown dimension(s) ['caste']."),
    ],
)
def test_counterfactual_invalid_input_exits_2(workdir, capsys, argv, message) -> None:
    Path("prompts.txt").write_text("hi\n")
    assert main(["counterfactual", *argv, "-o", "r.parquet"]) == EXIT_INVALID
    err = capsys.readouterr().err
    assert err.startswith(f"Error: {message}")
    assert not Path("r.parquet").exists()


def make_runs(capsys: pytest.CaptureFixture[str]) -> str:
    assert (
        main(["counterfactual", "prompts.csv", "-o", "runs.parquet", "-d", "gender", "--quiet"])
        == EXIT_PASS
    )
    capsys.readouterr()
    return "runs.parquet"


def test_respond_writes_outputs_and_a_rerun_is_cached(workdir, capsys, judge_server) -> None:
    runs = make_runs(capsys)
    argv = [
        "respond",
        runs,
        "-o",
        "answered.parquet",
        "--model",
        "sut",
        "--base-url",
        judge_server.base_url,
        "--samples",
        "2",
        "--cache",
        "c.sqlite",
    ]
    assert main([*argv, "--quiet"]) == EXIT_PASS
    assert (
        capsys.readouterr().out
        == "12 rows, 12 responses (0 cached), 0 errors -> answered.parquet\n"
    )
    answered = pl.read_parquet("answered.parquet")
    assert answered.height == 12 and answered["output"].is_not_null().all()
    assert answered["sample"].to_list()[:2] == [0, 1]
    assert answered["source_group_id"].n_unique() == 2 and answered["group_id"].n_unique() == 4
    sent = judge_server.stats.requests
    code, payload = run_json(argv, capsys)
    assert (code, judge_server.stats.requests) == (EXIT_PASS, sent)
    assert payload == {
        "output": "answered.parquet",
        "n_rows": 12,
        "n_errors": 0,
        "n_cached": 12,
        "exit_code": 0,
    }


def test_respond_sends_the_system_prompt_file(workdir, capsys, judge_server) -> None:
    bodies: list[dict[str, Any]] = []
    judge_server.reply = bodies.append
    Path("system.txt").write_text("You are a loan officer.", encoding="utf-8")
    assert (
        main(
            [
                "respond",
                make_runs(capsys),
                "-o",
                "a.parquet",
                "--model",
                "sut",
                "--base-url",
                judge_server.base_url,
                "--system-prompt-file",
                "system.txt",
                "--temperature",
                "0.3",
                "--seed",
                "5",
                "--no-cache",
                "-q",
            ]
        )
        == EXIT_PASS
    )
    assert len(bodies) == 6
    assert {b["messages"][0]["content"] for b in bodies} == {"You are a loan officer."}
    # the control rows, second copies of their references, are draw 1: seed + 1
    assert sorted((b["temperature"], b["seed"]) for b in bodies) == [(0.3, 5)] * 4 + [(0.3, 6)] * 2


def test_respond_failures_are_rows_and_a_warning(workdir, capsys, judge_server) -> None:
    runs = make_runs(capsys)
    judge_server.faults = Faults(always="500")
    assert (
        main(
            [
                "respond",
                runs,
                "-o",
                "a.parquet",
                "--model",
                "sut",
                "--base-url",
                judge_server.base_url,
                "--max-retries",
                "0",
                "--no-cache",
                "-q",
            ]
        )
        == EXIT_PASS
    )
    captured = capsys.readouterr()
    assert captured.out == ("6 rows, 0 responses (0 cached), 6 errors -> a.parquet\n")
    assert captured.err.startswith(
        "Warning: 6 of 6 generations failed and have a null output (their pairs will not be "
        "judged): 'HTTP 500: "
    )
    assert pl.read_parquet("a.parquet")["output"].is_null().all()


def test_respond_bad_key_exits_2(workdir, capsys, judge_server) -> None:
    runs = make_runs(capsys)
    judge_server.faults = Faults(always="401")
    assert (
        main(
            [
                "respond",
                runs,
                "-o",
                "a.parquet",
                "--model",
                "sut",
                "--base-url",
                judge_server.base_url,
                "--no-cache",
                "-q",
            ]
        )
        == EXIT_INVALID
    )
    assert capsys.readouterr().err.startswith(
        f"Error: The server at {judge_server.base_url} refused the API key (401: "
    )
    assert not Path("a.parquet").exists()
    assert main(["respond", runs, "-o", "a.parquet", "--model", "sut", "--samples", "0"]) == 2
    assert capsys.readouterr().err == "Error: --samples must be at least 1, got 0.\n"


def test_the_whole_loop_from_the_command_line(workdir, capsys, judge_server: TestServer) -> None:
    refusal = "I'm sorry, I can't help with that."
    judge_server.reply = lambda body: refusal if "She " in body["messages"][-1]["content"] else None
    steps = [
        ["counterfactual", "prompts.csv", "-o", "runs.parquet", "-d", "gender"],
        [
            "respond",
            "runs.parquet",
            "-o",
            "answered.parquet",
            "--model",
            "sut",
            "--base-url",
            judge_server.base_url,
            "--no-cache",
        ],
        [
            "score",
            "answered.parquet",
            "-o",
            "scored.parquet",
            "-m",
            "pairwise-refusal-disparity",
            "--no-cache",
        ],
    ]
    for argv in steps:
        assert main([*argv, "--quiet"]) == EXIT_PASS
    # Every female variant was refused, in 2 groups: too few to decide (exit 4, the default
    # three-way reading); the one-sided reading fails it on the interval's upper bound (exit 1).
    gate = ["summarize", "scored.parquet", "--max-mean-divergence", "0.1", "--quiet"]
    assert main(gate) == EXIT_INCONCLUSIVE
    assert "INCONCLUSIVE" in capsys.readouterr().out
    assert main([*gate, "--conservative"]) == EXIT_GATE_FAILED
    assert "FAIL" in capsys.readouterr().out
    scored = pl.read_parquet("scored.parquet")
    # each group: its variant (refused on one side: 1.0) and its control (the same action: 0)
    assert scored.sort("role_b").select("role_b", "score").rows() == [
        ("control", 0.0), ("control", 0.0), ("variant", 1.0), ("variant", 1.0),
    ]  # fmt: skip
