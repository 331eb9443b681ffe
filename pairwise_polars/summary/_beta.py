"""The beta distribution without scipy: the regularised incomplete beta function (a continued
fraction, modified Lentz) and its inverse (Halley steps from an asymptotic first guess, kept
inside a shrinking bracket), element-wise over numpy arrays.

Clopper-Pearson bounds are beta quantiles: for ``x`` events out of ``n``, the lower bound is the
``alpha/2`` quantile of ``Beta(x, n - x + 1)`` and the upper the ``1 - alpha/2`` quantile of
``Beta(x + 1, n - x)``; :mod:`pairwise_polars.summary._intervals` takes them on a fractional
effective ``n``. The values match published tables (see the tests).
"""

from __future__ import annotations

import math

import numpy as np

_EPS = 1e-15
_TINY = 1e-300
_FEW = 64
"""Unconverged elements the continued fraction finishes one by one (see :func:`_fraction`)."""
_lgamma = np.vectorize(math.lgamma, otypes=[float])


def beta_cdf(x: np.ndarray | float, a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray:
    """``P(X <= x)`` for ``X ~ Beta(a, b)`` (``a, b > 0``), element-wise.

    >>> float(beta_cdf(0.5, 2.0, 3.0))
    0.6875
    """
    x, a, b = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (x, a, b)))
    shape = x.shape
    x, a, b = x.ravel(), a.ravel(), b.ravel()  # 1-d: the fraction updates elements in place
    return _cdf(x, a, b, _log_norm(a, b)).reshape(shape)


def beta_quantile(
    p: np.ndarray | float, a: np.ndarray | float, b: np.ndarray | float
) -> np.ndarray:
    """The ``p`` quantile of ``Beta(a, b)`` (``0 < p < 1``, ``a, b > 0``), element-wise.

    >>> round(float(beta_quantile(0.975, 1.0, 10.0)), 5)  # Clopper-Pearson upper, 0 of 10
    0.3085
    """
    p, a, b = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (p, a, b)))
    shape = p.shape
    p, a, b = p.ravel(), a.ravel(), b.ravel()
    if np.any((p <= 0) | (p >= 1)) or np.any((a <= 0) | (b <= 0)):
        raise ValueError("beta_quantile needs 0 < p < 1 and positive shapes a and b.")
    # Solved on the side whose quantile is below 1/2 (1 - x is exact there, x near 1 is not):
    # the p quantile of Beta(a, b) is 1 minus the 1 - p quantile of Beta(b, a).
    flip = _cdf(np.full_like(p, 0.5), a, b, _log_norm(a, b)) < p
    p, a, b = np.where(flip, 1 - p, p), np.where(flip, b, a), np.where(flip, a, b)
    x = _solve(p, a, b)
    return np.where(flip, 1 - x, x).reshape(shape)


def _solve(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    log_norm = _log_norm(a, b)
    x = _first_guess(p, a, b)
    low, high = np.zeros_like(x), np.ones_like(x)
    active = np.ones(x.shape, bool)
    for _ in range(200):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        xi, ai, bi, pi = x[idx], a[idx], b[idx], p[idx]
        error = _cdf(xi, ai, bi, log_norm[idx]) - pi
        lo = np.where(error < 0, xi, low[idx])
        hi = np.where(error < 0, high[idx], xi)
        low[idx], high[idx] = lo, hi
        log_density = log_norm[idx] + (ai - 1) * np.log(xi) + (bi - 1) * np.log1p(-xi)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            u = error / np.exp(log_density)
            # Halley's correction for the density's slope, bounded so a step stays within a
            # factor of 2 of Newton's
            curve = np.clip(u * ((ai - 1) / xi - (bi - 1) / (1 - xi)), -1.0, 1.0)
            step = u / (1 - 0.5 * np.nan_to_num(curve))
        nxt = xi - step
        converged = (error == 0) | (np.abs(step) <= 4 * _EPS * xi)
        # a step that leaves the bracket is replaced by bisection (geometric near 0 and 1,
        # where quantiles can be many orders of magnitude small)
        outside = ~np.isfinite(nxt) | (nxt <= lo) | (nxt >= hi)
        nxt = np.where(converged, xi, np.where(outside, _middle(lo, hi), nxt))
        x[idx] = nxt
        active[idx] = ~(converged | (hi - lo <= 4 * _EPS * hi))
    return x


def _middle(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    near_zero = (lo > 0) & (hi < 0.5) & (hi > 4 * lo)
    near_one = (hi < 1) & (lo > 0.5) & (1 - lo > 4 * (1 - hi))
    lo_safe, hi_safe = np.maximum(lo, _TINY), np.maximum(1 - hi, _TINY)
    plain = np.where(lo == 0, hi / 16, (lo + hi) / 2)  # from 0, shrink fast towards 0
    plain = np.where(hi == 1, np.where(lo == 0, plain, 1 - (1 - lo) / 16), plain)
    plain = np.where((lo == 0) & (hi == 1), 0.5, plain)
    geometric = np.sqrt(lo_safe * hi)
    geometric_one = 1 - np.sqrt(hi_safe * (1 - lo))
    return np.where(near_zero, geometric, np.where(near_one, geometric_one, plain))


def _first_guess(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Numerical Recipes' starting point: a normal-based approximation for ``a, b >= 1``, the
    power-law behaviour of either tail otherwise."""
    with np.errstate(all="ignore"):
        return _guess(p, a, b)


def _guess(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    pp = np.where(p < 0.5, p, 1 - p)
    t = np.sqrt(-2 * np.log(pp))
    z = (2.30753 + t * 0.27061) / (1 + t * (0.99229 + t * 0.04481)) - t
    z = np.where(p < 0.5, -z, z)  # Numerical Recipes: positive z, the lower tail
    al = (z * z - 3) / 6
    big_a, big_b = np.maximum(2 * a - 1, 1.0), np.maximum(2 * b - 1, 1.0)
    h = 2 / (1 / big_a + 1 / big_b)
    w = z * np.sqrt(np.maximum(al + h, 0.0)) / h - (1 / big_b - 1 / big_a) * (
        al + 5 / 6 - 2 / (3 * h)
    )
    normal = a / (a + b * np.exp(np.clip(2 * w, -700, 700)))
    lna, lnb = np.log(a / (a + b)), np.log(b / (a + b))
    tail_a, tail_b = np.exp(a * lna) / a, np.exp(b * lnb) / b
    total = tail_a + tail_b
    lower = (a * total * p) ** (1 / a)
    upper = 1 - (b * total * (1 - p)) ** (1 / b)
    small = np.where(p < tail_a / total, lower, upper)
    guess = np.where((a >= 1) & (b >= 1), normal, small)
    return np.clip(np.nan_to_num(guess, nan=0.5), 1e-300, 1 - 1e-16)


def _log_norm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _lgamma(a + b) - _lgamma(a) - _lgamma(b)


def _cdf(x: np.ndarray, a: np.ndarray, b: np.ndarray, log_norm: np.ndarray) -> np.ndarray:
    inside = (x > 0) & (x < 1)
    xs = np.where(inside, x, 0.5)
    with np.errstate(divide="ignore"):
        front = np.exp(log_norm + a * np.log(xs) + b * np.log1p(-xs))
    direct = xs < (a + 1) / (a + b + 2)
    aa, bb = np.where(direct, a, b), np.where(direct, b, a)
    xx = np.where(direct, xs, 1 - xs)
    part = front * _fraction(aa, bb, xx) / aa
    value = np.where(direct, part, 1 - part)
    return np.where(inside, value, np.where(x >= 1, 1.0, 0.0))


def _fraction(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The incomplete beta's continued fraction (modified Lentz), element-wise; elements drop
    out as they converge (large shapes need about ``sqrt(max(a, b))`` terms). The unconverged
    elements are kept in arrays of their own, cut only when some converge: on a few elements
    the numpy calls, not the arithmetic, are the time, so once at most ``_FEW`` are left they
    are finished one by one in Python floats (:func:`_fraction_from`: the same operations in
    the same order, so the same bits)."""
    qab, qap, qam = a + b, a + 1, a - 1
    d = 1 - qab * x / qap
    d = 1 / np.where(np.abs(d) > _TINY, d, _TINY)
    h = d.copy()
    idx = np.arange(a.size)
    ai, bi, xi, qabi, qapi, qami = a, b, x, qab, qap, qam
    ci, di, hi = np.ones_like(a), d, h.copy()
    for i in range(1, 100_000):
        if idx.size <= _FEW:
            state = (w.tolist() for w in (ai, bi, xi, qabi, qapi, qami, ci, di, hi))
            h[idx] = [_fraction_from(i, *v) for v in zip(*state, strict=True)]
            return h
        i2 = 2 * i
        converged = np.ones(idx.size, bool)
        for numerator in (
            i * (bi - i) * xi / ((qami + i2) * (ai + i2)),
            -(ai + i) * (qabi + i) * xi / ((ai + i2) * (qapi + i2)),
        ):
            di = 1 + numerator * di
            di = 1 / np.where(np.abs(di) > _TINY, di, _TINY)
            ci = 1 + numerator / ci
            ci = np.where(np.abs(ci) > _TINY, ci, _TINY)
            hi = hi * di * ci
            converged &= np.abs(di * ci - 1) < _EPS
        if converged.any():
            h[idx[converged]] = hi[converged]
            keep = ~converged
            idx, ai, bi, xi = idx[keep], ai[keep], bi[keep], xi[keep]
            qabi, qapi, qami = qabi[keep], qapi[keep], qami[keep]
            ci, di, hi = ci[keep], di[keep], hi[keep]
    h[idx] = hi  # any element still unconverged: its last value
    return h


def _fraction_from(
    start: int, a: float, b: float, x: float, qab: float, qap: float, qam: float, *state: float
) -> float:
    """One element of :func:`_fraction` from its term ``start`` on (``state``: its ``c``, ``d``
    and ``h`` there), in Python floats: each operation is the numpy loop's, in its order (IEEE
    double arithmetic either way, so the same bits), without a numpy call's fixed cost."""
    c, d, h = state
    for i in range(start, 100_000):
        c_odd, d_odd, c, d = lentz_term(i, a, b, x, qab, qap, qam, c, d)
        h = h * d_odd * c_odd
        h = h * d * c
        if abs(d_odd * c_odd - 1) < _EPS and abs(d * c - 1) < _EPS:
            break
    return h


def lentz_term(
    i: int, a: float, b: float, x: float, qab: float, qap: float, qam: float, c: float, d: float
) -> tuple[float, float, float, float]:
    """Term ``i`` of the incomplete beta's continued fraction by modified Lentz's method, in
    Python floats (``qab``, ``qap``, ``qam``: ``a + b``, ``a + 1``, ``a - 1``): ``c`` and ``d``
    after its odd numerator, then after its even one, each kept off zero."""
    i2 = 2 * i
    odd = i * (b - i) * x / ((qam + i2) * (a + i2))
    even = -(a + i) * (qab + i) * x / ((a + i2) * (qap + i2))
    d = 1 + odd * d
    d_odd = 1 / (d if abs(d) > _TINY else _TINY)
    c = 1 + odd / c
    c_odd = c if abs(c) > _TINY else _TINY
    d = 1 + even * d_odd
    d = 1 / (d if abs(d) > _TINY else _TINY)
    c = 1 + even / c_odd
    return c_odd, d_odd, (c if abs(c) > _TINY else _TINY), d
