"""Agreement statistics between two raters' scores of the same items.

Pearson's r is numpy's ``corrcoef``; Spearman's rho is r of :func:`scipy.stats.rankdata`
ranks; Kendall's tau-b is :func:`scipy.stats.kendalltau`. Cohen's
weighted kappa is computed here (scipy has none, and scikit-learn is a large
dependency for twenty lines): on integer scales only, with quadratic weights by
default (linear on request), over the categories spanning both raters' values.

Each statistic gets a percentile bootstrap confidence interval: pairs are
resampled with replacement ``n_resamples`` times from a fixed seed, so the same
input always gives the same interval. A resample on which a statistic is
undefined (constant scores) is skipped; fewer than half defined gives no interval.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

Weights = Literal["quadratic", "linear"]
#: the statistics reported, in display order
STATISTICS = ("pearson", "spearman", "kendall", "kappa")


class Estimate(BaseModel):
    """A statistic, with its bootstrap confidence interval (None: undefined for these pairs)."""

    model_config = ConfigDict(frozen=True)

    value: float | None
    low: float | None = None
    high: float | None = None


class Agreement(BaseModel):
    """Agreement of two raters on one scored quantity (a dimension or an ability)."""

    model_config = ConfigDict(frozen=True)

    n_pairs: int
    pearson: Estimate
    spearman: Estimate
    kendall: Estimate
    #: Cohen's weighted kappa; None unless every score is an integer
    kappa: Estimate | None
    mean_a: float | None
    mean_b: float | None


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def pearson(a: np.ndarray, b: np.ndarray) -> float | None:
    if len(a) < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    return _finite(np.corrcoef(a, b)[0, 1])


def spearman(a: np.ndarray, b: np.ndarray) -> float | None:
    """Pearson's r of the ranks (ties get their average rank)."""
    from scipy import stats

    if len(a) < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    return pearson(stats.rankdata(a), stats.rankdata(b))


def kendall(a: np.ndarray, b: np.ndarray) -> float | None:
    from scipy import stats

    if len(a) < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return None
    return _finite(stats.kendalltau(a, b, variant="b").statistic)


#: the most categories weighted kappa is computed over (a rating scale; ours): integer scores
#: spread wider (1e6) are not a scale, and their k x k table would take terabytes
MAX_KAPPA_CATEGORIES = 1001
#: the most bootstrap resamples (``--resamples``; ours: the intervals settle long before)
MAX_RESAMPLES = 100_000
#: the most resample indices held at once (n_resamples x n_pairs); past it they are drawn row by row
_MAX_INDEX_MATRIX = 10_000_000


def weighted_kappa(a: np.ndarray, b: np.ndarray, weights: Weights = "quadratic") -> float | None:
    """Cohen's weighted kappa of two integer ratings: 1 - observed / expected weighted disagreement.

    Categories are the integers from the smallest to the largest value either rater
    gave; the weight of a disagreement (i, j) is ``((i - j) / (k - 1)) ** p`` with p = 2
    (quadratic) or 1 (linear). None when the expected disagreement is 0 (one category), and
    when the scores span more than :data:`MAX_KAPPA_CATEGORIES` integers (not a rating scale).
    """
    if len(a) == 0:
        return None
    lo = int(min(a.min(), b.min()))
    hi = int(max(a.max(), b.max()))
    k = hi - lo + 1
    if k < 2 or k > MAX_KAPPA_CATEGORIES:
        return None
    ia = (a - lo).astype(int)
    ib = (b - lo).astype(int)
    observed = np.zeros((k, k))
    np.add.at(observed, (ia, ib), 1.0)
    observed /= len(a)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    grid = np.arange(k)
    power = 2 if weights == "quadratic" else 1
    w = (np.abs(grid[:, None] - grid[None, :]) / (k - 1)) ** power
    denominator = float((w * expected).sum())
    if denominator == 0:
        return None
    return _finite(1.0 - float((w * observed).sum()) / denominator)


def _bootstrap(fn: Callable[[np.ndarray, np.ndarray], float | None], a: np.ndarray, b: np.ndarray,
               indices: "np.ndarray | Callable[[], Iterator[np.ndarray]]", level: float) -> Estimate:
    value = fn(a, b)
    if value is None:
        return Estimate(value=None)
    rows = indices() if callable(indices) else iter(indices)
    total = 0
    draws = []
    for idx in rows:
        total += 1
        v = fn(a[idx], b[idx])
        if v is not None:
            draws.append(v)
    if len(draws) < max(1, total // 2):
        return Estimate(value=value)
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail])
    return Estimate(value=value, low=float(low), high=float(high))


def agreement(a: Sequence[float], b: Sequence[float], *, n_resamples: int = 1000, level: float = 0.95,
              seed: int = 1234, weights: Weights = "quadratic") -> Agreement:
    """Every statistic for paired scores ``a[i]``, ``b[i]`` (same length), with bootstrap intervals."""
    if len(a) != len(b):
        raise ValueError(f"agreement: {len(a)} scores against {len(b)}")
    if not 0 <= n_resamples <= MAX_RESAMPLES:
        raise ValueError(f"agreement: n_resamples must be from 0 to {MAX_RESAMPLES}, got {n_resamples}")
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    n = len(x)
    indices: np.ndarray | Callable[[], Iterator[np.ndarray]]
    if n <= 1 or n_resamples == 0:
        indices = np.empty((0, n), dtype=int)
    elif n_resamples * n <= _MAX_INDEX_MATRIX:
        indices = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
    else:  # too many to hold: the same rows for every statistic, drawn one at a time

        def indices() -> Iterator[np.ndarray]:
            rng = np.random.default_rng(seed)
            for _ in range(n_resamples):
                yield rng.integers(0, n, size=n)
    integral = n > 0 and bool(np.all(x == np.round(x)) and np.all(y == np.round(y)))
    return Agreement(
        n_pairs=n,
        pearson=_bootstrap(pearson, x, y, indices, level),
        spearman=_bootstrap(spearman, x, y, indices, level),
        kendall=_bootstrap(kendall, x, y, indices, level),
        kappa=_bootstrap(lambda p, q: weighted_kappa(p, q, weights), x, y, indices, level) if integral else None,
        mean_a=float(x.mean()) if n else None,
        mean_b=float(y.mean()) if n else None,
    )
