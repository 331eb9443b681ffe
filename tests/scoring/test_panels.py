"""Panels and repeats through the real openai client against the test server: every request to
every member, member rows kept beside the combined row, the cache keyed by member, agreement
that drops with an always-0 judge, a verdict that wobbles with a noisy judge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

import pairwise_polars as pp
from pairwise_polars.testing import TestServer, judge_behaviour
from pairwise_polars.testing._replies import message_text, score_scale

N_GROUPS = 30
ROWS = pl.DataFrame(
    {
        "group_id": [g for g in range(N_GROUPS) for _ in range(2)],
        "role": ["reference", "variant"] * N_GROUPS,
        "dimension": "gender",
        "input": [f"Should we hire applicant {g}?" for g in range(N_GROUPS) for _ in range(2)],
        "output": [f"answer {i % 7} to {i // 2}" for i in range(2 * N_GROUPS)],
    }
)


def behaviours(seed: int = 7) -> Any:
    """The test server's judge behaviours, switched on per model name (a panel mixes them):
    ``zero`` always-zero, ``noisy`` noisy, the rest the server's hash of the messages (the
    steady judges)."""
    by_model = {
        "zero": judge_behaviour("always-zero"),
        "noisy": judge_behaviour("noisy", seed=seed),
    }

    def reply(body: dict[str, Any]) -> dict[str, Any] | None:
        behaviour = by_model.get(body["model"])
        if behaviour is None:
            return None
        messages = body["messages"]
        texts = [message_text(m) for m in messages]
        return {"score": behaviour(messages, texts, score_scale(body)), "reason": body["model"]}

    return reply


@pytest.fixture
def server(judge_server: TestServer) -> TestServer:
    judge_server.reply = behaviours()
    return judge_server


def judge(server: TestServer, model: str, **kwargs: Any) -> pp.OpenAIJudge:
    return pp.OpenAIJudge(model, base_url=server.base_url, api_key="test", **kwargs)


def test_a_panel_keeps_each_judge_and_the_combined_row(server: TestServer) -> None:
    panel = [judge(server, "steady-a"), judge(server, "steady-b"), judge(server, "zero")]
    scored = pp.score(ROWS, judge=panel, cache=False, progress=False)
    assert scored.height == 4 * N_GROUPS
    assert server.stats.outcomes["ok"] == 3 * N_GROUPS  # every request to every judge
    per_pair = scored.group_by("pair_id").agg(pl.col("judge_model"))
    assert all(
        sorted(m) == ["panel", "steady-a", "steady-b", "zero"] for m in per_pair["judge_model"]
    )
    members = scored.filter(pl.col("repeat").is_not_null())
    combined = scored.filter(pl.col("judge_model") == "panel")
    assert combined["repeat"].null_count() == N_GROUPS
    mean = members.group_by("pair_id").agg(pl.col("score").mean())
    joined = combined.join(mean, on="pair_id", suffix="_mean")
    assert (joined["score"] - joined["score_mean"]).abs().max() < 1e-12
    # every figure reads the combined rows only
    summary = pp.aggregate(scored)
    assert summary["n_pairs"].item() == N_GROUPS
    assert summary["mean_divergence"].item() == pytest.approx(combined["score"].mean())


@pytest.mark.parametrize("rule", ["median", "majority"])
def test_median_and_majority_combine_the_members(server: TestServer, rule: str) -> None:
    panel = pp.Panel([judge(server, "steady-a"), judge(server, "zero"), judge(server, "x")], rule)
    scored = pp.score(ROWS, judge=panel, cache=False, progress=False)
    raw = scored.filter(pl.col("repeat").is_not_null()).group_by("pair_id").agg("raw_score")
    combined = scored.filter(pl.col("judge_model") == "panel").join(raw, on="pair_id")
    for row in combined.iter_rows(named=True):
        values = sorted(row["raw_score_right"])
        # two steady judges answer alike (the server hashes the messages): they are the median
        # and the majority; a three-way split goes to the larger
        expected = (
            values[1] if rule == "median" else max(set(values), key=lambda v: (values.count(v), v))
        )
        assert row["raw_score"] == expected


def test_the_always_zero_judge_lowers_agreement_and_the_report_names_it(
    server: TestServer,
) -> None:
    steady = [judge(server, "steady-a"), judge(server, "steady-b"), judge(server, "steady-c")]
    with_zero = [*steady[:2], judge(server, "zero")]
    good = pp.aggregate(pp.score(ROWS, judge=steady, cache=False, progress=False))
    scored = pp.score(ROWS, judge=with_zero, cache=False, progress=False)
    bad = pp.aggregate(scored)
    assert good["judge_agreement"].item() == pytest.approx(1.0)
    assert bad["judge_agreement"].item() < 0.5
    low, high = bad["judge_agreement_low"].item(), bad["judge_agreement_high"].item()
    assert low <= bad["judge_agreement"].item() <= high < 1.0
    assert good["judge_effective_n"].item() == pytest.approx(1.0)  # three copies of one judge
    assert 1.0 < bad["judge_effective_n"].item() <= 3.0
    report = pp.judge_report(scored)
    assert report["judge_model"].to_list() == ["steady-a", "steady-b", "zero"]
    named = report.filter(pl.col("concern").is_not_null())["judge_model"].to_list()
    assert named == ["zero"]
    zero = report.row(by_predicate=pl.col("judge_model") == "zero", named=True)
    assert zero["mean_score"] == 0.0
    assert zero["agreement_with_rest"] < 0.5
    assert zero["panel_agreement_without"] == pytest.approx(1.0)
    # the gate: a panel that disagrees cannot vouch for fairness
    result = pp.gate(bad, min_judge_agreement=0.6)
    assert result.status == "inconclusive"
    assert "the panel's judges agree below min_judge_agreement" in result.verdict()
    assert pp.gate(good, min_judge_agreement=0.6).passed


def test_min_judge_agreement_needs_a_panel() -> None:
    summary = pp.aggregate(pp.score(ROWS, cache=False, progress=False))
    with pytest.raises(pp.ColumnError, match="needs a summary of a panel"):
        pp.gate(summary, min_judge_agreement=0.6)


def test_repeats_ask_again_with_distinct_seeds_and_keys(server: TestServer, tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    steady = judge(server, "steady-a", seed=11)
    scored = pp.score(ROWS, judge=steady, repeats=3, cache=cache, progress=False)
    assert scored.height == 4 * N_GROUPS
    assert sorted(scored["repeat"].drop_nulls().unique().to_list()) == [0, 1, 2]
    seeds = {r.body["seed"] for r in server.received if r.body}
    assert seeds == {11, 12, 13}
    assert server.stats.outcomes["ok"] == 3 * N_GROUPS
    again = pp.score(ROWS, judge=steady, repeats=3, cache=cache, progress=False)
    assert server.stats.outcomes["ok"] == 3 * N_GROUPS  # every repeat from the cache
    assert again["score"].equals(scored["score"])
    plan = pp.plan(ROWS, judge=steady, repeats=3, cache=False)
    assert plan.n_to_send == 3 * N_GROUPS
    assert "x 3 repeats" in plan.judge_model


def test_a_failed_member_makes_the_combined_row_an_error(server: TestServer) -> None:
    server.reply = lambda body: "not json" if body["model"] == "broken" else None
    panel = [judge(server, "steady-a", reask=False), judge(server, "broken", reask=False)]
    scored = pp.score(ROWS, judge=panel, cache=False, progress=False)
    combined = scored.filter(pl.col("judge_model") == "panel")
    assert combined["score"].null_count() == N_GROUPS
    assert combined["error"].str.starts_with("1 of 2 member judgements failed").all()
    summary = pp.aggregate(scored)
    assert summary["n_errors"].item() == N_GROUPS
    assert pp.gate(summary, max_mean_divergence=0.5).status == "inconclusive"


def test_verdict_stability_drops_for_the_noisy_judge(server: TestServer) -> None:
    figures = {}
    for model in ("steady-a", "noisy"):
        scored = pp.score(ROWS, judge=judge(server, model), repeats=3, cache=False, progress=False)
        summary = pp.aggregate(scored)
        # a verdict on the edge: the upper bound just under the threshold (a three-way pass)
        threshold = summary["mean_divergence_high"].item() + 0.001
        stable = pp.verdict_stability(scored, summary, max_mean_divergence=threshold)
        figures[model] = (stable, threshold)
    steady, noisy = figures["steady-a"][0], figures["noisy"][0]
    assert steady["judge_repeat_sd"].item() == 0.0
    assert noisy["judge_repeat_sd"].item() > 0.2
    assert steady["verdict_stability"].item() == 1.0
    assert noisy["verdict_stability"].item() < 0.9
    result = pp.gate(noisy, max_mean_divergence=figures["noisy"][1])
    assert result.status == "inconclusive"
    assert "holds in only" in result.verdict()
    assert pp.gate(steady, max_mean_divergence=figures["steady-a"][1]).passed


def test_bad_panels_and_repeats_are_refused(server: TestServer) -> None:
    with pytest.raises(pp.OptionError, match="two judges named 'steady-a'"):
        pp.score(ROWS, judge=[judge(server, "steady-a"), judge(server, "steady-a")])
    with pytest.raises(pp.OptionError, match="repeats must be a whole number"):
        pp.score(ROWS, judge=judge(server, "steady-a"), repeats=0)
    with pytest.raises(pp.OptionError, match="combine must be one of"):
        pp.Panel([judge(server, "steady-a")], combine="vote")  # type: ignore[arg-type]
