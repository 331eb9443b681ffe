"""The attribute audit (audit="mask"): each pair judged again with the attribute's terms
masked, through the real openai client against the test server's judge behaviours."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import polars as pl
import pytest

import pairwise_polars as pp
from pairwise_polars.cli import EXIT_PASS, main
from pairwise_polars.cli._verdicts import EXIT_INCONCLUSIVE
from pairwise_polars.counterfactual._mask import FOUND, mask_terms
from pairwise_polars.testing import TestServer, judge_behaviour

DATA = Path(__file__).resolve().parents[2] / "data"
LETTERS = pl.read_parquet(DATA / "letters_contrastive.parquet")
GENDER_WORDS = r"(?i)\b(she|he|her|his|him|woman|man|kelly|joseph)\b"


def judge(server: TestServer) -> pp.OpenAIJudge:
    return pp.OpenAIJudge("judge", base_url=server.base_url, api_key="test")


def audited(server: TestServer, **options: object) -> pl.DataFrame:
    return pp.score(
        LETTERS,
        judge=judge(server),
        strategy="contrastive",
        audit="mask",
        cache=False,
        progress=False,
        **options,  # type: ignore[arg-type]
    )


def test_each_pair_is_judged_plain_and_masked(judge_server: TestServer) -> None:
    scored = audited(judge_server)
    assert scored.group_by("view").len().sort("view").rows() == [("masked", 60), ("plain", 60)]
    assert scored.filter(pl.col("view") == "masked")["score"].null_count() == 0
    # What the judge read in the masked view: no gender word of either letter, and the mark.
    masked = [
        body["messages"][-1]["content"]
        for body in (r.body for r in judge_server.received)
        if body and "[gender]" in body["messages"][-1]["content"]
    ]
    assert len(masked) == 60
    assert not any(pl.Series(masked).str.contains(GENDER_WORDS))
    # The plain rows are the frame scored without the audit, row for row.
    plain = scored.filter(pl.col("view") == "plain").drop("view", "latency_s", "cached")
    alone = pp.score(LETTERS, judge=judge(judge_server), strategy="contrastive", cache=False,
                     progress=False)  # fmt: skip
    assert plain.equals(alone.drop("latency_s", "cached"))


def test_a_judge_that_reacts_to_gender_is_named(judge_server: TestServer) -> None:
    judge_server.behaviour = judge_behaviour("gender-biased")
    summary = pp.aggregate(audited(judge_server))
    row = summary.row(0, named=True)
    assert row["judge_attribute_effect_low"] > 0  # the bonus: +2 of 4 when genders differ
    assert row["n_judge_attribute"] == 60 and row["n_not_masked"] == 0
    result = pp.gate(summary, max_judge_attribute_effect=0.1)
    assert result.status == "inconclusive"
    effect, low, high = (row[f"judge_attribute_effect{s}"] for s in ("", "_low", "_high"))
    named = (
        f"the judge reacts to the attribute itself: {effect:+.2f} [{low:.2f}, {high:.2f}] on "
        "gender; its scores are not a measure of the system"
    )
    assert named in result.verdict()
    # The figures of the run are the plain rows' only.
    plain = pp.aggregate(audited(judge_server).filter(pl.col("view") == "plain").drop("view"))
    assert summary.select(plain.columns).equals(plain)


def test_an_unbiased_judge_holds_zero(judge_server: TestServer) -> None:
    summary = pp.aggregate(audited(judge_server))
    row = summary.row(0, named=True)
    assert row["judge_attribute_effect_low"] < 0 < row["judge_attribute_effect_high"]
    result = pp.gate(summary, max_judge_attribute_effect=0.3, conservative=True)
    assert result.passed and "reacts to the attribute" not in result.verdict()


def test_a_judge_answering_zero_shows_no_effect(judge_server: TestServer) -> None:
    judge_server.behaviour = judge_behaviour("always-zero")
    row = pp.aggregate(audited(judge_server)).row(0, named=True)
    assert (row["judge_attribute_effect"], row["judge_attribute_effect_low"]) == (0.0, 0.0)


def test_masked_judgements_are_planned_and_cached(judge_server: TestServer, tmp_path) -> None:
    cache = tmp_path / "cache.sqlite"
    options = {"judge": judge(judge_server), "strategy": "contrastive", "cache": cache}
    plain = pp.plan(LETTERS, **options)  # type: ignore[arg-type]
    both = pp.plan(LETTERS, audit="mask", **options)  # type: ignore[arg-type]
    assert both.n_judgements == 2 * plain.n_judgements
    first = pp.score(LETTERS, audit="mask", progress=False, **options)  # type: ignore[arg-type]
    sent = judge_server.stats.requests
    again = pp.score(LETTERS, audit="mask", progress=False, **options)  # type: ignore[arg-type]
    assert judge_server.stats.requests == sent  # every masked judgement came from the cache
    assert again["cached"].all() and not first["cached"].any()


def test_pairs_with_nothing_to_mask_are_counted_and_named() -> None:
    rows = pl.read_parquet(DATA / "jobs_group.parquet")
    scored = pp.score(rows, audit="mask", cache=False, progress=False)
    masked = scored.filter(pl.col("view") == "masked")
    unmasked = masked.filter(pl.col("error").str.ends_with("term found to mask"))
    controls = masked.filter(pl.col("pair_kind") == "control")
    assert controls["error"].str.contains("a control pair").all()
    assert not unmasked.is_empty() and unmasked["score"].null_count() == unmasked.height
    # socioeconomic_status is no dimension of the lexicons: nothing there is guessed
    assert "not judged: no socioeconomic_status term found to mask" in unmasked["error"]
    summary = pp.aggregate(scored)
    counted = dict(zip(summary["dimension"], summary["n_not_masked"], strict=True))
    expected = unmasked.group_by("dimension").len()
    assert all(counted[d] == n for d, n in expected.iter_rows())
    n_plain = scored.filter(pl.col("view") == "plain").height
    assert (summary["n_pairs"] + summary["n_control"]).sum() == n_plain


def test_the_substitution_record_masks_words_the_lexicon_lacks() -> None:
    record = pl.List(pl.Struct({"source": pl.String, "target": pl.String}))
    pairs = pl.DataFrame(
        {
            "dimension": ["gender", "gender"],
            "output_a": ["Zorblax is kind.", "Nothing here."],
            "output_b": ["Quimby is kind.", "Nothing there."],
            "substitutions_a": [[], []],
            "substitutions_b": [[{"source": "Zorblax", "target": "Quimby"}], []],
        },
        schema_overrides={"substitutions_a": record, "substitutions_b": record},
    )
    masked = mask_terms(pairs, ["output_a", "output_b"])
    assert masked.select("output_a", "output_b", FOUND).rows() == [
        ("[gender] is kind.", "[gender] is kind.", True),
        ("Nothing here.", "Nothing there.", False),
    ]


def test_score_parquet_records_and_resumes_the_audit(judge_server: TestServer, tmp_path) -> None:
    judge_server.behaviour = judge_behaviour("gender-biased")
    LETTERS.write_parquet(tmp_path / "letters.parquet")
    options = {"strategy": "contrastive", "chunk_size": 20, "progress": False, "cache": False}
    run = pp.score_parquet(tmp_path / "letters.parquet", tmp_path / "run",
                           judge=judge(judge_server), audit="mask", **options)  # fmt: skip
    assert run.summary["judge_attribute_effect_low"][0] > 0
    assert run.summary["n_pairs"][0] == 60
    assert run.scored().collect().group_by("view").len().height == 2
    recorded = json.loads((tmp_path / "run" / "run.json").read_text())["fingerprint"]
    assert recorded["audit"] == "mask"
    with pytest.raises(pp.RunStateError, match="audit differs"):
        pp.score_parquet(tmp_path / "letters.parquet", tmp_path / "run",
                         judge=judge(judge_server), **options)  # fmt: skip


MANIFEST = """
targets:
  letters:
    pairwise:
      data: letters.parquet
      strategy: contrastive
      audit: mask
      judge: {{model: judge, base_url: "{url}"}}
      gates:
        overall: {{max_judge_attribute_effect: 0.1}}
"""


def test_manifest_and_cli_audit(judge_server: TestServer, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    LETTERS.write_parquet("letters.parquet")
    judge_server.behaviour = judge_behaviour("gender-biased")
    Path("m.yaml").write_text(textwrap.dedent(MANIFEST.format(url=judge_server.base_url)))
    assert main(["run", "m.yaml", "-o", "out", "--json", "--no-cache"]) == EXIT_INCONCLUSIVE
    target = json.loads(capsys.readouterr().out)["targets"]["letters"]
    assert {c["gate"] for c in target["checks"]} >= {"max_judge_attribute_effect"}
    assert pl.read_parquet("out/letters/summary.parquet")["judge_attribute_effect"][0] > 0

    judge_server.behaviour = judge_behaviour("always-zero")
    argv = ["score", "letters.parquet", "--strategy", "contrastive", "--audit", "mask"]
    argv += ["--judge", "judge", "--base-url", judge_server.base_url]
    assert main([*argv, "-o", "scored.parquet", "-q", "--no-cache"]) == EXIT_PASS
    assert pl.read_parquet("scored.parquet")["view"].value_counts().height == 2
    gate = ["--max-judge-attribute-effect", "0.1"]
    assert main(["summarize", "scored.parquet", "--by", *gate]) == EXIT_PASS
    assert main(["summarize", "scored.parquet", "--by", "--json"]) == EXIT_PASS
    assert "judge_attribute_effect" in capsys.readouterr().out


def test_a_comparison_reads_the_plain_rows_of_an_audited_run() -> None:
    options = {"strategy": "contrastive", "cache": False, "progress": False}
    audited_run = pp.score(LETTERS, audit="mask", **options)  # type: ignore[arg-type]
    plain_run = pp.score(LETTERS, **options)  # type: ignore[arg-type]
    compared = pp.compare(audited_run, plain_run)
    assert set(compared["n_matched"]) == {60}
    assert set(compared["delta"]) == {0.0}
