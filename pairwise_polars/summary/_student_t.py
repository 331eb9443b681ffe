"""Student's t quantiles without scipy: the t distribution function through the regularised
incomplete beta function (a continued fraction), inverted by safeguarded Newton steps.

Intervals need one quantile per number of groups, so speed does not matter and exactness does:
the values match published tables to every printed digit (see the tests).
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

from pairwise_polars.summary._beta import lentz_term

_EPS = 1e-16
_TINY = 1e-300
_LARGE_DF = 1e5


@lru_cache(maxsize=4096)
def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (``df > 0``).

    >>> round(t_quantile(0.975, 1), 4), round(t_quantile(0.975, 9), 4)
    (12.7062, 2.2622)
    """
    if not 0 < p < 1:
        raise ValueError(f"p must be in (0, 1), got {p}.")
    if not df > 0:
        raise ValueError(f"df must be positive, got {df}.")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return -t_quantile(1 - p, df)
    if df > _LARGE_DF:
        # Cornish-Fisher to 1/df^2: its error is below 1e-13 here, where lgamma loses digits.
        z = NormalDist().inv_cdf(p)
        return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
    # Newton's method on the distribution function from the normal quantile, kept inside a
    # bracket that bisection shrinks whenever a Newton step would leave it.
    low, high = 0.0, max(1.0, NormalDist().inv_cdf(p))
    while t_cdf(high, df) < p:
        low, high = high, 2 * high
    t = min(max(NormalDist().inv_cdf(p), low), high)
    for _ in range(200):
        error = t_cdf(t, df) - p
        if error < 0:
            low = t
        else:
            high = t
        step = error / t_pdf(t, df)
        candidate = t - step
        if not low < candidate < high:
            candidate = (low + high) / 2
        if abs(candidate - t) <= 4 * _EPS * max(1.0, abs(t)) or high - low <= _EPS * high:
            return candidate
        t = candidate
    return t


def t_pdf(t: float, df: float) -> float:
    """The density of Student's t with ``df`` degrees of freedom at ``t``."""
    log_density = (
        math.lgamma((df + 1) / 2)
        - math.lgamma(df / 2)
        - 0.5 * math.log(df * math.pi)
        - (df + 1) / 2 * math.log1p(t * t / df)
    )
    return math.exp(log_density)


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    if t == 0:
        return 0.5
    # P(|T| > |t|) = I_x(df/2, 1/2) with x = df / (df + t^2); 1 - x computed directly, so it
    # keeps its precision when df is large and x is close to 1.
    x = df / (df + t * t)
    tail = _incomplete_beta(df / 2, 0.5, x, t * t / (df + t * t)) / 2
    return 1 - tail if t > 0 else tail


def _incomplete_beta(a: float, b: float, x: float, one_minus_x: float) -> float:
    """The regularised incomplete beta function I_x(a, b)."""
    if x <= 0:
        return 0.0
    if one_minus_x <= 0:
        return 1.0
    log_front = (
        math.lgamma(a + b)
        - math.lgamma(a)
        - math.lgamma(b)
        + a * math.log(x)
        + b * math.log(one_minus_x)
    )
    front = math.exp(log_front)
    if x < (a + 1) / (a + b + 2):
        return front * _continued_fraction(a, b, x) / a
    return 1 - front * _continued_fraction(b, a, one_minus_x) / b


def _continued_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz's method)."""
    qab, qap, qam = a + b, a + 1, a - 1
    c, d = 1.0, 1 - qab * x / qap
    d = 1 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 10_000):
        c_odd, d_odd, c, d = lentz_term(m, a, b, x, qab, qap, qam, c, d)
        h *= d_odd * c_odd
        h *= d * c
        if abs(d * c - 1) < _EPS:
            break
    return h
