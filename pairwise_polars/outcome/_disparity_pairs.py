"""From what ``disparities`` accepts to one row per pair with signed, within-pair differences.

Accepted: response rows with outcome columns, response rows without them (read with a judge),
or a scored frame (pairs; outcomes per side as ``<outcome>_a`` / ``_b``, or read from the pair's
texts; the sign of ``pairwise-favour`` when it was scored). Side ``a`` is the reference (or
``pole_a``, or the row whose attribute is ``reference``), side ``b`` the attribute compared.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from pairwise_polars._errors import ColumnError
from pairwise_polars.io import DataLike
from pairwise_polars.judges import Judge
from pairwise_polars.labels import OUTCOME_LABELS, PAIR_KEYS, check_outcome_labels
from pairwise_polars.outcome._heuristic import OUTCOME_COLUMNS, heuristic_outcomes
from pairwise_polars.outcome._outcomes import outcomes
from pairwise_polars.pairing import PAIR_KIND, Columns, Strategy, form_pairs
from pairwise_polars.summary._disparity_sums import P

FAVOUR_METRIC = "pairwise-favour"
MEASURES = ("decision", "amount", "refusal", "favour")
"""The signed figures, each a within-pair difference of side b against side a."""
DEFAULT_BY = ("dimension", "attribute")


def pair_measures(
    data: pl.LazyFrame,
    by: Sequence[str],
    *,
    reference: str | None,
    judge: Judge | None,
    strategy: Strategy,
    columns: Columns,
    labels: DataLike | None = None,
) -> tuple[pl.LazyFrame, list[str]]:
    """``(pairs, keys)``: one row per pair with the slice ``keys`` (``by`` resolved on the pair
    frame), ``pair_kind``, the group column, ``reference`` and the helper measures (with
    ``labels``, each measure as people read it too: ``P + "label_<measure>"``)."""
    schema = data.collect_schema()
    if "pair_id" in schema and "metric" in schema:
        pairs = _from_scored(data, judge, columns)
    else:
        pairs = _from_rows(data, reference=reference, judge=judge, strategy=strategy, cols=columns)
    if labels is not None:
        pairs = _with_labels(pairs, labels)
    return _measures(pairs, by, columns)


def _with_labels(pairs: pl.LazyFrame, labels: DataLike) -> pl.LazyFrame:
    """``pairs`` with each outcome measure as people read it (``P + "label_<measure>"``, side b
    against side a as for the judge's; null where the pair has no such label)."""
    checked = check_outcome_labels(pairs, labels)
    keys = [c for c in checked.columns if c in ("pair_id", *PAIR_KEYS)]
    helper = {k: f"__outcome_label_{k}" for k in keys}
    side = {f"{o}_{s}": pl.col(f"{P}lab_{o}_{s}") for o in OUTCOME_LABELS for s in "ab"}
    checked = checked.rename({**helper, **{c: f"{P}lab_{c}" for c in side}})
    amount_a = side["amount_a"]
    return (
        pairs.with_columns(pl.col(k).cast(pl.String).alias(h) for k, h in helper.items())
        .join(checked.lazy(), on=list(helper.values()), how="left", nulls_equal=True)
        .with_columns(
            (side["decision_b"] - side["decision_a"]).alias(P + "label_decision"),
            pl.when(amount_a != 0)
            .then((side["amount_b"] - amount_a) / amount_a.abs())
            .alias(P + "label_amount"),
            (side["refused_b"] - side["refused_a"]).alias(P + "label_refusal"),
        )
    )


def _from_rows(
    rows: pl.LazyFrame,
    *,
    reference: str | None,
    judge: Judge | None,
    strategy: Strategy,
    cols: Columns,
) -> pl.LazyFrame:
    schema = rows.collect_schema()
    if not all(c in schema for c in OUTCOME_COLUMNS):
        rows = outcomes(rows.collect(), judge, columns=cols).lazy()
    if reference is not None:
        if cols.attribute not in schema:
            raise ColumnError(
                f"reference={reference!r} names an attribute value, but the rows have no "
                f"{cols.attribute!r} column. Columns present: {schema.names()}."
            )
        # The row with that attribute becomes each group's reference; controls were re-asks of
        # another row's input, so they measure nothing here and are left out.
        role, attribute = pl.col(cols.role), pl.col(cols.attribute).cast(pl.String)
        rows = rows.filter(role.ne_missing("control")).with_columns(
            pl.when(attribute == reference)
            .then(pl.lit("reference"))
            .otherwise(pl.lit("variant"))
            .alias(cols.role)
        )
        strategy = "group"
    pairs = form_pairs(rows, strategy, columns=cols)
    return pairs.lazy()


def _from_scored(scored: pl.LazyFrame, judge: Judge | None, cols: Columns) -> pl.LazyFrame:
    schema = scored.collect_schema()
    favour = (
        scored.filter(pl.col("metric") == FAVOUR_METRIC)
        .select("pair_id", (-pl.col("score").cast(pl.Float64)).alias(P + "favour_score"))
        .unique("pair_id", keep="first")
    )
    pairs = scored.unique("pair_id", keep="first", maintain_order=True).drop(
        *(c for c in ("metric", "score") if c in schema)
    )
    sided = [f"{c}_{s}" for c in OUTCOME_COLUMNS for s in "ab"]
    if not all(c in schema for c in sided):
        if not {"output_a", "output_b"} <= set(schema.names()):
            raise ColumnError(
                "disparities needs outcomes for both sides of each pair (columns "
                f"{sided[:2]} ...) or the texts output_a and output_b to read them from; the "
                f"scored frame has {schema.names()}. Score with keep_text, or pass the rows."
            )
        if judge is not None and type(judge).__name__ != "HeuristicJudge":
            raise ColumnError(
                "An LLM judge reads outcomes per response: pass the response rows (with "
                "judge=...) rather than a scored frame without outcome columns."
            )
        pairs = pairs.drop(*(c for c in sided if c in schema))
        for side in "ab":
            given = f"input_{side}" if f"input_{side}" in schema else None
            read = heuristic_outcomes(pairs, f"output_{side}", given)
            pairs = read.rename({c: f"{c}_{side}" for c in OUTCOME_COLUMNS})
    return pairs.join(favour, on="pair_id", how="left")


def _resolve(name: str, names: Sequence[str]) -> str:
    if name == "attribute" and "attribute_b" in names:
        return "attribute_b"
    if name in names:
        return name
    if f"{name}_b" in names:
        return f"{name}_b"
    raise ColumnError(
        f"disparities cannot slice by {name!r}: the pairs have no such column. Columns "
        f"present: {list(names)}. Pass by=[...] with existing columns."
    )


def _measures(
    pairs: pl.LazyFrame, by: Sequence[str], cols: Columns
) -> tuple[pl.LazyFrame, list[str]]:
    names = pairs.collect_schema().names()
    if cols.group_by not in names:
        raise ColumnError(
            f"disparities needs the group column {cols.group_by!r}; the pairs have {names}. "
            "Pass group_by=<the group column>."
        )
    if tuple(by) == DEFAULT_BY:  # the default slices: those the data has
        by = [n for n in by if n in names or f"{n}_b" in names]
    resolved = {name: _resolve(name, names) for name in by}
    control = (
        pl.col(PAIR_KIND).cast(pl.String).eq_missing("control")
        if PAIR_KIND in names
        else pl.lit(False)
    )
    has_attribute = "attribute_a" in names
    reference = pl.col("attribute_a").cast(pl.String) if has_attribute else pl.lit(None, pl.String)
    keys = []
    exprs: list[pl.Expr] = []
    for name, column in resolved.items():
        value = pl.col(column)
        if column == "attribute_b":  # a control pair compares the reference with itself
            value = pl.when(control).then(reference).otherwise(pl.col(column).cast(pl.String))
        exprs.append(value.alias(name))
        keys.append(name)
    amount_a, amount_b = pl.col("amount_a").cast(pl.Float64), pl.col("amount_b").cast(pl.Float64)
    same_unit = pl.col("amount_unit_a").cast(pl.String).eq_missing(pl.col("amount_unit_b"))
    favour = pl.col(P + "favour_score") if P + "favour_score" in names else pl.lit(None)
    frame = pairs.select(
        *exprs,
        pl.col(cols.group_by),
        pl.when(control)
        .then(pl.lit("control"))
        .otherwise(pl.lit("counterfactual"))
        .alias(PAIR_KIND),
        reference.alias(P + "reference"),
        pl.col("decision_a").cast(pl.Float64).alias(P + "decision_a"),
        pl.col("decision_b").cast(pl.Float64).alias(P + "decision_b"),
        pl.when(same_unit & (amount_a != 0))
        .then((amount_b - amount_a) / amount_a.abs())
        .alias(P + "amount"),
        pl.col("amount_unit_a").cast(pl.String).alias(P + "unit"),
        (pl.col("refused_b").cast(pl.Float64) - pl.col("refused_a").cast(pl.Float64)).alias(
            P + "refusal"
        ),
        favour.cast(pl.Float64).alias(P + "favour"),
        *[pl.col(c) for c in names if c.startswith(P + "label_")],
    )
    return frame, keys
