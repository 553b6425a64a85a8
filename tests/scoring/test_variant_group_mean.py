"""A scoring variant's ``group_mean``: how results.json's ``groups[g].variants[name]`` combines the
members' figures for it (``by_task``: the plain mean of the members' headlines; ``by_size``: each
weighted by the documents it scored, the mean over every question). Every figure is by hand."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from mmtasks.cli import main
from mmtasks.config.task_config import ScoringVariant
from mmtasks.results.results_json import group_results
from mmtasks.scoring.aggregation import TaskResult

from tests.scoring.test_scoring_variants import PLUGIN, TASK


def _task(*variants: ScoringVariant) -> SimpleNamespace:
    return SimpleNamespace(config=SimpleNamespace(primary_metric="acc", variants=list(variants)))


def _figures(acc: float, scored: int | None) -> dict:
    coverage = None if scored is None else {"unit": "documents", "scored": scored, "total": scored, "unscored": {}}
    return {"metrics": {"acc": acc}, "coverage": coverage}


def test_by_size_weights_each_member_by_its_scored_documents() -> None:
    variants = [ScoringVariant(name="plain"), ScoringVariant(name="pooled", group_mean="by_size")]
    tasks = {"a": _task(*variants), "b": _task(*variants), "c": _task(*variants)}
    results = {"a": TaskResult(metrics={"acc": 10.0}, n_samples=10), "b": TaskResult(metrics={"acc": 20.0}, n_samples=30),
               "c": TaskResult(metrics={"acc": 30.0}, n_samples=5)}
    # a: 50% of 10 scored; b: 80% of 30; c: 20% of 5 documents (no coverage: every sample counts)
    per_task = {"a": {"plain": _figures(50.0, 10), "pooled": _figures(50.0, 10)},
                "b": {"plain": _figures(80.0, 30), "pooled": _figures(80.0, 30)},
                "c": {"plain": _figures(20.0, None), "pooled": _figures(20.0, None)}}
    group = group_results({"g": ["a", "b", "c"]}, tasks, results, per_task)["g"]
    assert group.variants["plain"] == pytest.approx((50 + 80 + 20) / 3)  # 50.0
    # (5 + 24 + 1) right of 45 questions
    assert group.variants["pooled"] == pytest.approx(100 * 30 / 45)
    assert group.average == pytest.approx(20.0)  # the task's own group average stays the plain mean
    # a member the variant scored fewer documents of weighs less: b's coverage 15 of 30
    per_task["b"]["pooled"] = _figures(80.0, 15)
    assert group_results({"g": ["a", "b", "c"]}, tasks, results, per_task)["g"].variants["pooled"] == \
        pytest.approx((50 * 10 + 80 * 15 + 20 * 5) / 30)
    # a member without the variant's figure: no group figure
    per_task["c"]["pooled"] = {"metrics": {"acc": None}, "coverage": None}
    assert group_results({"g": ["a", "b", "c"]}, tasks, results, per_task)["g"].variants["pooled"] is None


def test_an_unknown_group_mean_is_a_one_line_error_naming_the_file_and_key(tmp_path: Path,
                                                                             capsys: pytest.CaptureFixture[str]) -> None:
    tasks = _write(tmp_path, {"va": "by_mean"})
    assert main(["check", "--tasks", "va", "--include-path", str(tasks), "--data-dir", str(tmp_path / "data")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "va.yaml" in err and "variants.0.group_mean" in err and "by_size" in err, err


def test_members_combining_a_variant_differently_is_a_check_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tasks = _write(tmp_path, {"va": "by_size", "vb": "by_task"})
    assert main(["check", "--tasks", "vgroup", "--include-path", str(tasks), "--data-dir", str(tmp_path / "data")]) == 2
    err = capsys.readouterr().err
    assert "vgroup" in err and "variants[0].group_mean" in err and "combine variant 'first' differently" in err, err
    tasks = _write(tmp_path, {"va": "by_size", "vb": "by_size"})
    assert main(["check", "--tasks", "vgroup", "--include-path", str(tasks), "--data-dir", str(tmp_path / "data")]) == 0


def _write(tmp_path: Path, means: dict[str, str]) -> Path:
    """Tasks of group vgroup, each declaring its variant ``first`` with the given ``group_mean``."""
    tasks = tmp_path / "tasks"
    tasks.mkdir(exist_ok=True)
    (tasks / "vt_plugin.py").write_text(PLUGIN, encoding="utf-8")
    for name, mean in means.items():
        text = TASK.format(name=name).replace("unparsed: scored_wrong}", f"unparsed: scored_wrong, group_mean: {mean}}}", 1)
        (tasks / f"{name}.yaml").write_text(text, encoding="utf-8")
    data = tmp_path / "data" / "vt"
    data.mkdir(parents=True, exist_ok=True)
    (data / "vt.jsonl").write_text(json.dumps({"id": "d1", "question": "q1", "answer": "A"}) + "\n", encoding="utf-8")
    return tasks
