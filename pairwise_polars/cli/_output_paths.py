"""Output paths of a command, checked before any work: each frame's format from its suffix, and
no output in the place of an input (or of another output)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pairwise_polars.io import output_format, refuse_overwriting_inputs

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
