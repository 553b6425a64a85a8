"""Bootstrap standard errors of a mean."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

# numpy is imported where it is used: a run that aggregates nothing (--predict-only) does not
# pay its import (~90 ms).

#: Bound on resampled values held at once (rows x n), to keep memory flat.
_CHUNK_VALUES = 250_000


def bootstrap_stderr(values: Sequence[float], n_boot: int = 1000, seed: int = 0) -> float:
    """Standard deviation (ddof=1) of the means of ``n_boot`` resamples with replacement.

    Deterministic for a given ``values``, ``n_boot`` and ``seed``; 0.0 when
    there are fewer than two values. Values must be finite numbers.
    """
    import numpy as np

    data = np.asarray(values, dtype=np.float64)
    if data.ndim != 1:
        raise ValueError(f"values must be one-dimensional, got shape {data.shape}")
    if not np.all(np.isfinite(data)):
        raise ValueError("values must be finite numbers")
    n = data.size
    if n < 2 or n_boot < 2:
        return 0.0
    means = np.empty(n_boot, dtype=np.float64)
    for start, stop, idx in _resamples(n, n_boot, seed):
        means[start:stop] = data[idx].mean(axis=1)
    return float(means.std(ddof=1))


def bootstrap_mean_of_means_stderr(groups: Mapping[str, Sequence[float]], seed: int = 0,
                                   n_boot: int = 1000) -> float | None:
    """Standard deviation (ddof=1) of the mean of the group means over ``n_boot`` resamples, each
    group resampled with replacement within itself (in the mapping's order, one draw of
    ``n_boot x len(group)`` indices each). Empty groups are left out; None when the groups hold
    fewer than two values in all."""
    import numpy as np

    arrays = [np.asarray(v, dtype=float) for v in groups.values() if len(v)]
    if not arrays or sum(len(a) for a in arrays) < 2:
        return None
    rng = np.random.default_rng(seed)
    boot = np.zeros(n_boot)
    for values in arrays:
        boot += values[rng.integers(0, len(values), size=(n_boot, len(values)))].mean(axis=1)
    return float((boot / len(arrays)).std(ddof=1))


def bootstrap_ratio_stderr(numerators: Sequence[float], denominators: Sequence[float], n_boot: int = 1000, seed: int = 0) -> float:
    """Standard error of ``sum(numerators) / sum(denominators)`` by resampling units.

    A unit (e.g. a dialogue) contributes its numerator and denominator together,
    so a micro average over turns gets a cluster bootstrap over dialogues.
    Resamples whose denominator sums to 0 are left out; 0.0 when fewer than two
    units or fewer than two usable resamples.
    """
    import numpy as np

    num = np.asarray(numerators, dtype=np.float64)
    den = np.asarray(denominators, dtype=np.float64)
    if num.ndim != 1 or num.shape != den.shape:
        raise ValueError(f"numerators and denominators must be one-dimensional and equally long, got {num.shape} and {den.shape}")
    if not (np.all(np.isfinite(num)) and np.all(np.isfinite(den))):
        raise ValueError("values must be finite numbers")
    n = num.size
    if n < 2 or n_boot < 2:
        return 0.0
    ratios = np.empty(n_boot, dtype=np.float64)
    for start, stop, idx in _resamples(n, n_boot, seed):
        top, bottom = num[idx].sum(axis=1), den[idx].sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios[start:stop] = np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1.0), np.nan)
    usable = ratios[~np.isnan(ratios)]
    return float(usable.std(ddof=1)) if usable.size >= 2 else 0.0


def _resamples(n: int, n_boot: int, seed: int) -> "Iterator[tuple[int, int, np.ndarray]]":
    """Bootstrap index draws in chunks of at most ``_CHUNK_VALUES`` values (bounded memory):
    ``(start, stop, indices)`` with ``indices`` of shape ``(stop - start, n)``; the same draws
    whatever the chunk size, for a given seed."""
    import numpy as np

    rng = np.random.default_rng(seed)
    rows = max(1, _CHUNK_VALUES // n)
    for start in range(0, n_boot, rows):
        stop = min(start + rows, n_boot)
        yield start, stop, rng.integers(0, n, size=(stop - start, n))
