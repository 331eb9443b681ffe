"""Why a pair will not be judged (``skip_reason``): from the pair's texts, or from flags worked
out once per row before the self-join (a reference is in several pairs; its texts are read once)."""

from __future__ import annotations

import polars as pl

SKIP_REASON = "skip_reason"
"""Column naming why a pair will not be judged (a null or empty output, a null input); null when
judgeable."""
MAX_PAIR_CHARS = 900_000
"""The most characters a pair's inputs and outputs may have together to be judged: a prompt
holds at most 1,000,000 (``metrics``' MAX_TEXT), the template's own text included. A larger
pair is kept unjudged with its reason (one error row), not an abort of the whole run."""

_NULL_OUTPUT, _EMPTY_OUTPUT, _NULL_INPUT = 1, 2, 4  # the bits of a row's flags
_TEXTS = ("input_a", "input_b", "output_a", "output_b")


def skip_reason() -> pl.Expr:
    """Why a pair cannot be judged, e.g. ``"null output_a"`` or ``"null input_b"``, or its texts
    too long for a prompt; null when both outputs have text and both inputs are there (a null
    input would reach the judge as the text "None")."""
    reasons = []
    for side in ("a", "b"):
        out = pl.col(f"output_{side}")
        reasons.append(pl.when(out.is_null()).then(pl.lit(f"null output_{side}")))
        # no non-whitespace character (Unicode White_Space, as strip_chars): no stripped copy
        blank = ~out.str.contains(r"\S")
        reasons.append(pl.when(blank).then(pl.lit(f"empty output_{side}")))
    for side in ("a", "b"):
        reasons.append(
            pl.when(pl.col(f"input_{side}").is_null()).then(pl.lit(f"null input_{side}"))
        )
    n_bytes = pl.sum_horizontal(pl.col(c).str.len_bytes().fill_null(0) for c in _TEXTS)
    reasons.append(_too_long(n_bytes))
    joined = pl.concat_str(reasons, separator="; ", ignore_nulls=True)
    return pl.when(joined != "").then(joined)


def row_flags(input: str, output: str, *, elementwise: bool) -> tuple[pl.Expr, pl.Expr]:
    """A row's part of its pairs' skip reasons: its flags (UInt8 bits: null output, empty
    output, null input) and the bytes of its input and output. ``elementwise=False`` runs the
    whitespace search only on outputs that do not start with a printable ASCII character
    (whole-column work; not for streaming)."""
    out = pl.col(output)
    blank = ~out.str.contains(r"\S") if elementwise else _blank(out)
    flags = (
        out.is_null().cast(pl.UInt8) * _NULL_OUTPUT
        + blank.fill_null(False).cast(pl.UInt8) * _EMPTY_OUTPUT
        + pl.col(input).is_null().cast(pl.UInt8) * _NULL_INPUT
    )
    n_in, n_out = (pl.col(c).str.len_bytes().fill_null(0).cast(pl.UInt64) for c in (input, output))
    return flags, n_in + n_out


def _blank(out: pl.Expr) -> pl.Expr:
    """``~out.str.contains(r"\\S")`` where it matters (null elsewhere), searched only in the
    outputs whose first byte is not printable ASCII: any other first byte is text already."""
    text = (out >= "!") & (out < "\x7f")  # strings compare by bytes: the first is 0x21-0x7E
    doubtful = (~text).fill_null(False)
    searched = out.filter(doubtful).str.contains(r"\S")
    position = pl.when(doubtful).then(doubtful.cast(pl.Int64).cum_sum() - 1)
    return pl.when(doubtful).then(~searched.gather(position))


def reason_from_flags(flags_a: pl.Expr, flags_b: pl.Expr, n_bytes: pl.Expr) -> pl.Expr:
    """:func:`skip_reason` from the two rows' :func:`row_flags` (the same text): the flags
    pick one of 64 reasons; only the pairs whose bytes exceed the limit count characters."""
    texts = [_flag_reason(code >> 3, code & 7) for code in range(64)]
    flagged = pl.lit(pl.Series(texts, dtype=pl.String)).gather(
        flags_a.cast(pl.UInt32) * 8 + flags_b
    )
    too_long = _too_long(n_bytes)
    joined = pl.concat_str([flagged, too_long], separator="; ", ignore_nulls=True)
    return pl.when(too_long.is_null()).then(flagged).otherwise(joined)


def _flag_reason(flags_a: int, flags_b: int) -> str | None:
    """The text of :func:`skip_reason` for two rows' flags, in its order."""
    reasons = []
    for side, flags in (("a", flags_a), ("b", flags_b)):
        if flags & _NULL_OUTPUT:
            reasons.append(f"null output_{side}")
        if flags & _EMPTY_OUTPUT:
            reasons.append(f"empty output_{side}")
    reasons += [f"null input_{s}" for s, f in (("a", flags_a), ("b", flags_b)) if f & _NULL_INPUT]
    return "; ".join(reasons) or None


def _too_long(n_bytes: pl.Expr) -> pl.Expr:
    # A character is at least a byte: count characters only where the bytes could be too many.
    big = n_bytes > MAX_PAIR_CHARS
    size = pl.sum_horizontal(
        pl.when(big).then(pl.col(c)).str.len_chars().fill_null(0) for c in _TEXTS
    )
    return pl.when(size > MAX_PAIR_CHARS).then(
        pl.format(
            "texts too long to judge ({} characters; at most {} fit a prompt)",
            size,
            pl.lit(MAX_PAIR_CHARS),
        )
    )
