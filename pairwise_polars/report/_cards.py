"""The most divergent pairs, as cards: both requests and responses side by side (long texts
behind "read all"), roles, attributes, and the judge's reason in each order asked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from pairwise_polars.report._records import num

_PREVIEW = 600
"""Characters of a long text shown before "read all"."""
_LONG = 900
_PAIR_COLUMNS = (
    "pair_id", "dimension", "role_a", "role_b", "attribute_a", "attribute_b", "input_a",
    "input_b", "output_a", "output_b", "score", "raw_score", "reason", "reason_ba",
    "position_gap", "score_ab", "score_ba",
)  # fmt: skip


@dataclass(frozen=True)
class Text:
    """A request or response: shown whole when short; a preview and "read all" when long."""

    full: str | None
    preview: str
    long: bool
    n_chars: int


@dataclass(frozen=True)
class Side:
    name: str
    who: str
    request: Text | None
    response: Text


@dataclass(frozen=True)
class PairCard:
    head: tuple[str, ...]
    score: str
    pair_id: str
    shared_request: Text | None
    sides: tuple[Side, ...]
    reasons: tuple[tuple[str, str], ...]


def text(value: Any) -> Text:
    if value is None:
        return Text(None, "", False, 0)
    full = str(value)
    if len(full) <= _LONG:
        return Text(full, full, False, len(full))
    cut = full.rfind(" ", 0, _PREVIEW)
    return Text(full, full[: cut if cut > _PREVIEW // 2 else _PREVIEW].rstrip(), True, len(full))


def top_pairs(
    scores: pl.LazyFrame, schema: pl.Schema, group_by: str, top: int
) -> tuple[PairCard, ...]:
    wanted = [c for c in (group_by, *_PAIR_COLUMNS) if c in schema]
    if top <= 0 or "output_a" not in schema:
        return ()
    by_id = "pair_id" in schema
    rows = (
        scores.filter(pl.col("score") > 0)
        .select(wanted)
        .sort(
            ["score", "pair_id"] if by_id else "score",
            descending=[True, False] if by_id else True,
            nulls_last=True,
        )
        .head(top)
        .collect()
    )
    cards = []
    for r in rows.iter_rows(named=True):
        head = []
        if r.get("raw_score") is not None:
            head.append(f"raw {r['raw_score']:g}")
        if r.get("score_ab") is not None or r.get("score_ba") is not None:
            ab, ba = num(r.get("score_ab")), num(r.get("score_ba"))
            head.append(f"orders (a, b) {ab} / (b, a) {ba}")
        if group_by in r:
            head.append(f"{group_by} {r[group_by]}")
        if r.get("dimension") is not None:
            head.append(f"dimension {r['dimension']}")
        same = r.get("input_a") == r.get("input_b")
        sides = tuple(
            Side(
                name=side.upper(),
                who=" · ".join(
                    str(r[c]) for c in (f"role_{side}", f"attribute_{side}") if r.get(c) is not None
                ),
                request=None if same else text(r.get(f"input_{side}")),
                response=text(r.get(f"output_{side}")),
            )
            for side in ("a", "b")
        )
        reasons: tuple[tuple[str, str], ...]
        if "reason_ba" in r:
            reasons = (
                ("Judge, order (a, b)", str(r.get("reason") or "—")),
                ("Judge, order (b, a)", str(r.get("reason_ba") or "—")),
            )
        else:
            reasons = (("Judge", str(r.get("reason") or "—")),)
        cards.append(
            PairCard(
                head=tuple(head),
                score=num(r["score"]),
                pair_id="" if r.get("pair_id") is None else str(r["pair_id"]),
                shared_request=text(r.get("input_a")) if same and "input_a" in r else None,
                sides=sides,
                reasons=reasons,
            )
        )
    return tuple(cards)
