"""Input that polars would read by guessing (issue 30, items 20, 21 and 23): malformed CSV named
with its line, parquet under a .csv name, repeated and ragged headers, categorical text columns,
NaN group ids, a mixed pandas column. Real files on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from conftest import jobs

import pairwise_polars as pp
from pairwise_polars.cli import EXIT_INVALID, main
from pairwise_polars.io import scan_data

HEADER = b"group_id,role,dimension,input,output\n"
REF = b"g1,reference,gender,Hi,Hello there\n"
CASES = {
    "unbalanced quote": (HEADER + REF + b'g1,variant,gender,Hi,"Hello\n',
                         "the record starting on line 3: unexpected end of data (an unbalanced"),
    "latin-1 bytes": (HEADER + REF + b"g1,variant,gender,Hi,Caf\xe9\n",
                      "line 3 is not UTF-8 text (byte b'\\xe9')"),
    "unquoted comma": (HEADER + REF + b"g1,variant,gender,Hi,Yes, we can\n",
                       "the record ending on line 3 has 6 fields, the header 5"),
    "ragged row": (HEADER + REF + b"g1,variant,gender\n",
                   "the record ending on line 3 has 3 fields, the header 5"),
    "repeated header": (b"group_id,role,dimension,input,output,output\n",
                        "the header names ['output'] more than once (line 1)"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_malformed_csv_is_a_named_error_with_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    content, message = CASES[case]
    path = tmp_path / "rows.csv"
    path.write_bytes(content)
    with pytest.raises(pp.DataSourceError) as info:
        pp.form_pairs(str(path))
    assert str(info.value).startswith(f"Cannot read {str(path)!r} as CSV: {message}")
    out = tmp_path / "out.parquet"
    assert main(["score", str(path), "-o", str(out), "-q"]) == EXIT_INVALID
    assert message in capsys.readouterr().err and not out.exists()


def test_parquet_named_csv_is_named(tmp_path: Path) -> None:
    path = tmp_path / "rows.csv"
    jobs(2).write_parquet(path)
    with pytest.raises(pp.DataSourceError, match=r"it holds parquet data\. Name it \.parquet"):
        pp.form_pairs(str(path))


def test_a_well_formed_csv_with_quotes_and_long_fields_still_reads(tmp_path: Path) -> None:
    frame = jobs(2).with_columns(pl.col("output") + ', "quoted", ' + "x" * 200_000)
    path = tmp_path / "rows.csv"
    frame.write_csv(path)
    assert pp.form_pairs(str(path)).collect().height == pp.form_pairs(frame).height


def _categorical(frame: pl.DataFrame, kind: str, tmp_path: Path) -> object:
    coded = frame.with_columns(pl.col("output", "role", "dimension").cast(pl.Categorical))
    if kind == "parquet":
        coded.write_parquet(tmp_path / "coded.parquet")
        return str(tmp_path / "coded.parquet")
    if kind == "arrow":
        table = frame.to_arrow()
        index = table.schema.get_field_index("output")
        return table.set_column(index, "output", table["output"].dictionary_encode())
    if kind == "pandas":
        data = frame.to_pandas()
        data["output"] = data["output"].astype("category")
        return data
    return coded


@pytest.mark.parametrize("kind", ["polars", "parquet", "arrow", "pandas"])
def test_categorical_text_columns_are_read_as_text(tmp_path: Path, kind: str) -> None:
    frame = jobs(3)
    scored = pp.score(_categorical(frame, kind, tmp_path), cache=False, progress=False)
    expected = pp.score(frame, cache=False, progress=False)
    assert scored["output_a"].dtype == pl.String
    assert (
        scored.sort("pair_id")
        .select("pair_id", "score")
        .equals(expected.sort("pair_id").select("pair_id", "score"))
    )


def test_nan_group_ids_are_reported_not_paired_together() -> None:
    frame = pl.DataFrame({
        "group_id": [1.0, 1.0, float("nan"), float("nan"), float("nan")],
        "role": ["reference", "variant", "reference", "variant", "variant"],
        "input": ["a"] * 5, "output": ["x", "y", "p", "q", "r"],
    })  # fmt: skip
    with pytest.raises(pp.InvalidGroupsError, match="null_group"):
        pp.form_pairs(frame)
    with pytest.warns(pp.PairwiseWarning, match="null_group: 1 group"):
        pairs = pp.form_pairs(frame, on_invalid="skip")
    assert pairs.height == 1


def test_a_mixed_pandas_column_is_named() -> None:
    data = jobs(2).to_pandas()
    data["score_hint"] = [1, "one"] * (len(data) // 2) + [1] * (len(data) % 2)
    with pytest.raises(pp.DataSourceError, match="pandas column 'score_hint': it mixes values"):
        pp.form_pairs(data)
    assert isinstance(pa.__version__, str) and isinstance(pd.__version__, str)


@pytest.mark.parametrize(
    ("record", "key"),
    [
        pytest.param('{"group_id":"g1","role":"variant","output":"b","output":"c"}', "output",
                     id="a repeated key"),
        pytest.param('{"group_id":"g1","role":"variant","output":"b", "output" : "c"}', "output",
                     id="spaced"),
        pytest.param('{"group_id":"g1","output":"b","output":"c"}', "output",
                     id="one key missing, another repeated"),
        pytest.param('{"group_id":"g1","role":"variant","\\u0072ole":"x"}', "role",
                     id="a key written with an escape"),
        pytest.param('{"group_id":"g1","role":"variant","meta":{"k":1,"k":2}}', "k",
                     id="in a nested object"),
    ],
)  # fmt: skip
def test_an_ndjson_record_with_a_repeated_key_is_named_with_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], record: str, key: str
) -> None:
    first = '{"group_id":"g1","role":"reference","output":"a"}'
    path = tmp_path / "rows.ndjson"
    path.write_text(f"{first}\n\n{record}\n{first}\n", encoding="utf-8")
    message = (
        f"Cannot read {str(path)!r} as NDJSON (JSON Lines): the record on line 3 gives the key "
        f"{key!r} more than once, and only one of its values would be read. Give every key of a "
        "record once (rename or drop the extra one)."
    )
    with pytest.raises(pp.DataSourceError) as info:
        pp.form_pairs(str(path))
    assert str(info.value) == message
    out = tmp_path / "out.parquet"
    assert main(["pairs", str(path), "-o", str(out), "-q"]) == EXIT_INVALID
    assert message in capsys.readouterr().err and not out.exists()


def test_ndjson_keys_that_only_look_repeated_still_read(tmp_path: Path) -> None:
    rows = [  # a key's name inside a text, the same name in a nested object and in a list
        {"group_id": "g1", "role": "reference", "output": 'he said "output": yes, "role": no'},
        {"group_id": "g1", "role": "variant", "output": "x", "meta": {"output": 1, "role": 2}},
        {"group_id": "g1", "role": "variant", "output": "y", "items": [{"k": 1}, {"k": 2}]},
    ]
    path = tmp_path / "rows.ndjson"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    frame = scan_data(str(path)).collect()
    assert frame["output"].to_list() == [r["output"] for r in rows]
    assert frame["role"].to_list() == ["reference", "variant", "variant"]


@pytest.mark.parametrize(
    ("text", "key", "where"),
    [
        pytest.param('[{"group_id":"g1","role":"reference","output":"a"},\n'
                     ' {"group_id":"g1","role":"variant","output":"b","output":"c"}]',
                     "output", "record 2 of the array (from line 2)", id="one line a record"),
        pytest.param('[\n  {\n    "group_id": "g1",\n    "role": "reference",\n    "output": "a"\n'
                     '  },\n  {\n    "group_id": "g1",\n    "role": "variant",\n'
                     '    "meta": {"k": 1, "k": 2},\n    "output": "b"\n  }\n]\n',
                     "k", "record 2 of the array (from line 7)", id="indented, nested"),
    ],
)  # fmt: skip
def test_a_json_array_record_with_a_repeated_key_is_named(
    tmp_path: Path, text: str, key: str, where: str
) -> None:
    path = tmp_path / "rows.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(pp.DataSourceError) as info:
        pp.form_pairs(str(path))
    assert str(info.value) == (
        f"Cannot read {str(path)!r} as JSON: {where} gives the key {key!r} more than once, and "
        "only one of its values would be read. Give every key of a record once (rename or drop "
        "the extra one)."
    )


def test_a_json_array_without_repeated_keys_reads_as_before(tmp_path: Path) -> None:
    rows = [  # a key's name inside a text, the same name in a nested object and in a list
        {"group_id": "g1", "role": "reference", "output": 'he said "output": yes'},
        {"group_id": "g1", "role": "variant", "output": "x", "meta": {"output": 1}},
        {"group_id": "g1", "role": "variant", "output": "y", "items": [{"k": 1}, {"k": 2}]},
    ]
    path = tmp_path / "rows.json"
    rows = [{**r, "dimension": "gender", "input": "q"} for r in rows]
    path.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    frame = scan_data(str(path)).collect()
    assert frame["output"].to_list() == [r["output"] for r in rows]
    assert pp.form_pairs(str(path)).collect().height == 2
