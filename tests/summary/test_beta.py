"""The beta quantile behind the rates' Clopper-Pearson bounds, against published values and
closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pairwise_polars.summary._beta import beta_cdf, beta_quantile


def clopper_pearson(x: int, n: int) -> tuple[float, float]:
    low = float(beta_quantile(0.025, x, n - x + 1)) if x > 0 else 0.0
    high = float(beta_quantile(0.975, x + 1, n - x)) if x < n else 1.0
    return low, high


@pytest.mark.parametrize(
    ("x", "n", "low", "high"),
    [
        # Clopper and Pearson's exact 95% limits as tabulated (e.g. Newcombe 1998, table II;
        # Agresti and Coull 1998): 0/10, 1/10, 5/10, 10/10, 0/20, 3/20
        (0, 10, 0.0, 0.3085),
        (1, 10, 0.0025, 0.4450),
        (5, 10, 0.1871, 0.8129),
        (10, 10, 0.6915, 1.0),
        (0, 20, 0.0, 0.1684),
        (3, 20, 0.0321, 0.3789),
    ],
)
def test_clopper_pearson_matches_published_limits(x, n, low, high) -> None:
    got = clopper_pearson(x, n)
    assert got == pytest.approx((low, high), abs=5e-5)


def test_closed_forms() -> None:
    p = np.array([0.001, 0.025, 0.3, 0.5, 0.975, 0.999])
    # x = 0 and x = n: the bounds are 1 - (alpha/2)^(1/n) and (alpha/2)^(1/n)
    assert beta_quantile(p, 1.0, 40.0) == pytest.approx(1 - (1 - p) ** (1 / 40), rel=1e-12)
    assert beta_quantile(p, 7.5, 1.0) == pytest.approx(p ** (1 / 7.5), rel=1e-12)
    # the arcsine law
    assert beta_quantile(p, 0.5, 0.5) == pytest.approx(np.sin(np.pi * p / 2) ** 2, rel=1e-10)
    assert float(beta_cdf(0.5, 2.0, 3.0)) == pytest.approx(0.6875, rel=1e-14)


def test_large_shapes_and_shape() -> None:
    # half a million events in a million: the normal limit to four digits
    low, high = clopper_pearson(500_000, 1_000_000)
    half = 1.959964 * math.sqrt(0.25 / 1_000_000)
    assert (low, high) == pytest.approx((0.5 - half, 0.5 + half), abs=2e-6)
    assert beta_quantile(np.full((2, 3), 0.5), 2.0, 2.0) == pytest.approx(np.full((2, 3), 0.5))
    with pytest.raises(ValueError, match="0 < p < 1"):
        beta_quantile(1.0, 2.0, 2.0)


shapes = st.floats(0.05, 5_000.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.001, 0.999), min_size=2, max_size=8), shapes, shapes)
def test_quantile_inverts_the_cdf_and_is_monotone(ps, a, b) -> None:
    p = np.sort(np.array(ps))
    q = beta_quantile(p, a, b)
    assert np.all(np.diff(q) >= -1e-12 * q[1:])  # monotone, up to the solver's last digits
    # near 1 a double holds 1 - x to about 1e-16 absolutely, which moves the cdf of a shape
    # below 1 by more than 1e-8; near 0 it holds x relatively down to the underflow
    inner = (q > 1e-250) & (q < 1 - 1e-6)
    assert beta_cdf(q[inner], a, b) == pytest.approx(p[inner], rel=1e-8, abs=1e-12)
