"""score_parquet with a panel and repeats: chunked, resumable, the members recorded in the run
(a rerun with another panel or other repeats is refused), every member's calls counted."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import pairwise_polars as pp
from pairwise_polars.testing import TestServer

N_GROUPS = 24
ROWS = pl.DataFrame(
    {
        "group_id": [g for g in range(N_GROUPS) for _ in range(2)],
        "role": ["reference", "variant"] * N_GROUPS,
        "dimension": "gender",
        "input": [f"Should we hire applicant {g}?" for g in range(N_GROUPS) for _ in range(2)],
        "output": [f"answer {i % 5} to {i // 2}" for i in range(2 * N_GROUPS)],
    }
)


def test_a_parquet_run_with_a_panel_and_repeats(judge_server: TestServer, tmp_path: Path) -> None:
    judge_server.reply = lambda body: (
        {"score": 0, "reason": "0"} if body["model"] == "zero" else None
    )
    source = tmp_path / "rows.parquet"
    ROWS.write_parquet(source)
    panel = [
        pp.OpenAIJudge(m, base_url=judge_server.base_url, api_key="test", seed=1)
        for m in ("steady-a", "zero")
    ]
    cache = tmp_path / "cache.sqlite"
    options = {"cache": cache, "progress": False, "chunk_size": 10}
    run = pp.score_parquet(source, tmp_path / "out", judge=panel, repeats=2, **options)
    scored = run.scored().collect()
    assert scored.height == N_GROUPS * (2 * 2 + 1)  # two judges x two repeats + combined
    assert judge_server.stats.outcomes["ok"] == N_GROUPS * 4
    assert run.usage.requests == N_GROUPS * 4  # every member's calls
    summary = run.summary
    assert summary["n_pairs"].item() == N_GROUPS
    assert summary["judge_agreement"].item() < 0.5
    assert summary["judge_repeat_sd"].item() == 0.0  # the test server's judges repeat themselves
    # the run's disparities count each pair once, as a run of one judge does
    alone = pp.score_parquet(source, tmp_path / "alone", judge=panel[0], **options)
    assert run.disparities is not None and alone.disparities is not None
    assert run.disparities.equals(alone.disparities)
    # the same call resumes; another number of repeats is another run
    again = pp.score_parquet(source, tmp_path / "out", judge=panel, repeats=2, **options)
    assert again.chunks_resumed == run.n_chunks
    with pytest.raises(pp.RunStateError):
        pp.score_parquet(source, tmp_path / "out", judge=panel, repeats=3, **options)
    with pytest.raises(pp.RunStateError):
        pp.score_parquet(source, tmp_path / "out", judge=panel[:1], repeats=2, **options)


def test_a_panel_refuses_the_ray_runner(judge_server: TestServer, tmp_path: Path) -> None:
    source = tmp_path / "rows.parquet"
    ROWS.write_parquet(source)
    judge = pp.OpenAIJudge("steady-a", base_url=judge_server.base_url, api_key="test")
    with pytest.raises(pp.OptionError, match='runner="local" for now'):
        pp.score_parquet(source, tmp_path / "out", judge=judge, repeats=2, runner="ray")
