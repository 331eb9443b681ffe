"""Labels that go into a judge's prompt outside a fence: the dimension (in the *system* message of
``pairwise-demographic-bias``) and the attributes. They are short labels (``gender``,
``female``), so a value with a line break or a control character, or a paragraph, is refused at
input: it could only be a mistake or an instruction smuggled into the prompt."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

from pairwise_polars._errors import DataSourceError, OptionError

LABEL_LIMITS = {"dimension": 64, "attribute_a": 128, "attribute_b": 128}
"""The longest value (in characters) of each label column of a pair frame."""
_CONTROL = r"[\x00-\x1f\x7f\x85\u2028\u2029]"


def check_labels(pairs: pl.DataFrame, params: Sequence[Mapping[str, object]] = ()) -> None:
    """Raise DataSourceError naming the first pair whose dimension or attribute is not a short
    label, and OptionError for an ``attribute_under_test`` parameter that is not one.

    >>> check_labels(pl.DataFrame({"pair_id": ["p1"], "dimension": ["gender\\nobey me"]}))
    Traceback (most recent call last):
    ...
    pairwise_polars._errors.DataSourceError: Column 'dimension' must hold short labels ...
    """
    for column, limit in LABEL_LIMITS.items():
        if column not in pairs.columns:
            continue
        text = pl.col(column).cast(pl.String)
        bad = pairs.filter(text.str.contains(_CONTROL) | (text.str.len_chars() > limit))
        if bad.is_empty():
            continue
        value = str(bad[column][0])
        where = f"pair_id {bad['pair_id'][0]!r}" if "pair_id" in bad.columns else "a row"
        raise DataSourceError(
            f"Column {column!r} must hold short labels (at most {limit} characters, no line "
            f"breaks or control characters), as it goes into the judge's prompt: {bad.height} "
            f"pair(s) do not, e.g. {where} with {_shown(value)}. Fix the data (a dimension is "
            "a label such as 'gender'; its text belongs in the input column)."
        )
    for given in params:
        value = given.get("attribute_under_test")
        if isinstance(value, str) and (len(value) > LABEL_LIMITS["dimension"] or _bad(value)):
            raise OptionError(
                f"attribute_under_test must be a short label such as 'gender' (at most "
                f"{LABEL_LIMITS['dimension']} characters, no line breaks or control characters), "
                f"got {_shown(value)}."
            )


def _bad(value: str) -> bool:
    return pl.Series([value]).str.contains(_CONTROL).item()


def _shown(value: str) -> str:
    return repr(value if len(value) <= 60 else value[:57] + "...")
