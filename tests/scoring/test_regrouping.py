"""``values_by_label`` and ``mean_of_means``: a headline regrouped by one breakdown (MMIU's
mean of task accuracies, MIRB's category means, LLaVA-Interleave's category mean), by hand."""

from __future__ import annotations

import pytest

from mmtasks.core.sample import Sample
from mmtasks.scoring.aggregation import mean_of_means, values_by_label
from tests.folder_runs import plugin


def sample(i: int, acc: float | None, **breakdown: str) -> Sample:
    return Sample(task="t", doc_id=f"d{i}", doc_index=i, metrics={"acc": acc}, breakdown=breakdown)


SAMPLES = [
    sample(0, 100.0, task="b"), sample(1, 0.0, task="a"), sample(2, None, task="a"),  # a failed request
    sample(3, 100.0, task="a"), sample(4, 100.0), sample(5, 0.0, task="b"), sample(6, None, task="c"),
]


def test_values_by_label_in_the_order_groups_first_come() -> None:
    groups = values_by_label(SAMPLES, "acc", "task")
    assert groups == {"b": [100.0, 0.0], "a": [0.0, 100.0], "": [100.0]}  # no label: ""; c has no value
    assert list(groups) == ["b", "a", ""]
    # unscored counted as 0.0 (an _all variant): d2 joins a, d6 makes c
    assert values_by_label(SAMPLES, "acc", "task", unscored=0.0) == {
        "b": [100.0, 0.0], "a": [0.0, 0.0, 100.0], "": [100.0], "c": [0.0]}
    assert values_by_label(SAMPLES, "other", "task") == {}


def test_mean_of_means() -> None:
    # b 50, a 50, "" 100: (50 + 50 + 100) / 3
    assert mean_of_means(values_by_label(SAMPLES, "acc", "task")) == pytest.approx(200 / 3)
    # with unscored as 0: b 50, a 100/3, "" 100, c 0
    assert mean_of_means(values_by_label(SAMPLES, "acc", "task", unscored=0.0)) == pytest.approx((50 + 100 / 3 + 100 + 0) / 4)
    assert mean_of_means({"x": [], "y": [30.0, 60.0]}) == 45.0  # an empty group is left out
    assert mean_of_means({}) is None and mean_of_means({"x": []}) is None


def test_each_benchmark_regroups_through_it() -> None:
    # LLaVA-Interleave: the category mean leaves out the questions of a sub-task of no category ("")
    registry, path = plugin("llava_interleave", "interleave_scoring.py")
    overall = registry.aggregators.get("interleave_overall", plugins=[path]).fn.__globals__["overall"]
    by_category = values_by_label([sample(0, 100.0, category="Puzzle"), sample(1, 0.0, category="Puzzle"),
                                   sample(2, 20.0, category="BLINK"), sample(3, 100.0, category="")], "acc", "category")
    assert overall(by_category) == pytest.approx((50 + 20) / 2)
    # MIRB: subsets -> categories -> Average; food 50, sightseeing 100 -> knowledge 75; count 0 -> perception 0
    registry, path = plugin("mirb", "mirb_scoring.py")
    fns = registry.aggregators.get("mirb_mean", plugins=[path]).fn.__globals__
    by_subset = values_by_label([sample(0, 100.0, subset="food"), sample(1, 0.0, subset="food"),
                                 sample(2, 100.0, subset="sightseeing"), sample(3, 0.0, subset="count")], "acc", "subset")
    assert fns["category_means"](by_subset) == {"knowledge": 75.0, "reasoning": None, "perception": 0.0, "multi_hop": None}
    assert fns["average"](by_subset) == pytest.approx(37.5)
