"""Paired statistics for two models scored on the same documents.

- :func:`mcnemar_exact`: McNemar's exact test for two accuracies on the same items: under the
  null the discordant pairs split 50/50, so the two-sided p-value is twice the binomial tail of
  the smaller discordant count (capped at 1); McNemar (1947), the exact form as in
  ``statsmodels.stats.contingency_tables.mcnemar(exact=True)``. The tail
  (:func:`half_binomial_tail`) is the integer sum up to :data:`MAX_EXACT_DISCORDANT` discordant
  pairs; past it, a float sum of at most ``5 sqrt(n) + 64`` terms from its largest, started from
  Loader's (2000) saddle-point form of the binomial probability (relative error about 1e-12).
- :func:`paired_bootstrap`: a percentile interval for the mean difference, resampling documents
  (or whole clusters of documents) with replacement, the two runs' values kept together.
- :func:`cluster_robust_stderr`: the analytic cluster-robust standard error of a mean (the
  sandwich estimator with the usual G/(G-1) small-sample factor, Cameron & Miller 2015, eq. 11).
- :func:`minimum_detectable_effect`: the difference a two-sided test at level alpha detects with
  the given power, for a standard error: ``(z_{1-alpha/2} + z_{power}) * se``.

numpy is imported where it is used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

#: the interval's coverage and the resamples behind it (fixed, so every figure is reproducible)
CONFIDENCE = 0.95
N_BOOT = 2000


#: discordant pairs up to which the binomial tail is the exact integer sum (at most 501 binomial
#: coefficients of at most 1,000 bits); past it, the float sum below (ours)
MAX_EXACT_DISCORDANT = 1000
#: the float sum stops when the rest of the tail is below this fraction of it (past double precision)
_TAIL_EPSILON = 2.0**-60
#: Stirling-series coefficients of :func:`_stirling_error` (Loader 2000, ``stirlerr``)
_STIRLING = (1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188)


@dataclass(frozen=True)
class Tail:
    """A binomial tail and the number of its terms evaluated (the sum's steps)."""

    p: float
    terms: int


def half_binomial_tail(n: int, k: int) -> Tail:
    """``P(X <= k)`` for ``X ~ Binomial(n, 1/2)`` and ``0 <= k <= n / 2``.

    Up to :data:`MAX_EXACT_DISCORDANT` trials: the exact sum of ``k + 1`` binomial coefficients over
    ``2**n``, correctly rounded. Past it: ``P(X = k)`` from Loader's saddle-point form, then the
    terms below it by their ratio ``P(X = i - 1) / P(X = i) = i / (n - i + 1)``, which shrinks with
    ``i``; the sum stops once the rest (at most the last term times ``q / (1 - q)``) is below
    ``2**-60`` of it. The terms fall like a normal density of spread ``sqrt(n) / 2`` from ``n / 2``,
    so at most ``5 sqrt(n) + 64`` are evaluated, whatever ``k``: 20,000 discordant pairs took
    74 s as 10,001 big-integer coefficients, they are now at most 769 float steps (627 evaluated)."""
    if n < 0 or k < 0 or 2 * k > n:
        raise ValueError("the tail needs 0 <= k <= n / 2")
    if n <= MAX_EXACT_DISCORDANT:
        return Tail(sum(math.comb(n, i) for i in range(k + 1)) / 2**n, k + 1)
    total = term = 1.0
    terms = 1
    i = k
    while i > 0:
        q = i / (n - i + 1)
        term *= q
        total += term
        terms += 1
        i -= 1
        if term * q / (1 - q) <= _TAIL_EPSILON * total:
            break
    return Tail(min(1.0, math.exp(_log_half_binomial(n, k)) * total), terms)


def _log_half_binomial(n: int, k: int) -> float:
    """``log P(X = k)`` for ``X ~ Binomial(n, 1/2)``, without the cancellation of three log-gammas
    of ``n``'s size: Loader, C. (2000), "Fast and Accurate Computation of Binomial Probabilities"
    (R's ``dbinom``): ``stirlerr(n) - stirlerr(k) - stirlerr(n - k) - bd0(k, n/2) - bd0(n - k, n/2)
    + log(n / (2 pi k (n - k))) / 2``."""
    if k == 0:
        return -n * math.log(2.0)
    mean = n / 2
    return (_stirling_error(n) - _stirling_error(k) - _stirling_error(n - k) - _deviance(k, mean)
            - _deviance(n - k, mean) + 0.5 * math.log(n / (2 * math.pi * k * (n - k))))


def _stirling_error(m: int) -> float:
    """``log(m!) - log(sqrt(2 pi m) (m / e)**m)`` (Loader's ``stirlerr``): its series past 15,
    directly below (where the values are small and the log-gamma exact enough)."""
    if m <= 15:
        return math.lgamma(m + 1) - (m + 0.5) * math.log(m) + m - 0.5 * math.log(2 * math.pi)
    m2 = float(m) * m
    s0, s1, s2, s3, s4 = _STIRLING
    return (s0 - (s1 - (s2 - (s3 - s4 / m2) / m2) / m2) / m2) / m


def _deviance(x: float, mean: float) -> float:
    """``x log(x / mean) + mean - x`` (Loader's ``bd0``), by its series where ``x`` is near
    ``mean`` (the direct form cancels there)."""
    if abs(x - mean) < 0.1 * (x + mean):
        v = (x - mean) / (x + mean)
        total = (x - mean) * v
        step = 2 * x * v
        v2 = v * v
        j = 1
        while True:  # |v| < 0.1: each step shrinks by 100, so a handful of steps reach a fixed point
            step *= v2
            nxt = total + step / (2 * j + 1)
            if nxt == total:
                return total
            total = nxt
            j += 1
    return x * math.log(x / mean) + mean - x


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact p-value for ``a_only`` items only model A got right and ``b_only`` only
    model B got right (the discordant pairs); 1.0 when there are none. Exact (correctly rounded)
    up to :data:`MAX_EXACT_DISCORDANT` discordant pairs, to about 1e-12 past it
    (:func:`half_binomial_tail`)."""
    if a_only < 0 or b_only < 0:
        raise ValueError("discordant counts must be non-negative")
    n = a_only + b_only
    if n == 0:
        return 1.0
    return min(1.0, 2.0 * half_binomial_tail(n, min(a_only, b_only)).p)


@dataclass(frozen=True)
class Interval:
    """A mean difference (B - A) and its paired bootstrap interval."""

    mean: float
    low: float
    high: float
    #: documents (or clusters) resampled
    units: int

    @property
    def significant(self) -> bool:
        """Whether the interval excludes 0 (never from fewer than two units: one document's
        difference says nothing about its spread)."""
        return self.units >= 2 and (self.low > 0 or self.high < 0)


def paired_bootstrap(diffs: Sequence[float], clusters: Sequence[str] | None = None, *, n_boot: int = N_BOOT,
                     seed: int = 0, confidence: float = CONFIDENCE) -> Interval:
    """Percentile interval of the mean of ``diffs`` (one per document, B minus A), resampling
    documents, or whole clusters when ``clusters`` names each document's cluster (the mean of a
    resample is then its documents' total over their count)."""
    import numpy as np

    values = np.asarray(diffs, dtype=np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ValueError("diffs must be a non-empty one-dimensional sequence")
    if clusters is None:
        sums, sizes = values, np.ones_like(values)
    else:
        if len(clusters) != values.size:
            raise ValueError("one cluster per difference")
        index: dict[str, int] = {}
        ids = np.fromiter((index.setdefault(c, len(index)) for c in clusters), dtype=np.int64, count=values.size)
        sums = np.bincount(ids, weights=values)  # type: ignore[assignment]  # numpy's stub: with weights the counts are float64
        sizes = np.bincount(ids).astype(np.float64)
    mean = float(values.mean())
    g = sums.size
    if g < 2:
        return Interval(mean, mean, mean, g)
    rng = np.random.default_rng(seed)
    means = np.empty(n_boot, dtype=np.float64)
    rows = max(1, 250_000 // g)
    for start in range(0, n_boot, rows):
        stop = min(start + rows, n_boot)
        idx = rng.integers(0, g, size=(stop - start, g))
        means[start:stop] = sums[idx].sum(axis=1) / sizes[idx].sum(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Interval(mean, float(low), float(high), g)


def cluster_robust_stderr(values: Sequence[float], clusters: Sequence[str]) -> float:
    """Cluster-robust standard error of the mean of ``values``: ``sqrt(G/(G-1) *
    sum_g (sum_{i in g} (y_i - mean))^2) / N``; 0.0 with fewer than two clusters."""
    if len(values) != len(clusters):
        raise ValueError("one cluster per value")
    n = len(values)
    if n == 0:
        return 0.0
    mean = sum(values) / n
    totals: dict[str, float] = {}
    for value, cluster in zip(values, clusters):
        totals[cluster] = totals.get(cluster, 0.0) + (value - mean)
    g = len(totals)
    if g < 2:
        return 0.0
    return math.sqrt(g / (g - 1) * sum(t * t for t in totals.values())) / n


def minimum_detectable_effect(stderr: float, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest true difference a two-sided level-``alpha`` test detects with probability
    ``power``, for a difference whose standard error is ``stderr`` (2.80 standard errors at the
    defaults)."""
    z = NormalDist()
    return (z.inv_cdf(1 - alpha / 2) + z.inv_cdf(power)) * stderr


def stratified_bootstrap(strata: Sequence[Sequence[float]], *, n_boot: int = N_BOOT, seed: int = 0,
                         confidence: float = CONFIDENCE) -> Interval:
    """Percentile interval of the mean over strata of each stratum's mean difference (a group's
    average over its tasks), each stratum's documents resampled on their own."""
    import numpy as np

    arrays = [np.asarray(s, dtype=np.float64) for s in strata]
    if not arrays or any(a.ndim != 1 or a.size == 0 for a in arrays):
        raise ValueError("every stratum needs at least one difference")
    mean = float(np.mean([a.mean() for a in arrays]))
    rng = np.random.default_rng(seed)
    totals = np.zeros(n_boot, dtype=np.float64)
    for a in arrays:
        if a.size < 2:
            totals += a.mean()
            continue
        rows = max(1, 250_000 // a.size)
        for start in range(0, n_boot, rows):
            stop = min(start + rows, n_boot)
            totals[start:stop] += a[rng.integers(0, a.size, size=(stop - start, a.size))].mean(axis=1)
    means = totals / len(arrays)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Interval(mean, float(low), float(high), sum(a.size for a in arrays))
