"""Competing intervals for bench_coverage.py, computed from the same per-group sums.

Each function takes (replicate, group) arrays and returns, per competitor, the coverage of the
true value and the mean width over the replicates:

- CR1-t: the cluster-robust variance with ``G / (G - 1)``, a Wald interval on ``G - 1`` df;
- CR2-BM: the CR2 variance with Bell and McCaffrey's degrees of freedom, a Wald interval;
- Korn-Graubard (rates only): Clopper-Pearson on the effective sample size ``p(1-p) / V``
  (``V`` the CR1 variance, the design effect truncated at 1), scaled by
  ``(t_{N-1} / t_{G-1})^2`` for the design's degrees of freedom (Korn and Graubard 1998; the
  ``"beta"`` method of R survey's ``svyciprop``);
- cluster bootstrap: the percentile interval of ``BOOT`` resamples of whole groups.
"""

from __future__ import annotations

import numpy as np

from pairwise_polars.summary._beta import beta_quantile
from pairwise_polars.summary._student_t import t_quantile

BOOT = 250
Figures = dict[str, tuple[float, float]]


def _quantile(df: np.ndarray) -> np.ndarray:
    keys = np.floor(np.minimum(df, 1e6) * 100 + 1e-6) / 100
    table = {k: t_quantile(0.975, k) for k in np.unique(keys)}
    return np.vectorize(table.__getitem__, otypes=[float])(keys)


def _score(low, high, truth) -> tuple[float, float]:
    covered = (low <= truth + 1e-12) & (high >= truth - 1e-12)
    return float(np.mean(covered)), float(np.mean(high - low))


def _wald(m, variance, df, truth, low_high) -> tuple[float, float]:
    half = _quantile(df) * np.sqrt(variance)
    return _score(np.clip(m - half, *low_high), np.clip(m + half, *low_high), truth)


def bell_mccaffrey(n: np.ndarray) -> np.ndarray:
    big_n = n.sum(axis=1, keepdims=True)
    d = n / (1 - n / big_n)
    big = big_n[:, 0]
    f = (d * d).sum(axis=1) - 2 / big * (d * d * n).sum(axis=1) + (d * n).sum(axis=1) ** 2 / big**2
    return big * big / f


def ratio(y: np.ndarray, n: np.ndarray, truth: float, *, rate: bool, rng) -> Figures:
    """The competitors for a ratio mean ``sum y / sum n`` in [0, 1]."""
    big_n = n.sum(axis=1, keepdims=True)
    groups = (n > 0).sum(axis=1)
    m = y.sum(axis=1, keepdims=True) / big_n
    r = y - m * n
    cr1 = groups / (groups - 1) * (r * r).sum(axis=1) / big_n[:, 0] ** 2
    cr2 = (r * r / (1 - n / big_n)).sum(axis=1) / big_n[:, 0] ** 2
    out = {
        "CR1-t": _wald(m[:, 0], cr1, groups - 1.0, truth, (0.0, 1.0)),
        "CR2-BM": _wald(m[:, 0], cr2, bell_mccaffrey(n), truth, (0.0, 1.0)),
    }
    if rate:
        out["Korn-Graubard"] = _korn_graubard(m[:, 0], cr1, big_n[:, 0], groups, truth)
    w = _resamples(n.shape[1], rng)
    boot = (w @ y.T) / (w @ n.T)  # (resample, replicate)
    out["bootstrap"] = _score(*np.quantile(boot, [0.025, 0.975], axis=0), truth)
    return out


def difference(cf: dict, ctrl: dict, truth: float, rng) -> Figures:
    """The competitors for the excess ``m - k`` of two ratio means, on the linearised group
    residuals."""
    n, q = cf["n"].astype(float), ctrl["n"].astype(float)
    s, c = cf["sum"].astype(float), ctrl["sum"].astype(float)
    big_n, big_q = n.sum(axis=1, keepdims=True), q.sum(axis=1, keepdims=True)
    m, k = s.sum(axis=1, keepdims=True) / big_n, c.sum(axis=1, keepdims=True) / big_q
    a, b = 1 / np.sqrt(1 - n / big_n), 1 / np.sqrt(1 - q / big_q)
    r_cf, r_ctrl = (s - m * n) / big_n, (c - k * q) / big_q
    groups = n.shape[1]
    cr1 = groups / (groups - 1) * ((r_cf - r_ctrl) ** 2).sum(axis=1)
    cr2 = ((a * r_cf - b * r_ctrl) ** 2).sum(axis=1)
    d = a * a * n / big_n**2 + b * b * q / big_q**2
    x2, y2 = a * a * n * n / big_n**3, b * b * q * q / big_q**3
    xy = a * b * n * q / (big_n * big_q) ** 1.5
    trace = d.sum(1) - x2.sum(1) - y2.sum(1)
    frob = (
        (d * d).sum(1)
        - 2 * (d * x2).sum(1)
        - 2 * (d * y2).sum(1)
        + x2.sum(1) ** 2
        + y2.sum(1) ** 2
        + 2 * xy.sum(1) ** 2
    )
    estimate = (m - k)[:, 0]
    w = _resamples(groups, rng)
    boot = (w @ s.T) / (w @ n.T) - (w @ c.T) / np.maximum(w @ q.T, 1e-300)
    return {
        "CR1-t": _wald(estimate, cr1, np.full(estimate.shape, groups - 1.0), truth, (-1, 1)),
        "CR2-BM": _wald(estimate, cr2, trace * trace / frob, truth, (-1.0, 1.0)),
        "bootstrap": _score(*np.quantile(boot, [0.025, 0.975], axis=0), truth),
    }


def _resamples(groups: int, rng) -> np.ndarray:
    """``BOOT`` resamples of ``groups`` groups: how often each group is drawn."""
    return rng.multinomial(groups, np.full(groups, 1 / groups), size=BOOT).astype(float)


def _korn_graubard(m, variance, big_n, groups, truth) -> tuple[float, float]:
    n_eff = np.where(variance > 0, m * (1 - m) / np.where(variance > 0, variance, 1), big_n)
    n_eff = np.minimum(n_eff, big_n)
    scale = np.array(
        [
            (t_quantile(0.975, nn - 1) / t_quantile(0.975, g - 1)) ** 2
            for nn, g in zip(big_n, groups, strict=True)
        ]
    )
    n_eff = np.maximum(n_eff * scale, 1e-3)
    x = m * n_eff
    low = np.where(x > 0, beta_quantile(0.025, np.maximum(x, 1e-9), n_eff - x + 1), 0.0)
    high = np.where(n_eff - x > 0, beta_quantile(0.975, x + 1, np.maximum(n_eff - x, 1e-9)), 1.0)
    return _score(low, high, truth)
