"""bootstrap_mean_of_means_stderr: the stderr of a mean of group means, each group resampled within itself."""

from __future__ import annotations

import pytest

from mmtasks.scoring.bootstrap import bootstrap_mean_of_means_stderr


def test_no_spread_within_the_groups_is_zero_and_too_few_values_none() -> None:
    assert bootstrap_mean_of_means_stderr({"a": [100.0, 100.0], "b": [0.0]}, 0) == 0.0
    assert bootstrap_mean_of_means_stderr({"a": [1.0], "b": []}, 0) is None
    assert bootstrap_mean_of_means_stderr({}, 0) is None


def test_a_constant_group_halves_the_other_ones_stderr() -> None:
    """Mean of means = (a's mean + 5) / 2: the same resamples of a (drawn first) give half its spread."""
    a = [100.0, 0.0, 100.0, 0.0, 0.0]
    alone = bootstrap_mean_of_means_stderr({"a": a}, 7)
    assert alone is not None and 0 < alone < 50
    assert bootstrap_mean_of_means_stderr({"a": a, "b": [5.0, 5.0, 5.0]}, 7) == pytest.approx(alone / 2)
    assert bootstrap_mean_of_means_stderr({"a": a}, 7) == alone          # deterministic for a seed
