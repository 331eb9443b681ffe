"""`pairwise-polars score --run-dir`: a large run chunk by chunk, resumable, from the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import pairwise_polars as pp
from pairwise_polars.cli import EXIT_INVALID, EXIT_PASS, main

JOBS = str(Path(__file__).resolve().parents[2] / "data" / "jobs_group.parquet")
METRICS = ["-m", "pairwise-bias", "-m", "pairwise-refusal-disparity"]


def test_run_dir_scores_in_chunks_and_resumes(tmp_path: Path, capsys) -> None:
    run_dir = tmp_path / "run"
    args = ["score", JOBS, *METRICS, "--run-dir", str(run_dir), "--chunk-size", "200", "--json"]
    assert main(args) == EXIT_PASS
    first = json.loads(capsys.readouterr().out)
    parts = sorted((run_dir / "scored").glob("part-*.parquet"))
    assert len(parts) >= 4  # 960 pairs in chunks of about 200
    scored = pl.read_parquet(parts)
    in_memory = pp.score(pl.read_parquet(JOBS), ["pairwise-bias", "pairwise-refusal-disparity"],
                         progress=False)  # fmt: skip
    assert scored.height == in_memory.height == 2 * first["n_pairs"]
    key = ["pair_id", "metric"]
    assert scored.sort(key)["score"].equals(in_memory.sort(key)["score"])
    assert (run_dir / "summary.parquet").is_file() and (run_dir / "run.json").is_file()

    assert main(args) == EXIT_PASS  # the same command again: everything is resumed
    second = json.loads(capsys.readouterr().out)
    assert second["chunks_resumed"] == len(parts)


def test_run_dir_refuses_another_run_without_overwrite(tmp_path: Path, capsys) -> None:
    run_dir = str(tmp_path / "run")
    assert main(["score", JOBS, "--run-dir", run_dir]) == EXIT_PASS
    assert " pairs in 1 chunk (0 resumed, " in capsys.readouterr().out  # one chunk, said so
    code = main(["score", JOBS, "-m", "pairwise-refusal-disparity", "--run-dir", run_dir])
    assert code == EXIT_INVALID
    assert capsys.readouterr().err.startswith("Error: ")
    assert main(["score", JOBS, "-m", "pairwise-refusal-disparity", "--run-dir", run_dir,
                 "--overwrite", "--quiet"]) == EXIT_PASS  # fmt: skip


def test_out_or_run_dir_is_required(capsys) -> None:
    assert main(["score", JOBS]) == EXIT_INVALID
    assert "one of the arguments -o/--out --run-dir is required" in capsys.readouterr().err


def test_runner_ray_needs_a_run_dir(tmp_path: Path, capsys) -> None:
    out = str(tmp_path / "scored.parquet")
    assert main(["score", JOBS, "-o", out, "--runner", "ray"]) == EXIT_INVALID
    err = capsys.readouterr().err
    assert "--runner ray scores a run directory: add --run-dir DIR" in err
    assert main(["score", JOBS, "--run-dir", str(tmp_path), "--ray-actors", "2"]) == EXIT_INVALID
    assert "--ray-actors sizes the Ray runner's pool: add --runner ray." in capsys.readouterr().err
    assert main(["score", JOBS, "--run-dir", str(tmp_path), "--runner", "spark"]) == EXIT_INVALID
    assert "invalid choice: 'spark'" in capsys.readouterr().err
    assert not (tmp_path / "run.json").exists()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Ray's own, about its internals
def test_runner_ray_gives_the_local_run(tmp_path: Path, capsys, ray_cluster) -> None:
    local, on_ray = tmp_path / "local", tmp_path / "ray"
    common = ["score", JOBS, "--chunk-size", "300", "--quiet", "--no-cache"]
    assert main([*common, "--run-dir", str(local)]) == EXIT_PASS
    assert main([*common, "--run-dir", str(on_ray), "--runner", "ray", "--ray-actors", "2"]) == 0
    key = ["pair_id", "metric"]
    scored = {d: pl.read_parquet(d / "scored" / "*.parquet").sort(key) for d in (local, on_ray)}
    assert scored[on_ray].drop("latency_s").equals(scored[local].drop("latency_s"))
    summaries = [pl.read_parquet(d / "summary.parquet") for d in (local, on_ray)]
    assert summaries[0].equals(summaries[1])


def test_the_readme_scaling_out_commands_parse() -> None:
    import re
    import shlex

    import yaml

    from pairwise_polars.cli import build_parser

    readme = (Path(JOBS).parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("#### Scaling out")[1].split("\n### ")[0]
    commands = [
        line
        for block in re.findall(r"```(?:bash|yaml)\n(.*?)```", section, re.DOTALL)
        for line in [" ".join(block.replace("\\\n", " ").replace(">-\n", " ").split())]
        if "pairwise-polars score" in line
    ]
    assert len(commands) == 3  # the plain command, ray job submit, the RayJob entrypoint
    for command in commands:
        words = shlex.split(command.split("pairwise-polars ", 1)[1].split(" runtimeEnvYAML")[0])
        args = build_parser().parse_args(words)
        assert (args.runner, args.ray_actors is not None) == ("ray", True)
    kuberay = re.findall(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert yaml.safe_load(kuberay[0])["kind"] == "RayJob"
