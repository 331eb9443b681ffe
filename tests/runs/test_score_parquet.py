"""score_parquet: chunked scoring of parquet runs, parts, the journal, resume and refusals."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import polars as pl
import pytest
from conftest import jobs, letters
from polars.testing import assert_frame_equal

import pairwise_polars as pp
from pairwise_polars.judges.heuristic import HeuristicJudge
from pairwise_polars.outcome._sided import SIDED
from pairwise_polars.runs import score_parquet
from pairwise_polars.runs._journal import locked
from pairwise_polars.runs._store import run_store

TEXT = ["input_a", "input_b", "output_a", "output_b"]
VOLATILE = ["latency_s"]  # wall-clock measurements differ between runs
METRICS = ["pairwise-bias", "pairwise-refusal-disparity"]


def in_memory(frame: pl.DataFrame, strategy: str = "group", **options) -> pl.DataFrame:
    scored = pp.score(frame, METRICS, strategy=strategy, cache=False, progress=False, **options)
    return scored.drop(TEXT)


def parts(destination: Path) -> pl.DataFrame:
    return pl.read_parquet(destination / "scored" / "*.parquet")


def assert_same_scored(got: pl.DataFrame, expected: pl.DataFrame) -> None:
    key = ["pair_id", "metric"]
    assert got.select(key).is_duplicated().sum() == 0
    # Parts also keep each side's outcome (checked in test_run_disparities.py).
    got = got.drop(SIDED, strict=False)
    assert_frame_equal(got.drop(VOLATILE).sort(key), expected.drop(VOLATILE).sort(key))


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "jobs.parquet"
    jobs().write_parquet(path)
    return path


@pytest.mark.parametrize(("n_rows", "chunk_size"), [(60, 1), (1380, 37), (1380, 10_000)])
def test_parts_equal_the_in_memory_scored_frame(tmp_path, n_rows, chunk_size) -> None:
    frame = jobs().head(n_rows)
    frame.write_parquet(tmp_path / "run.parquet")
    run = score_parquet(
        tmp_path / "run.parquet", tmp_path / "out", METRICS, chunk_size=chunk_size, progress=False
    )
    expected = in_memory(frame)
    assert_same_scored(parts(tmp_path / "out"), expected)
    assert run.n_pairs == expected.height // len(METRICS)
    assert_frame_equal(
        run.scored().collect().sort("pair_id", "metric"),
        parts(tmp_path / "out").sort("pair_id", "metric"),
    )


def test_a_chunk_never_splits_a_group(source, tmp_path) -> None:
    run = score_parquet(source, tmp_path / "out", chunk_size=40, progress=False)
    files = sorted((tmp_path / "out" / "scored").glob("part-*.parquet"))
    assert len(files) == run.n_chunks > 1
    groups = [set(pl.read_parquet(f)["group_id"]) for f in files]
    assert sum(len(g) for g in groups) == len(set().union(*groups))  # disjoint
    largest = pp.form_pairs(jobs()).group_by("group_id").len()["len"].max()
    assert all(pl.read_parquet(f).height <= 40 + largest - 1 for f in files)


def test_contrastive_multi_file_source_without_id_column(tmp_path) -> None:
    # No id column: ids are row positions across all files, as for the concatenated frame.
    frame = letters().drop("id")
    folder = tmp_path / "runs"
    folder.mkdir()
    frame.head(50).write_parquet(folder / "a.parquet")
    frame.slice(50).write_parquet(folder / "b.parquet")
    expected = in_memory(frame, "contrastive")
    for i, source in enumerate(
        [folder, str(folder / "*.parquet"), [folder / "a.parquet", folder / "b.parquet"]]
    ):
        destination = tmp_path / f"out{i}"
        score_parquet(
            source, destination, METRICS, strategy="contrastive", chunk_size=7, progress=False
        )
        assert_same_scored(parts(destination), expected)


def test_summary_is_aggregate_of_the_parts(source, tmp_path) -> None:
    run = score_parquet(source, tmp_path / "out", METRICS, chunk_size=100, progress=False)
    written = pl.read_parquet(tmp_path / "out" / "summary.parquet")
    assert_frame_equal(written, pp.aggregate(in_memory(jobs())))
    assert_frame_equal(run.summary, written)


def test_keep_text_writes_the_texts(source, tmp_path) -> None:
    score_parquet(source, tmp_path / "out", chunk_size=300, keep_text=True, progress=False)
    expected = pp.score(jobs(), cache=False, progress=False)
    assert_same_scored(parts(tmp_path / "out"), expected)


class StopAfter:
    """The offline judge, failing like a dead process after ``n`` judge calls (chunks)."""

    def __init__(self, n: int) -> None:
        self.inner, self.calls, self.n = HeuristicJudge(), 0, n
        self.name, self.identity = self.inner.name, self.inner.identity
        self.uses_messages, self.cacheable = False, False

    async def judge(self, requests):
        self.calls += 1
        if self.calls > self.n:
            raise pp.JudgeError("simulated crash")
        async for frame in self.inner.judge(requests):
            yield frame


def test_rerun_after_a_failure_resumes_with_the_finished_chunks(source, tmp_path) -> None:
    destination = tmp_path / "out"
    with pytest.raises(pp.JudgeError, match="simulated crash"):
        score_parquet(
            source, destination, METRICS, judge=StopAfter(3), chunk_size=200, progress=False
        )
    journal = json.loads((destination / "run.json").read_text())
    assert sorted(journal["chunks"]) == ["0", "1", "2"]
    assert journal["finished_at"] is None
    assert not (destination / "summary.parquet").exists()

    judge = StopAfter(100)
    run = score_parquet(source, destination, METRICS, judge=judge, chunk_size=200, progress=False)
    assert run.chunks_resumed == 3
    assert judge.calls == run.n_chunks - 3  # finished chunks were not scored again
    assert_same_scored(parts(destination), in_memory(jobs()))
    assert json.loads((destination / "run.json").read_text())["finished_at"] is not None


def test_a_part_the_journal_does_not_list_is_adopted_from_its_footer(source, tmp_path) -> None:
    destination = tmp_path / "out"
    score_parquet(source, destination, chunk_size=200, progress=False)
    journal_path = destination / "run.json"
    journal = json.loads(journal_path.read_text())
    del journal["chunks"]["4"]  # killed after writing part 4, before the journal said so
    journal["chunks"]["1"]["scored_rows"] += 1  # and a part that does not match its entry
    journal_path.write_text(json.dumps(journal))
    (destination / "scored" / ".part-000009.parquet.tmp-123").write_bytes(b"half a file")

    run = score_parquet(source, destination, chunk_size=200, progress=False)
    # Both parts are whole and their footers (run digest, chunk, rows) vouch for them: adopted,
    # not judged again; the half-written temporary file is cleared.
    assert run.chunks_resumed == run.n_chunks
    assert not list((destination / "scored").glob(".*"))
    assert_same_scored(parts(destination), in_memory(jobs()).filter(metric="pairwise-bias"))


def test_a_different_run_into_the_same_destination_is_refused(source, tmp_path) -> None:
    destination = tmp_path / "out"
    score_parquet(source, destination, "pairwise-bias", chunk_size=200, progress=False)
    with pytest.raises(pp.RunStateError, match="the metrics differ") as refused:
        score_parquet(
            source, destination, "pairwise-refusal-disparity", chunk_size=200, progress=False
        )
    assert "overwrite=True" in str(refused.value)
    with pytest.raises(pp.RunStateError, match="chunk_size differs"):
        score_parquet(source, destination, "pairwise-bias", chunk_size=50, progress=False)
    with pytest.raises(pp.RunStateError, match=r"the order \(random or fixed\) differs"):
        score_parquet(
            source, destination, "pairwise-bias", chunk_size=200, order="fixed", progress=False
        )

    jobs().head(600).write_parquet(source)  # the source is rewritten
    with pytest.raises(pp.RunStateError, match="the source files changed"):
        score_parquet(source, destination, "pairwise-bias", chunk_size=200, progress=False)

    run = score_parquet(
        source,
        destination,
        "pairwise-refusal-disparity",
        chunk_size=200,
        overwrite=True,
        progress=False,
    )
    assert run.chunks_resumed == 0
    expected = pp.score(
        jobs().head(600), "pairwise-refusal-disparity", cache=False, progress=False
    ).drop(TEXT)
    assert_same_scored(parts(destination), expected)


def test_unrelated_results_without_a_journal_are_refused(source, tmp_path) -> None:
    destination = tmp_path / "out"
    (destination / "scored").mkdir(parents=True)
    (destination / "notes.txt").write_text("mine")
    with pytest.raises(pp.RunStateError, match=r"no run\.json"):
        score_parquet(source, destination, progress=False)
    score_parquet(source, destination, overwrite=True, progress=False)
    assert (destination / "notes.txt").read_text() == "mine"  # only our files are replaced


def test_a_destination_in_use_is_refused(source, tmp_path) -> None:
    with (
        locked(run_store(tmp_path / "out")),
        pytest.raises(pp.RunStateError, match="Another process"),
    ):
        score_parquet(source, tmp_path / "out", progress=False)


def test_invalid_groups_stop_before_anything_is_written(tmp_path) -> None:
    frame = jobs().filter(
        ~((pl.col("group_id") == pl.col("group_id").min()) & (pl.col("role") == "reference"))
    )
    frame.write_parquet(tmp_path / "bad.parquet")
    with pytest.raises(pp.InvalidGroupsError):
        score_parquet(tmp_path / "bad.parquet", tmp_path / "out", progress=False)
    assert not (tmp_path / "out" / "run.json").exists()

    with pytest.warns(pp.PairwiseWarning):
        score_parquet(
            tmp_path / "bad.parquet",
            tmp_path / "out",
            on_invalid="skip",
            chunk_size=100,
            progress=False,
        )
    with pytest.warns(pp.PairwiseWarning):
        expected = in_memory(frame, on_invalid="skip").filter(metric="pairwise-bias")
    assert_same_scored(parts(tmp_path / "out"), expected)


def test_missing_columns_and_bad_sources_are_clear_errors(source, tmp_path) -> None:
    with pytest.raises(pp.ColumnError, match="response"):
        score_parquet(source, tmp_path / "out", output="response", progress=False)
    with pytest.raises(pp.DataSourceError, match="does not exist"):
        score_parquet(tmp_path / "nope.parquet", tmp_path / "out", progress=False)
    with pytest.raises(pp.DataSourceError, match=r"reads files \(parquet, CSV"):
        score_parquet(jobs(), tmp_path / "out", progress=False)
    with pytest.raises(ValueError, match="chunk_size"):
        score_parquet(source, tmp_path / "out", chunk_size=0, progress=False)
    assert not (tmp_path / "out").exists()


def test_an_empty_run_writes_an_empty_scored_frame(tmp_path) -> None:
    jobs().head(0).write_parquet(tmp_path / "empty.parquet")
    with pytest.warns(pp.EmptyDataWarning, match="has no rows"):
        run = score_parquet(tmp_path / "empty.parquet", tmp_path / "out", progress=False)
    assert run.n_pairs == 0
    assert parts(tmp_path / "out").height == 0
    assert run.summary.height == 0


def test_progress_reports_chunks_pairs_and_rates(source, tmp_path, capsys) -> None:
    score_parquet(source, tmp_path / "out", chunk_size=500, progress=True)
    line = capsys.readouterr().err.strip().splitlines()[-1]
    # identical requests are judged once: fewer answers than pairs
    # (960 counterfactual and 420 control pairs)
    assert re.fullmatch(
        r"chunk 3/3 \| pairs 1,380/1,380 \(100%\) \| judged 1,3[0-7][0-9], from cache 0 "
        r"\| errors 0 \| [0-9,.]+ req/s",
        line,
    ), line
    score_parquet(source, tmp_path / "out", chunk_size=500, progress=True)
    assert "resumed 1,380 pairs" in capsys.readouterr().err


def test_journal_records_the_run(source, tmp_path) -> None:
    score_parquet(source, tmp_path / "out", METRICS, chunk_size=500, progress=False)
    journal = json.loads((tmp_path / "out" / "run.json").read_text())
    fingerprint = journal["fingerprint"]
    assert fingerprint["source"] == [
        {"size": os.path.getsize(source), "mtime_ns": os.stat(source).st_mtime_ns}
    ]
    assert [m["name"] for m in fingerprint["metrics"]] == METRICS
    assert fingerprint["judge"]["identity"] == HeuristicJudge().identity
    assert fingerprint["pairs"]["n_pairs"] == 960 + 420  # counterfactual and control pairs
    assert fingerprint["pairing"]["control"] == "control"
    assert journal["n_chunks"] == 3
    assert journal["chunks"]["1"]["part"] == "scored/part-000001.parquet"
    assert sum(journal["chunks"][str(i)]["scored_rows"] for i in range(3)) == 1380 * 2


def test_scattered_groups_are_scored_right_with_a_warning(tmp_path) -> None:
    frame = jobs().sample(fraction=1.0, shuffle=True, seed=7)  # a group's rows far apart
    frame.write_parquet(tmp_path / "shuffled.parquet")
    with pytest.warns(pp.PairwiseWarning, match="scattered"):
        score_parquet(
            tmp_path / "shuffled.parquet", tmp_path / "out", METRICS, chunk_size=200, progress=False
        )
    assert_same_scored(parts(tmp_path / "out"), in_memory(frame))
