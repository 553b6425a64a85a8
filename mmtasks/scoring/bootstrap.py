"""Bootstrap standard errors of a mean."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

#: Bound on resampled values held at once (rows x n), to keep memory flat.
_CHUNK_VALUES = 2_000_000


class MeanStderr(NamedTuple):
    mean: float
    stderr: float
    n: int


def bootstrap_stderr(values: Sequence[float], n_boot: int = 1000, seed: int = 0) -> float:
    """Standard deviation (ddof=1) of the means of ``n_boot`` resamples with replacement.

    Deterministic for a given ``values``, ``n_boot`` and ``seed``; 0.0 when
    there are fewer than two values. Values must be finite numbers.
    """
    data = np.asarray(values, dtype=np.float64)
    if data.ndim != 1:
        raise ValueError(f"values must be one-dimensional, got shape {data.shape}")
    if not np.all(np.isfinite(data)):
        raise ValueError("values must be finite numbers")
    n = data.size
    if n < 2 or n_boot < 2:
        return 0.0
    rng = np.random.default_rng(seed)
    rows = max(1, _CHUNK_VALUES // n)
    means = np.empty(n_boot, dtype=np.float64)
    for start in range(0, n_boot, rows):
        stop = min(start + rows, n_boot)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = data[idx].mean(axis=1)
    return float(means.std(ddof=1))


def mean_with_stderr(values: Sequence[float], n_boot: int = 1000, seed: int = 0) -> MeanStderr:
    """The mean of ``values`` and its bootstrap standard error."""
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        raise ValueError("cannot average an empty list of values")
    return MeanStderr(float(data.mean()), bootstrap_stderr(data, n_boot=n_boot, seed=seed), int(data.size))
