"""Input and output paths of a command: the inputs as the readers take them; the outputs checked
before any work (each frame's format from its suffix, and no output in the place of an input or
of another output), and the ``-o`` that is either a frame or the table shown."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import polars as pl

from pairwise_polars.cli._console import Console
from pairwise_polars.io import output_format, refuse_overwriting_inputs, write_frame, write_text

FRAME_FORMATS = ".parquet, .csv, .tsv, .ndjson/.jsonl or .json"
"""What a frame output may be named (for help texts)."""


def check_outputs(
    inputs: Sequence[str],
    frames: Mapping[str, str | None],
    others: Mapping[str, str | None] | None = None,
) -> None:
    """Refuse (``OptionError``: exit 2) a frame output (``{what: path}``, e.g. ``{"the pair
    frame (-o)": args.out}``) whose suffix names no format, and any output, frame or not
    (``others``), that is an input file or another output."""
    for what, path in frames.items():
        if path is not None:
            output_format(path, what=what)
    refuse_overwriting_inputs({**frames, **(others or {})}, list(inputs))


def one_or_many(paths: Sequence[str]) -> str | list[str]:
    """The input arguments as the readers take them: one path (a file, folder or glob) as
    itself, several as a list."""
    return paths[0] if len(paths) == 1 else list(paths)


def is_table(out: str | None) -> bool:
    """Whether ``-o`` names a Markdown file: the table shown, not the frame."""
    return out is not None and Path(out).suffix.lower() == ".md"


def check_frame_or_table(inputs: Sequence[str], out: str | None, what: str) -> None:
    """:func:`check_outputs` for an ``-o`` that writes ``what`` (e.g. "the summary") as a frame,
    or as the table shown when it ends in .md."""
    if is_table(out):
        check_outputs(inputs, {}, {f"{what} (-o)": out})
    else:
        check_outputs(inputs, {f"{what} (-o; .md for the table shown)": out})


def show_and_write(
    console: Console, frame: pl.DataFrame, table: str, out: str | None, what: str
) -> None:
    """Print ``table`` (the Markdown of ``frame`` shown), and with ``-o`` write it (.md) or the
    whole ``frame`` (any other suffix)."""
    console.info(table)
    if out:
        path = Path(out)
        if is_table(out):
            write_text(path, table + "\n", what=f"{what} (-o)")
        else:
            write_frame(frame, path, what=f"{what} (-o)")
        console.info(f"wrote {path}")
