"""Where the CLI's words go: stdout for results, stderr for progress, warnings and errors.

``--quiet`` keeps only verdicts and errors; ``--json`` prints one JSON document on stdout at the
end (and nothing else there), for CI scripts.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any, TextIO

from pairwise_polars.report import markdown_table, readable_summary

__all__ = ["Console", "markdown_table", "readable_summary"]


class Console:
    def __init__(
        self,
        *,
        quiet: bool = False,
        json_mode: bool = False,
        out: TextIO | None = None,
        err: TextIO | None = None,
    ) -> None:
        self.quiet = quiet
        self.json_mode = json_mode
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.payload: dict[str, Any] = {}

    @property
    def progress(self) -> bool:
        """Progress lines (on stderr) only in the normal, human mode."""
        return not (self.quiet or self.json_mode)

    def info(self, text: str = "") -> None:
        """Details for a reader: plans, tables, file lists. Silent with --quiet or --json."""
        if not (self.quiet or self.json_mode):
            print(text, file=self.out)

    def record(self, key: str, figures: Any) -> None:
        """A plan or a usage (a dataclass): kept in the JSON document under ``key``, and
        printed for a reader."""
        self.payload[key] = dataclasses.asdict(figures)
        self.info(str(figures))

    def verdict(self, text: str) -> None:
        """The result line(s) a CI log needs: shown unless --json."""
        if not self.json_mode:
            print(text, file=self.out)

    def warn(self, text: str) -> None:
        print(f"Warning: {text}", file=self.err)

    def error(self, text: str, hint: str | None = None) -> None:
        print(f"Error: {text}", file=self.err)
        if hint:
            print(hint, file=self.err)

    def emit_json(self, exit_code: int) -> None:
        if self.json_mode:
            document = {**self.payload, "exit_code": exit_code}
            print(json.dumps(document, indent=2, default=str), file=self.out)
