"""Position handled by default: each pair is shown A-first or B-first by a hash of its pair_id,
the same on every run; a position-biased judge no longer lines up with reference vs variant."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

import pairwise_polars as pp
from pairwise_polars.testing import TestServer

BLOCK = re.compile(r"<<<([0-9a-f]{8})\n(.*?)\n>>>\1", re.DOTALL)
N_GROUPS = 200
ROWS = pl.DataFrame(
    {
        "group_id": [g for g in range(N_GROUPS) for _ in range(2)],
        "role": ["reference", "variant"] * N_GROUPS,
        "dimension": "gender",
        "input": [f"Should we hire applicant {g}?" for g in range(N_GROUPS) for _ in range(2)],
        "output": [
            f"{'REF' if i % 2 == 0 else 'VAR'} answer {i // 2}" for i in range(2 * N_GROUPS)
        ],
    }
)


def first_response(body: dict) -> str:
    """The text of the first response block (after the shared request block)."""
    return BLOCK.findall(body["messages"][1]["content"])[1][1]


@pytest.fixture
def biased(judge_server: TestServer) -> pp.OpenAIJudge:
    """A judge that prefers the first position: 2 when it sees the reference first, else 0."""
    judge_server.reply = lambda body: {
        "score": 2 if first_response(body).startswith("REF") else 0,
        "reason": "position-biased test judge",
    }
    return pp.OpenAIJudge("biased", base_url=judge_server.base_url, api_key="test")


def test_random_order_is_drawn_from_the_pair_id_and_balanced(biased: pp.OpenAIJudge) -> None:
    fixed = pp.score(ROWS, judge=biased, order="fixed", cache=False, progress=False)
    random = pp.score(ROWS, judge=biased, cache=False, progress=False)  # the default
    assert fixed["shown_first"].unique().to_list() == ["a"]
    # With a fixed order the judge's taste for the first position reads as unfairness to
    # every variant; shown in random order, it is spread over both sides.
    assert fixed["score"].mean() == 0.5
    share_b = (random["shown_first"] == "b").mean()
    assert 0.4 < share_b < 0.6  # 200 pairs: a hash, not a coin we can re-toss
    assert random["score"].to_list() == [0.5 if s == "a" else 0.0 for s in random["shown_first"]]
    again = pp.score(ROWS, judge=biased, cache=False, progress=False)
    assert again["shown_first"].equals(random["shown_first"])  # deterministic


def test_the_judge_sees_the_pair_in_the_order_recorded(
    judge_server: TestServer, biased: pp.OpenAIJudge
) -> None:
    seen: dict[str, str] = {}

    def record(body: dict) -> dict:
        blocks = BLOCK.findall(body["messages"][1]["content"])
        seen[blocks[0][1]] = blocks[1][1]  # request text -> first response text
        return {"score": 1, "reason": "ok"}

    judge_server.reply = record
    scored = pp.score(ROWS, judge=biased, cache=False, progress=False)
    for row in scored.iter_rows(named=True):
        first = seen[row["input_a"]]
        assert first == (row["output_a"] if row["shown_first"] == "a" else row["output_b"])


def test_the_cache_holds_across_reruns(
    tmp_path: Path, judge_server: TestServer, biased: pp.OpenAIJudge
) -> None:
    cache = tmp_path / "cache.sqlite"
    first = pp.score(ROWS, judge=biased, cache=cache, progress=False)
    sent = judge_server.stats.requests
    assert sent == N_GROUPS
    second = pp.score(ROWS, judge=biased, cache=cache, progress=False)
    assert judge_server.stats.requests == sent  # nothing sent again
    assert second["cached"].all() and second["score"].equals(first["score"])


def test_both_orders_keep_their_meaning_and_feed_the_summary(biased: pp.OpenAIJudge) -> None:
    scored = pp.score(ROWS, judge=biased, both_orders=True, cache=False, progress=False)
    assert scored["shown_first"].unique().to_list() == ["both"]  # judged in both orders
    assert scored["score_ab"].unique().to_list() == [0.5]  # (a, b): the reference first
    assert scored["score_ba"].unique().to_list() == [0.0]
    row = pp.aggregate(scored, by=()).row(0, named=True)
    assert row["mean_position_gap"] == 0.5
    assert row["position_flip_rate"] == 1.0  # equivalent in one order, not in the other


def test_a_judge_that_reads_raw_texts_sees_pairs_as_formed() -> None:
    scored = pp.score(ROWS.head(20), progress=False)  # the heuristic judge
    assert scored["shown_first"].unique().to_list() == ["a"]


def test_order_is_checked() -> None:
    with pytest.raises(pp.OptionError, match='order must be "random" or "fixed", got \'ab\''):
        pp.score(ROWS.head(2), order="ab", progress=False)  # type: ignore[arg-type]


def test_manifest_and_cli_take_the_order(
    tmp_path: Path,
    judge_server: TestServer,
    biased: pp.OpenAIJudge,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from pairwise_polars.cli import EXIT_INVALID, EXIT_PASS, main
    from pairwise_polars.manifest import load_manifest, run_target

    monkeypatch.chdir(tmp_path)
    ROWS.write_parquet("rows.parquet")
    argv = ["score", "rows.parquet", "-o", "f.parquet", "--judge", "biased", "--base-url",
            judge_server.base_url, "--no-cache", "-q", "--order", "fixed"]  # fmt: skip
    assert main(argv) == EXIT_PASS
    assert pl.read_parquet("f.parquet")["shown_first"].unique().to_list() == ["a"]

    block = "targets:\n  t:\n    pairwise:\n      data: rows.parquet\n      cache: false\n"
    judge = f"      judge: {{model: biased, base_url: '{judge_server.base_url}'}}\n"
    Path("m.yaml").write_text(block + judge + "      order: shuffled\n", encoding="utf-8")
    assert main(["validate", "m.yaml"]) == EXIT_INVALID
    err = capsys.readouterr().err
    assert "m.yaml:7: targets.t.pairwise.order: expected random or fixed, got a string" in err
    Path("m.yaml").write_text(block + judge + "      order: fixed\n", encoding="utf-8")
    run = run_target(load_manifest("m.yaml").targets["t"], progress=False)
    assert run.scored is not None and run.scored["shown_first"].unique().to_list() == ["a"]
    Path("m.yaml").write_text(block + judge, encoding="utf-8")  # random by default
    run = run_target(load_manifest("m.yaml").targets["t"], progress=False)
    assert run.scored is not None and run.scored["shown_first"].n_unique() == 2
