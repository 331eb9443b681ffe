"""Input files: parquet, CSV, TSV, NDJSON and JSON read wherever data is read, and files that
cannot be read (a truncated file, the wrong format, schemas that disagree) named with the fix."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from conftest import assert_same_rows, collect, jobs
from hypothesis import given, settings
from hypothesis import strategies as st

import pairwise_polars as pp
from pairwise_polars.io import input_files, scan_data

FORMATS = ("parquet", "csv", "tsv", "ndjson", "jsonl", "json")


def write(frame: pl.DataFrame, path: Path) -> Path:
    """The frame as a file of the format its name ends with."""
    suffix = path.suffix
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".parquet":
        frame.write_parquet(path)
    elif suffix == ".csv":
        frame.write_csv(path)
    elif suffix == ".tsv":
        frame.write_csv(path, separator="\t")
    elif suffix in (".ndjson", ".jsonl"):
        frame.write_ndjson(path)
    else:
        frame.write_json(path)
    return path


def rows(groups: int = 3) -> pl.DataFrame:
    """Response rows with an integer id, a text id-like group and a comma in an answer."""
    return jobs(groups).select(
        "id", "group_id", "role", "dimension", "attribute", "input", "output"
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_pairs_and_scores_like_the_frame(fmt: str, tmp_path: Path) -> None:
    data = rows()
    path = write(data, tmp_path / f"rows.{fmt}")
    expected = pp.score(data, "pairwise-bias", cache=False, progress=False)
    got = pp.score(path, "pairwise-bias", cache=False, progress=False)
    key = ["pair_id", "metric"]
    assert_same_rows(
        got.select(*key, "score", "reason"), expected.select(*key, "score", "reason"), key
    )
    assert isinstance(pp.form_pairs(str(path)), pl.LazyFrame)  # files stay lazy
    assert collect(pp.check_groups(path)).is_empty()


def test_a_folder_or_glob_of_csv_files_is_one_input(tmp_path: Path) -> None:
    data = rows(4)
    first = data["group_id"].unique(maintain_order=True).head(2)
    write(data.filter(pl.col("group_id").is_in(first.implode())), tmp_path / "runs" / "a.csv")
    write(data.filter(~pl.col("group_id").is_in(first.implode())), tmp_path / "runs" / "b.csv")
    (tmp_path / "runs" / "notes.txt").write_text("not data")  # not a data file: left out
    expected = pp.form_pairs(data)
    assert_same_rows(pp.form_pairs(tmp_path / "runs").collect(), expected, "pair_id")
    assert_same_rows(pp.form_pairs(str(tmp_path / "runs" / "*.csv")).collect(), expected, "pair_id")


def test_csv_files_whose_types_differ_are_widened(tmp_path: Path) -> None:
    data = rows(2)
    numbers = data.filter(pl.col("group_id") == data["group_id"][0])
    words = data.filter(pl.col("group_id") != data["group_id"][0]).with_columns(
        id=pl.lit("r-") + pl.col("id").cast(pl.String)
    )
    write(numbers, tmp_path / "a.csv")
    write(words, tmp_path / "b.csv")
    frame = scan_data([tmp_path / "a.csv", tmp_path / "b.csv"]).collect()
    assert frame.schema["id"] == pl.String and frame.height == data.height


def test_a_parquet_file_that_is_not_parquet_is_named(tmp_path: Path) -> None:
    path = write(rows(), tmp_path / "rows.csv").rename(tmp_path / "rows.parquet")
    message = (
        f"Cannot read {str(path)!r} as parquet: it holds CSV text, not parquet data. Name it "
        ".csv to read it as such."
    )
    for call in (pp.form_pairs, pp.check_groups, lambda p: pp.score(p, progress=False)):
        with pytest.raises(pp.DataSourceError) as info:
            call(path)
        assert str(info.value) == message


def test_unknown_names_empty_files_and_broken_text_are_named(tmp_path: Path) -> None:
    (tmp_path / "rows.txt").write_text("group_id,role\n")
    with pytest.raises(pp.DataSourceError, match=r"Cannot tell the format of .*rows\.txt"):
        pp.form_pairs(tmp_path / "rows.txt")
    write(rows(), tmp_path / "no-suffix.parquet").rename(tmp_path / "no-suffix")
    assert pp.form_pairs(tmp_path / "no-suffix").collect().height > 0  # parquet by its bytes
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(pp.DataSourceError, match=r"empty\.csv' as CSV: the file is empty\.$"):
        pp.form_pairs(tmp_path / "empty.csv")
    (tmp_path / "broken.ndjson").write_text('{"group_id": 1}\n{"group_id": \n')
    with pytest.raises(pp.DataSourceError, match=r"broken\.ndjson' as NDJSON \(JSON Lines\)"):
        pp.form_pairs(tmp_path / "broken.ndjson")


def test_formats_do_not_mix(tmp_path: Path) -> None:
    write(rows(), tmp_path / "a.parquet")
    write(rows(), tmp_path / "b.csv")
    with pytest.raises(pp.DataSourceError) as info:
        pp.form_pairs(tmp_path)
    assert str(info.value).startswith(
        f"The input mixes file formats: 1 parquet (e.g. {str(tmp_path / 'a.parquet')!r}), 1 csv"
    )


def test_parquet_files_must_share_one_schema_and_the_odd_file_is_named(tmp_path: Path) -> None:
    data = rows(3)
    groups = data["group_id"].unique(maintain_order=True).to_list()
    parts = [data.filter(pl.col("group_id") == g) for g in groups]
    folder = tmp_path / "runs"
    folder.mkdir()
    write(parts[0], folder / "part-0.parquet")
    write(parts[1].with_columns(pl.col("id").cast(pl.String)), folder / "part-1.parquet")
    with pytest.raises(pp.DataSourceError) as info:
        pp.form_pairs(folder)
    assert str(info.value) == (
        f"{str(folder / 'part-1.parquet')!r} does not share the schema of "
        f"{str(folder / 'part-0.parquet')!r} (the first file): column 'id' is String here and "
        "Int64 in the first file. Write every file with one schema (e.g. cast the column to one "
        "type), or leave this file out."
    )
    write(parts[1].drop("attribute").with_columns(model=pl.lit("m")), folder / "part-1.parquet")
    with pytest.raises(pp.DataSourceError, match="it lacks columns \\['attribute'\\]; it has "
                       "columns \\['model'\\] that the first file lacks"):  # fmt: skip
        pp.form_pairs(folder)


def test_one_truncated_parquet_file_among_good_ones_is_named(tmp_path: Path) -> None:
    data = rows(3)
    groups = data["group_id"].unique(maintain_order=True).to_list()
    for i, g in enumerate(groups):
        write(data.filter(pl.col("group_id") == g), tmp_path / f"part-{i}.parquet")
    broken = tmp_path / "part-1.parquet"
    broken.write_bytes(broken.read_bytes()[: broken.stat().st_size // 2])
    for call in (pp.form_pairs, lambda p: pp.score_parquet(p, tmp_path / "out", progress=False)):
        with pytest.raises(pp.DataSourceError) as info:
            call(tmp_path)
        assert str(info.value).startswith(f"Cannot read {str(broken)!r} as parquet: ")
        assert "write it again, or leave it out" in str(info.value)


def test_a_chunked_run_reads_csv_too(tmp_path: Path) -> None:
    data = rows(6)
    path = write(data, tmp_path / "rows.csv")
    run = pp.score_parquet(path, tmp_path / "out", chunk_size=4, progress=False)
    expected = pp.score(data, progress=False, cache=False)
    assert run.n_chunks > 1
    assert_same_rows(
        run.scored().select("pair_id", "score").collect(), expected.select("pair_id", "score"),
        "pair_id",
    )  # fmt: skip
    assert json.loads((tmp_path / "out" / "run.json").read_text())["source_paths"] == [
        str(path.resolve())
    ]


def test_input_files_expand_in_order(tmp_path: Path) -> None:
    for name in ("b.ndjson", "a.jsonl", "_hidden.ndjson", ".tmp.ndjson"):
        write(rows(1), tmp_path / name)
    source = input_files(tmp_path)
    assert (source.format, [Path(f).name for f in source.files]) == (
        "ndjson",
        ["a.jsonl", "b.ndjson"],
    )


@settings(max_examples=25, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=1, max_value=3), min_size=1, max_size=5),
    fmt=st.sampled_from(FORMATS),
    text=st.text(
        alphabet=st.characters(blacklist_categories=["Cs", "Cc"]), min_size=1, max_size=12
    ),
)
def test_pair_ids_do_not_depend_on_the_file_format(sizes: list[int], fmt: str, text: str) -> None:
    import tempfile

    data = pl.DataFrame(
        [
            {"group_id": f"g{g}", "role": "reference" if v == 0 else "variant",
             "dimension": "gender", "input": f"q{g}", "output": f"{text} {g}.{v}"}
            for g, n in enumerate(sizes) for v in range(n + 1)
        ]
    )  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        path = write(data, Path(folder) / f"rows.{fmt}")
        got = pp.form_pairs(path).collect()
    expected = pp.form_pairs(data)
    assert sorted(got["pair_id"]) == sorted(expected["pair_id"])
    assert sorted(got["output_b"].to_list()) == sorted(expected["output_b"].to_list())


def test_pair_ids_in_a_csv_read_back_as_the_scored_frame_has_them(tmp_path: Path) -> None:
    """A pair id is an unsigned 64-bit hash, past the signed range older polars infers: a CSV
    holding them (a labelling sheet, scored pairs) reads back as UInt64 at every polars version;
    a pair_id column of other text stays text."""
    ids = pl.Series("pair_id", [12906433255463780645, 5, 2**64 - 1], dtype=pl.UInt64)
    frame = pl.DataFrame([ids, pl.Series("label", ["1", "", "3"])])
    for suffix in (".csv", ".tsv"):
        back = scan_data(write(frame, tmp_path / f"ids{suffix}")).collect()
        assert back.schema["pair_id"] == pl.UInt64
        assert back["pair_id"].equals(ids)
    text = frame.with_columns(pl.Series("pair_id", ["a1", "5", "7"]))
    back = scan_data(write(text, tmp_path / "text.csv")).collect()
    assert back["pair_id"].to_list() == ["a1", "5", "7"]
