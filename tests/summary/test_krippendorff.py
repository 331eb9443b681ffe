"""Krippendorff's alpha of a panel: the textbook's worked examples, by hand, and its algebra."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pairwise_polars as pp
from pairwise_polars.summary._krippendorff import ALPHA_SUMS, alpha_expr, unit_sums
from pairwise_polars.summary._ordinal import coincidences, ordinal_figures

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section C: four observers,
# twelve units, values 1..5, missing values. Published: ordinal alpha = 0.815, interval 0.849.
N = None
TEXTBOOK = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    "C": [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
}


def panel_frame(ratings: dict[str, list[int | None]], top: float = 5.0) -> pl.DataFrame:
    """A scored frame of a panel: one member row per (judge, unit) rated, a combined row per
    unit, each unit its own pair and group."""
    rows = []
    units = len(next(iter(ratings.values())))
    for unit in range(units):
        for name, values in ratings.items():
            if values[unit] is not None:
                rows.append((unit, name, 0, values[unit] / top))
        rows.append((unit, "panel", None, 0.0))
    return pl.DataFrame(
        rows, schema=["pair_id", "judge_model", "repeat", "score"], orient="row"
    ).with_columns(
        metric=pl.lit("pairwise-bias"),
        group_id=pl.col("pair_id"),
        error=pl.lit(None, pl.String),
        repeat=pl.col("repeat").cast(pl.Int64),
    )


def alpha(ratings: dict[str, list[int | None]], top: float = 5.0) -> float:
    return pp.aggregate(panel_frame(ratings, top), by=[])["judge_agreement"].item()


def test_the_textbook_ordinal_alpha() -> None:
    # A rubric is ordinal: the published ordinal alpha of the same data is 0.815.
    assert alpha(TEXTBOOK) == pytest.approx(0.815, abs=5e-4)
    # It reads only the order of the levels: squaring every value changes nothing.
    squared = {k: [None if v is None else v * v for v in vs] for k, vs in TEXTBOOK.items()}
    assert alpha(squared, top=25.0) == pytest.approx(alpha(TEXTBOOK))


def test_the_textbook_interval_alpha() -> None:
    # The interval level (judge_report's figures, and continuous scores) on the same data.
    values = pl.DataFrame(
        [(u, v) for vs in TEXTBOOK.values() for u, v in enumerate(vs) if v is not None],
        schema=["unit", "value"],
        orient="row",
    )
    sums = values.group_by("unit").agg(unit_sums(pl.col("value").cast(pl.Float64), pl.len()))
    interval = sums.select(pl.col(ALPHA_SUMS).sum()).select(alpha_expr()).item()
    assert interval == pytest.approx(0.849, abs=5e-4)


def test_a_binary_example_by_hand() -> None:
    # units (0,0), (1,1), (0,1): n = 6 pairable values, three 0s and three 1s; the only
    # disagreeing unit contributes 2 ordered pairs, so alpha = 1 - (n - 1) * 2 / (2 * 3 * 3).
    assert alpha({"a": [0, 1, 0], "b": [0, 1, 1]}, top=1.0) == pytest.approx(1 - 5 * 2 / 18)


def test_units_with_one_value_are_not_pairable() -> None:
    # the third unit has one value: leaving it out gives the same alpha as without it
    with_single = {"a": [0, 1, 0, 1], "b": [0, 1, 1, N]}
    assert alpha(with_single, top=1.0) == pytest.approx(
        alpha({"a": [0, 1, 0], "b": [0, 1, 1]}, 1.0)
    )


def test_no_variation_has_no_alpha_and_one_judge_has_none() -> None:
    assert alpha({"a": [1, 1, 1], "b": [1, 1, 1]}) is None
    summary = pp.aggregate(panel_frame({"a": [1, 2, 3]}), by=[])
    assert summary["judge_agreement"].item() is None
    assert summary["judge_effective_n"].item() is None


ratings = st.lists(
    st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 4)), min_size=3, max_size=40
)


@settings(max_examples=20, deadline=None)
@given(ratings)
def test_alpha_ignores_the_scale_and_the_judges_order(units: list[tuple[int, int, int]]) -> None:
    a, b, c = (list(col) for col in zip(*units, strict=True))
    base = alpha({"a": a, "b": b, "c": c}, top=4.0)
    if base is None:
        return
    assert alpha({"c": c, "a": a, "b": b}, top=4.0) == pytest.approx(base)
    assert alpha({"a": a, "b": b, "c": c}, top=8.0) == pytest.approx(base)
    assert base <= 1.0 + 1e-12
    summary = pp.aggregate(panel_frame({"a": a, "b": b, "c": c}, 4.0), by=[])
    low, high = summary["judge_agreement_low"].item(), summary["judge_agreement_high"].item()
    if low is not None:
        assert low <= high
    effective = summary["judge_effective_n"].item()
    assert 1.0 - 1e-12 <= effective <= 3.0 + 1e-12


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=3, max_size=25))
def test_identical_judges_agree_perfectly(values: list[int]) -> None:
    result = alpha({"a": list(values), "b": list(values)}, top=4.0)
    if len(set(values)) > 1:
        assert result == pytest.approx(1.0)
    else:
        assert result is None


def test_continuous_scores_are_read_at_the_interval_level() -> None:
    # 150 distinct values (more than MAX_LEVELS): no rubric levels to order, so interval alpha.
    a = [i / 149 for i in range(150)]
    b = [min(1.0, v + (0.1 if i % 3 else 0.0)) for i, v in enumerate(a)]
    values = pl.DataFrame({"unit": list(range(150)) * 2, "value": a + b})
    sums = values.group_by("unit").agg(unit_sums(pl.col("value"), pl.len()))
    interval = sums.select(pl.col(ALPHA_SUMS).sum()).select(alpha_expr()).item()
    assert alpha({"a": a, "b": b}, top=1.0) == pytest.approx(interval)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(*[st.integers(0, 1)] * 3), min_size=2, max_size=20))
def test_for_two_levels_ordinal_alpha_is_interval_alpha(units: list[tuple[int, ...]]) -> None:
    rows = [(u, j, float(v)) for u, row in enumerate(units) for j, v in enumerate(row)]
    values = pl.DataFrame(rows, schema=["unit", "judge", "value"], orient="row")
    values = values.with_columns(group=pl.lit(0))
    figures = ordinal_figures(coincidences(values, ["group", "unit"], ["group"]), "group", 0.95)
    assert figures is not None
    sums = values.group_by("unit").agg(unit_sums(pl.col("value"), pl.len()))
    interval = sums.select(pl.col(ALPHA_SUMS).sum()).select(alpha_expr()).item()
    if interval is None:
        assert figures[0] is None
    else:
        assert figures[0] == pytest.approx(interval)
