"""Synthetic leaderboards for the overview page: benchmark specs (leaderboard.yaml sections) and
runs (results.json written by hand, in the runner's layout), built through the real builder.

The benchmarks and models are made up (``Single-image 3``, ``model-07``) and so are the numbers:
they show the page's layout at the size the issue asks for (40 benchmarks x 20 models), never a
result. ``scripts/make_leaderboard_screenshot.py`` renders :func:`big_board` into the docs.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mmtasks.leaderboard.build import build_leaderboard, load_runs
from mmtasks.leaderboard.schema import Leaderboard
from mmtasks.leaderboard.sections import Section

#: the official judge the synthetic judged benchmarks declare, and another one
OFFICIAL_JUDGE = "openai:gpt-4o-2024-05-13"
OTHER_JUDGE = "openai:gpt-4o-mini"

#: how many synthetic benchmarks of each category :func:`big_board` makes (40 in all)
BIG_CATEGORIES = {"multi-image": 9, "multi-turn": 3, "video": 5, "single-image": 10, "reasoning": 6, "documents": 7}


@dataclass
class Bench:
    """A one-column benchmark: task ``<id>``, metric ``acc``, the headline."""

    id: str
    title: str
    category: str
    judged: bool = False
    """Its task declares an official judge (``judge.default_model``)."""
    variants: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Scoring variant -> (description, source)."""

    def section(self, order: int | None = None) -> Section:
        return Section.model_validate({
            "id": self.id, "title": self.title, "category": self.category, "order": order,
            "description": f"{self.title}: synthetic accuracy, 0-100.", "headline": "acc",
            "columns": [{"key": "acc", "label": "Acc.", "title": "Accuracy (0-100)", "task": self.id, "metric": "acc",
                         "decimals": 2}]})


@dataclass
class Model:
    name: str
    scores: dict[str, float]
    """Benchmark id -> headline (the benchmarks it ran)."""
    variant_scores: dict[str, dict[str, float]] = field(default_factory=dict)
    """Benchmark id -> variant -> headline as the variant scores it."""
    judge: str = OFFICIAL_JUDGE


def write_run(root: Path, model: Model, benches: Mapping[str, Bench], date: float) -> Path:
    """``root/<model>/results.json``: the model's tasks, with each judged task's official judge in
    ``configs`` and its variants' metrics in ``variants``."""
    run = root / model.name
    run.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {
        "results": {b: {"alias": b, "acc": v} for b, v in model.scores.items()},
        "configs": {b: ({"judge": {"default_model": OFFICIAL_JUDGE}} if benches[b].judged else {}) for b in model.scores},
        "variants": {b: {name: {"description": benches[b].variants[name][0], "source": benches[b].variants[name][1],
                                "metrics": {"acc": v}} for name, v in by.items()}
                     for b, by in model.variant_scores.items() if by},
        "config": {"model": f"hf:synthetic/{model.name}", "model_args": {}, "run_name": model.name,
                   "judge": model.judge if any(benches[b].judged for b in model.scores) else None},
        "date": date,
    }
    (run / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    return run


def board_from(root: Path, benches: Sequence[Bench], models: Sequence[Model]) -> Leaderboard:
    """The leaderboard the real builder makes of these runs, the sections in the given order."""
    by_id = {b.id: b for b in benches}
    runs = [write_run(root / "runs", model, by_id, 1764460800.0 + i) for i, model in enumerate(models)]
    sections = [b.section(order=10 * (i + 1)) for i, b in enumerate(benches)]
    return build_leaderboard(load_runs(runs), sections=sections, include_paper=False, now=1764547200.0)


def big_board(root: Path, n_models: int = 20, seed: int = 36) -> Leaderboard:
    """40 benchmarks (:data:`BIG_CATEGORIES`) x ``n_models`` models, made up: each model has a
    strength, each benchmark a difficulty; a few models skip some benchmarks (coverage under 40),
    a third of the benchmarks have a peer's scoring variant, the multi-turn ones are judged, and one
    model was judged by another judge than the official one."""
    rng = random.Random(seed)
    benches: list[Bench] = []
    pending = [(cat, k) for cat, n in BIG_CATEGORIES.items() for k in range(1, n + 1)]
    for i, (category, k) in enumerate(pending):
        label = category.replace("-", " ").capitalize()
        variants = {}
        if i % 3 == 0:
            variants["lmms_eval"] = ("lmms-eval's answer parser: a reply it reads nothing from counts as wrong",
                                     "EvolvingLMMs-Lab/lmms-eval (synthetic), lmms_eval/tasks/<bench>/utils.py")
        if i % 5 == 0:
            variants["vlmevalkit"] = ("VLMEvalKit's can_infer and LLM extraction",
                                      "open-compass/VLMEvalKit (synthetic), vlmeval/utils/matching_util.py")
        benches.append(Bench(id=f"{category.replace('-', '_')}_{k}", title=f"{label} {k}", category=category,
                             judged=category == "multi-turn", variants=variants))
    difficulty = {b.id: rng.uniform(-12, 12) for b in benches}
    models = []
    for m in range(1, n_models + 1):
        strength = rng.uniform(-15, 15)
        scores, variant_scores = {}, {}
        for b in benches:
            if m > n_models - 4 and rng.random() < 0.35:
                continue  # the last few models skip some benchmarks
            base = 55 + strength - difficulty[b.id] + rng.gauss(0, 5)
            scores[b.id] = round(min(99.0, max(1.0, base)), 2)
            variant_scores[b.id] = {name: round(min(99.0, max(1.0, scores[b.id] + rng.uniform(-6, 3))), 2)
                                    for name in b.variants}
        models.append(Model(name=f"model-{m:02d}", scores=scores, variant_scores=variant_scores,
                            judge=OTHER_JUDGE if m == 3 else OFFICIAL_JUDGE))
    return board_from(root, benches, models)


def small_case() -> tuple[list[Bench], list[Model]]:
    """Four benchmarks in three categories, listed out of category order, and three models; the
    ranks and averages are worked out by hand in tests/leaderboard/test_overview.py."""
    benches = [
        Bench("docs_d", "Docs D", "documents"),
        Bench("mi_a", "MI A", "multi-image"),
        Bench("video_c", "Video C", "video", judged=True,
              variants={"peer": ("a peer's parser: unparsed counts as wrong", "peer/repo@abc123, eval.py")}),
        Bench("mi_b", "MI B", "multi-image"),
    ]
    models = [
        Model("m1", {"mi_a": 60.0, "mi_b": 30.0, "docs_d": 10.0}),
        Model("m2", {"mi_a": 50.0, "mi_b": 30.0, "video_c": 70.0}, {"video_c": {"peer": 90.0}}),
        Model("m3", {"mi_a": 40.0, "video_c": 80.0}, {"video_c": {"peer": 75.0}}, judge=OTHER_JUDGE),
    ]
    return benches, models


def big_run(root: Path, tasks_per_benchmark: int = 3, documents: int = 2, seed: int = 36) -> Path:
    """A run folder (results.json + samples/) of the 40 made-up benchmarks of :func:`big_board`,
    ``tasks_per_benchmark`` tasks each, for the run viewer's task list; a task names its benchmark
    by its recorded group (results.json's ``configs[task].group``: the benchmarks are in no task
    folder), as a run made with another checkout does."""
    rng = random.Random(seed)
    run = root / "big-run"
    (run / "samples").mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"results": {}, "configs": {}, "config": {"model": "hf:synthetic/model-01", "model_args": {}},
                               "date": 1764460800.0}
    for category, n in BIG_CATEGORIES.items():
        for k in range(1, n + 1):
            bench = f"{category.replace('-', '_')}_{k}"
            for t in range(1, tasks_per_benchmark + 1):
                task = f"{bench}_part{t}"
                lines = []
                for d in range(documents):
                    right = rng.random() < 0.5
                    lines.append({"task": task, "doc_id": str(d), "doc_index": d,
                                  "prompt": [{"role": "user", "content": [{"type": "text", "text": f"Question {d} of {task}?"}]}],
                                  "responses": ["A" if right else "B"], "parsed": "A" if right else "B", "target": "A",
                                  "metrics": {"acc": 100.0 if right else 0.0}, "failures": [], "unparsed": 0,
                                  "breakdown": {"part": f"part {t}"}})
                (run / "samples" / f"{task}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
                acc = sum(x["metrics"]["acc"] for x in lines) / len(lines)
                results["results"][task] = {"alias": task, "acc": acc}
                results["configs"][task] = {"group": [bench], "metrics": [{"name": "acc"}]}
    (run / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")
    return run
