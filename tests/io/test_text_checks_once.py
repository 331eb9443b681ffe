"""A text source's record checks read the whole file: a chunked run scans its source again for
every chunk (a Ray worker for every slice), so each version of a file is checked once per
process, and a changed file is checked again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pairwise_polars._errors import DataSourceError
from pairwise_polars.io import _readers, scan_data

ROWS = [{"group_id": "g", "role": "reference", "output": "yes"}] * 3


def _write(path: Path, records: list[str]) -> None:
    path.write_text("\n".join(records) + "\n", encoding="utf-8")


@pytest.mark.parametrize("kind", ["ndjson", "csv"])
def test_each_version_of_a_file_is_checked_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    calls: list[str] = []
    name = "check_json_lines" if kind == "ndjson" else "check_delimited"
    real = getattr(_readers, name)

    def counted(path: str, *args: object) -> object:
        calls.append(path)
        return real(path, *args)

    monkeypatch.setattr(_readers, name, counted)
    path = tmp_path / f"rows.{kind}"
    if kind == "ndjson":
        _write(path, [json.dumps(row) for row in ROWS])
    else:
        _write(path, ["group_id,role,output", *["g,reference,yes"] * 3])
    for _ in range(3):
        assert scan_data(str(path)).collect().height == 3
    assert len(calls) == 1
    if kind == "ndjson":  # a new version (another size) is checked again, and refused
        _write(path, ['{"group_id": "g", "output": "a", "output": "b"}'])
        with pytest.raises(DataSourceError, match="line 1 gives the key 'output'"):
            scan_data(str(path))
        assert len(calls) == 2
