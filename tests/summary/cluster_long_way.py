"""The documented intervals computed the long way: CR2 and Bell-McCaffrey degrees of freedom
from the regression's matrices (hat matrix, per-group adjustment ``(I - H_gg)^(-1/2)``, the
eigenvalues behind the degrees of freedom, as clubSandwich computes them with an identity
working model), then the Korn-Graubard or Jeffreys (rates) / Wilson (mean) / MOVER bounds in
plain Python (the beta quantile is the package's, checked against published values on its
own). Independent of the package's closed forms from per-group sums."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pairwise_polars.summary._beta import beta_quantile
from pairwise_polars.summary._student_t import t_quantile


def _inverse_sqrt(matrix: np.ndarray) -> np.ndarray:
    values, vectors = np.linalg.eigh(matrix)
    return vectors @ np.diag(1 / np.sqrt(values)) @ vectors.T


def cr2(
    x: np.ndarray, y: np.ndarray, cluster: np.ndarray, contrast: np.ndarray
) -> tuple[float, float]:
    """CR2 variance of ``contrast @ beta`` (OLS of ``y`` on ``x``) and its Bell-McCaffrey
    degrees of freedom (working model: the identity)."""
    bread = np.linalg.inv(x.T @ x)
    hat = x @ bread @ x.T
    residual = y - hat @ y
    rows = len(y)
    meat = 0.0
    columns = []
    for g in np.unique(cluster):
        at = np.flatnonzero(cluster == g)
        adjust = _inverse_sqrt(np.eye(len(at)) - hat[np.ix_(at, at)])
        weight = adjust @ x[at] @ bread @ contrast  # the group's share of the contrast
        meat += float(weight @ residual[at]) ** 2
        column = np.zeros(rows)
        column[at] = weight
        columns.append((np.eye(rows) - hat) @ column)
    g_matrix = np.column_stack(columns)
    eigen = np.linalg.eigvalsh(g_matrix.T @ g_matrix)
    return meat, float(eigen.sum() ** 2 / (eigen**2).sum())


def satterthwaite(u: list[float]) -> float:
    g = len(u)
    a, b = sum(x * x for x in u), sum(x**4 for x in u)
    top = max(g - 1, 1)
    if a > 0 and b - a * a / g > 0:
        return min(max(2 * a * a / (b - a * a / g), 1.0), top)
    return float(top)


def quantile(p: float, df: float) -> float:
    """The package's rounding of the degrees of freedom: down to 1/100 below 30, else whole."""
    rounded = math.floor(df * 100 + 1e-6) / 100 if df < 30 else math.floor(df + 1e-8)
    return t_quantile(p, rounded)


def wilson(m: float, n_eff: float, q: float) -> tuple[float, float]:
    den = 1 + q * q / n_eff
    centre = (m + q * q / (2 * n_eff)) / den
    half = q * math.sqrt(m * (1 - m) / n_eff + q * q / (4 * n_eff**2)) / den
    return max(0.0, centre - half), min(1.0, centre + half)


def clustered_wilson(
    values: dict[Any, list[float]], confidence: float, *, rate: bool
) -> tuple[float, float] | None:
    """A rate's or the mean's interval from each group's values (see ``_intervals``)."""
    groups = [v for v in values.values() if v]
    if len(groups) < 2:
        return None
    y = np.array([x for v in groups for x in v], dtype=float)
    cluster = np.repeat(np.arange(len(groups)), [len(v) for v in groups])
    n = len(y)
    m = float(y.mean())
    variance, bm = cr2(np.ones((n, 1)), y, cluster, np.ones(1))
    sizes = [len(v) for v in groups]
    u = [(sum(v) - m * len(v)) / math.sqrt(1 - len(v) / n) for v in groups]
    df = min(bm, satterthwaite(u))
    binomial = m * (1 - m)
    pair_variance = binomial
    if not rate and len(groups) * min(m, 1 - m) >= 3:
        pair_variance = max(float((y * y).mean()) - m * m, 0.0)
    worst = n * n / sum(s * s for s in sizes)
    at_worst = True  # the worst case sets n_eff
    if variance > 1e-12 * binomial / n:
        n_eff = binomial / max(variance, pair_variance / n)
        # the groups carrying the rarer side (the hits, or the misses above 1/2), counted as
        # the inverse Herfindahl index of their shares: fewer than 3 (5 for the mean), and the
        # observed variance is not trusted beyond the worst case
        rarer = [sum(v) if m <= 0.5 else len(v) - sum(v) for v in groups]
        carriers = sum(rarer) ** 2 / sum(x * x for x in rarer)
        at_worst = carriers < (3 if rate else 5) and worst <= n_eff
        if at_worst:
            n_eff = worst
    else:
        n_eff = worst
    p = 0.5 + confidence / 2
    if not rate:
        return wilson(m, n_eff, quantile(p, df))
    x = m * n_eff
    if at_worst and max(sizes) > 1:
        # Jeffreys on the worst case itself (no degrees of freedom: no variance estimated)
        a, b = x + 0.5, n_eff - x + 0.5
        low = float(beta_quantile(1 - p, a, b)) if m > 0 else 0.0
        high = float(beta_quantile(p, a, b)) if m < 1 else 1.0
        return low, high
    # Korn-Graubard: the design's degrees of freedom only, then Clopper-Pearson
    n_eff *= (quantile(p, n - 1) / quantile(p, bm)) ** 2
    x = m * n_eff
    low = float(beta_quantile(1 - p, x, n_eff - x + 1)) if m > 0 else 0.0
    high = float(beta_quantile(p, x + 1, n_eff - x)) if m < 1 else 1.0
    return low, high


def excess_interval(
    cf: dict[int, list[float]], ctrl: dict[int, list[float]], confidence: float
) -> tuple[float, float, float | None, float | None]:
    """The control mean, the excess and its bounds (see ``_excess``): CR2 with the smaller of
    Bell-McCaffrey's and Satterthwaite's degrees of freedom, MOVER when a side has no spread
    between groups, null bounds when one group holds every pair of a side."""
    groups = sorted(set(cf) | set(ctrl))
    big_n = sum(len(v) for v in cf.values())
    big_q = sum(len(v) for v in ctrl.values())
    m = sum(sum(v) for v in cf.values()) / big_n
    k = sum(sum(v) for v in ctrl.values()) / big_q
    excess = m - k
    p = 0.5 + confidence / 2
    whole = any(len(v) == big_n for v in cf.values()) or any(len(v) == big_q for v in ctrl.values())
    if len(groups) < 2 or whole:
        return k, excess, None, None
    y = np.array([x for g in groups for x in [*cf.get(g, []), *ctrl.get(g, [])]], dtype=float)
    kind = [c for g in groups for c in [1] * len(cf.get(g, [])) + [0] * len(ctrl.get(g, []))]
    x = np.column_stack([np.array(kind, float), 1 - np.array(kind, float)])
    cluster = np.repeat(
        np.arange(len(groups)), [len(cf.get(g, [])) + len(ctrl.get(g, [])) for g in groups]
    )
    variance, bm = cr2(x, y, cluster, np.array([1.0, -1.0]))

    def scaled(values: list[float], mean: float, total: int) -> float:
        return (sum(values) - mean * len(values)) / total / math.sqrt(1 - len(values) / total)

    u = [scaled(cf.get(g, []), m, big_n) - scaled(ctrl.get(g, []), k, big_q) for g in groups]
    ctrl_groups = [v for v in ctrl.values() if v]
    ctrl_u = [(sum(v) - k * len(v)) / math.sqrt(1 - len(v) / big_q) for v in ctrl_groups]
    ctrl_variance = sum(x * x for x in ctrl_u) / big_q**2
    cf_groups = [v for v in cf.values() if v]
    cf_u = [(sum(v) - m * len(v)) / math.sqrt(1 - len(v) / big_n) for v in cf_groups]
    cf_spread = sum(x * x for x in cf_u) > 1e-12 * m * (1 - m) * big_n
    ctrl_spread = ctrl_variance > 1e-12 * k * (1 - k) / big_q
    if cf_spread and ctrl_spread:
        half = quantile(p, min(bm, satterthwaite(u))) * math.sqrt(variance)
        low, high = excess - half, excess + half
    else:
        # MOVER: each side's own CR2-t interval where it has spread, the rates' worst-case
        # bounds (Jeffreys, or Clopper-Pearson with 1 pair per group) where it has none
        m_low, m_high = side_interval(cf_groups, m, p, spread=cf_spread)
        k_low, k_high = side_interval(ctrl_groups, k, p, spread=ctrl_spread)
        low = excess - math.sqrt((m - m_low) ** 2 + (k_high - k) ** 2)
        high = excess + math.sqrt((m_high - m) ** 2 + (k - k_low) ** 2)
    return k, excess, max(low, -1.0), min(high, 1.0)


def side_interval(
    groups: list[list[float]], mean: float, p: float, *, spread: bool
) -> tuple[float, float]:
    """One side's interval inside the excess's MOVER bounds: with spread between groups, the
    CR2 Wald interval of its mean on the smaller of Bell-McCaffrey's degrees of freedom (from
    the matrices) and Satterthwaite's; without, Jeffreys on the worst-case effective n
    ``N^2 / sum n_g^2`` (Clopper-Pearson when every group has 1 pair); clipped to [0, 1]."""
    sizes = [len(v) for v in groups]
    total = sum(sizes)
    if spread:
        y = np.array([x for v in groups for x in v], dtype=float)
        cluster = np.repeat(np.arange(len(groups)), sizes)
        variance, bm = cr2(np.ones((total, 1)), y, cluster, np.ones(1))
        u = [(sum(v) - mean * len(v)) / math.sqrt(1 - len(v) / total) for v in groups]
        half = quantile(p, min(bm, satterthwaite(u))) * math.sqrt(variance)
        return max(mean - half, 0.0), min(mean + half, 1.0)
    n = total * total / sum(s * s for s in sizes)
    x = mean * n if mean * n >= 1e-9 else 0.0
    h = 0.5 if max(sizes) > 1 else 0.0  # Jeffreys, or Clopper-Pearson with 1 pair per group
    low = float(beta_quantile(1 - p, x + h, n - x + 1 - h)) if x > 0 else 0.0
    high = float(beta_quantile(p, x + 1 - h, n - x + h)) if x < n else 1.0
    return low, high
