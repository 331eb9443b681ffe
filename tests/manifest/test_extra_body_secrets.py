"""A key written in a judge's ``extra_body`` (``api_key: sk-...``) is a secret in the manifest, as
``api_key:`` and an ``Authorization`` header there are: a validation problem, exit 2, the value
never shown. Body fields that only look alike (``max_tokens``) stay allowed."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import DATA

from pairwise_polars.cli import EXIT_INVALID, main
from pairwise_polars.manifest import validate_manifest

SECRET = "sk-proj-WRITTEN-IN-MANIFEST-4711"


def _manifest(tmp_path: Path, body: dict[str, object]) -> Path:
    """A one-target manifest whose judge sends ``body`` as extra_body."""
    (tmp_path / "letters.parquet").write_bytes((DATA / "letters_contrastive.parquet").read_bytes())
    judge = {"model": "j", "base_url": "http://127.0.0.1:9/v1", "extra_body": body}
    block = {"data": "letters.parquet", "strategy": "contrastive", "judge": judge}
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump({"targets": {"demo": {"pairwise": block}}}), encoding="utf-8")
    return path


@pytest.mark.parametrize("field", ["api_key", "api-key", "Authorization", "access_token",
                                   "password", "client_secret"])  # fmt: skip
def test_a_key_in_extra_body_is_refused_and_never_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str
) -> None:
    path = _manifest(tmp_path, {field: SECRET})
    found = [str(p) for p in validate_manifest(path)]
    assert len(found) == 1 and f"extra_body.{field}" in found[0], found
    assert "must never be written in the manifest" in found[0] and SECRET not in found[0]
    assert main(["validate", str(path)]) == EXIT_INVALID
    captured = capsys.readouterr()
    assert SECRET not in captured.err + captured.out


def test_body_fields_that_only_look_alike_are_allowed(tmp_path: Path) -> None:
    body = {"max_tokens": 50, "max_completion_tokens": 60, "reasoning_effort": "low", "top_k": 3}
    assert validate_manifest(_manifest(tmp_path, body)) == []
