"""Pairs matched across two runs: by ``pair_id`` when both runs pair the same rows, else by
what a pair compares (group, both attributes, metric, and the pair kind where present)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import polars as pl

from pairwise_polars._errors import ColumnError, OptionError
from pairwise_polars.pairing import PAIR_KIND
from pairwise_polars.summary import check_score_type

Match = Literal["auto", "pair_id", "attributes"]
"""How pairs are matched across runs (see :func:`matching`)."""
MATCHES = ("auto", "pair_id", "attributes")


@dataclass(frozen=True)
class Matched:
    """The key both runs are matched on, and each run's rows reduced to what a summary needs."""

    key: list[str]
    how: Literal["pair_id", "attributes"]
    before: pl.LazyFrame
    after: pl.LazyFrame


def _keys(how: str, columns: set[str], group_by: str) -> list[str]:
    if how == "pair_id":
        return ["pair_id", "metric"]
    key = [group_by, "attribute_a", "attribute_b", "metric"]
    return [*key, PAIR_KIND] if PAIR_KIND in columns else key


def matching(
    before: pl.LazyFrame,
    after: pl.LazyFrame,
    *,
    match: Match,
    group_by: str,
    needed: Sequence[str],
) -> Matched:
    """Choose the key and check it: ``"pair_id"``, ``"attributes"`` (``group_id``,
    ``attribute_a``, ``attribute_b``, ``metric``, and ``pair_kind`` when both runs have it), or
    ``"auto"``: ``pair_id`` when both runs have it and it matches at least one pair, else the
    attributes. A key that names two rows of one run is refused (the match would be a guess)."""
    if match not in MATCHES:
        raise OptionError(f"match must be one of {', '.join(MATCHES)}; got {match!r}.")
    schemas = {"before": before.collect_schema(), "after": after.collect_schema()}
    for run, schema in schemas.items():
        missing = [c for c in needed if c not in schema]
        if missing:
            raise ColumnError(
                f"compare needs columns {missing} in the {run} run, which has {schema.names()}. "
                "Pass scored frames (score, score_pairs, score_parquet), by=[...] with slice "
                "columns both runs have, and group_by=<the group column> if yours differs."
            )
        check_score_type(schema, f"The {run} run's")
    both = set(schemas["before"].names()) & set(schemas["after"].names())
    has_ids = "pair_id" in both
    has_attributes = {"attribute_a", "attribute_b"} <= both
    if match == "auto":
        if has_ids and _overlap(before, after, ["pair_id", "metric"]) > 0:
            match = "pair_id"
        else:
            match = "attributes" if has_attributes or not has_ids else "pair_id"
    usable = has_ids if match == "pair_id" else has_attributes
    if not usable:
        columns = "pair_id" if match == "pair_id" else "attribute_a and attribute_b"
        raise ColumnError(
            f"compare matches pairs by {columns}, which the runs lack (both have: "
            f"{sorted(both)}). Keep pair_id in the scored frames, or pair rows with an "
            "attribute column so each pair names what it compares."
        )
    how: Literal["pair_id", "attributes"] = "pair_id" if match == "pair_id" else "attributes"
    key = _keys(how, both, group_by)
    for run, frame in (("before", before), ("after", after)):
        _check_unique(frame, key, run)
    keep = list(dict.fromkeys([*key, *needed]))
    optional = [c for c in ("error", PAIR_KIND) if c in both and c not in keep]
    return Matched(key, how, before.select(*keep, *optional), after.select(*keep, *optional))


def _overlap(before: pl.LazyFrame, after: pl.LazyFrame, key: list[str]) -> int:
    joined = before.select(key).join(after.select(key), on=key, how="semi", nulls_equal=True)
    return int(joined.select(pl.len()).collect().item())


def _check_unique(frame: pl.LazyFrame, key: list[str], run: str) -> None:
    repeated = (
        frame.group_by(key).agg(pl.len().alias("__n")).filter(pl.col("__n") > 1).head(1).collect()
    )
    if repeated.is_empty():
        return
    example = {c: repeated[c][0] for c in key}
    raise ColumnError(
        f"The {run} run has {repeated['__n'][0]} rows for one pair ({example}), so pairs cannot "
        f"be matched by {', '.join(key)}. Compare runs scored once per pair and metric, or "
        "match='pair_id' when both runs pair the same rows."
    )
