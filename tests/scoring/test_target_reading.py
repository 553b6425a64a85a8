"""A target is read by the same rule in ``check`` and in scoring (issue 40, item 10): the task's
parser reads the gold answer as it reads a reply, and the metrics compare the two readings. The
abstention shape (``tests/shapes/abstention``): five answerable questions and three whose target
is a refusal phrase, which the shape's parser reads as ``refuse``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mmtasks.cli import main
from mmtasks.config.task_config import TaskConfig
from mmtasks.documents.dataset import Document
from mmtasks.scoring.parsers import bind
from mmtasks.task import Task

SHAPE = (Path(__file__).resolve().parents[2] / "tests") / "shapes" / "abstention"


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tasks: str, model: str) -> dict:
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "out"
    code = main(["--tasks", tasks, "--no-progress", "--include-path", str(SHAPE / "tasks"), "--data-dir",
                 str(SHAPE / "data"), "--model", model, "--output-path", str(out)])
    assert code == 0
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_check_passes_the_refusal_targets() -> None:
    assert main(["check", "--tasks", "abstention,abstention_refusal,abstention_text", "--include-path",
                 str(SHAPE / "tasks"), "--data-dir", str(SHAPE / "data")]) == 0


def test_a_refusal_target_scores_a_refusal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    results = _run(tmp_path, monkeypatch, "abstention,abstention_refusal", f"replay:{SHAPE / 'replies.jsonl'}")
    for task in ("abstention", "abstention_refusal"):  # the default space, and {kind: text, refusal: ...}
        # answerable: a1 "Red." a2 "Three" a3 "Answer: noon" right, a4 "London" a5 "A cat" wrong: 3/5 = 60;
        # unanswerable (target "I cannot answer this question." -> refuse): u1 "Sorry, I cannot answer
        # this question." and u2 "... so I can't answer." refuse, u3 "Thirty" does not: 2/3 = 66.67;
        # 5/8 = 62.5 (before: the refusals compared with the phrase as written, 37.5 / 60 / 0.0)
        assert results["results"][task]["acc"] == pytest.approx(62.5)
        kinds = results["breakdowns"][task]["kind"]
        assert kinds["answerable"]["acc"] == pytest.approx(60.0)
        assert kinds["unanswerable"]["acc"] == pytest.approx(200 / 3)
    samples = [json.loads(line) for line in (tmp_path / "out" / "samples" / "abstention.jsonl").read_text().splitlines()]
    # the sample records the target as the dataset writes it
    assert {s["doc_id"]: s["target"] for s in samples}["u1"] == "I cannot answer this question."


def test_the_random_baseline_refusing_scores_the_unanswerable_share(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the default text parser, a text space whose refusal the random model always answers: the
    # refusal phrase read as the target is read (its final period dropped on both sides): right on
    # the 3 unanswerable questions of 8 (before: 0.0, the reply's reading against the phrase as written)
    results = _run(tmp_path, monkeypatch, "abstention_text", "random")
    assert results["results"]["abstention_text"]["acc"] == pytest.approx(37.5)
    assert results["breakdowns"]["abstention_text"]["kind"]["unanswerable"]["acc"] == pytest.approx(100.0)


def _task(tmp_path: Path, answer: dict, target: str = "field:answer") -> Task:
    file = tmp_path / "t.yaml"
    config = TaskConfig.model_validate({"task": "t", "dataset": {"local": {"dir": "d", "file": "x.jsonl"}},
                                        "prompt": {"user": "{{ doc.q }}"}, "target": target, "answer": answer,
                                        "metrics": [{"name": "acc", "function": "exact_match"}]})
    return Task(config, file)


def _doc(record: dict) -> Document:
    return Document(doc_id="d1", index=0, record=record, images=(), source="x.jsonl")


def test_gold_as_recorded_and_as_scored(tmp_path: Path) -> None:
    # the text parser reads "Answer: Paris." as "Paris": scored so, recorded as written
    gold = _task(tmp_path, {"parser": "text"}).state(_doc({"q": "?", "answer": "Answer: Paris."})).gold
    assert (gold.value, gold.scored) == ("Answer: Paris.", "Paris")
    # open_answer's reading is a list of candidates, not an answer: its target stays as written (target="raw")
    gold = _task(tmp_path, {"parser": "open_answer"}).state(_doc({"q": "?", "answer": "3.5"})).gold
    assert gold.scored == "3.5"
    # by_field: the rule of the parser the field picks
    by_field = {"parser": "by_field", "parser_args": {"field": "kind", "cases": {
        "open": {"parser": "open_answer"}, "word": {"parser": "text"}}}}
    assert _task(tmp_path, by_field).state(_doc({"q": "?", "kind": "open", "answer": "7."})).gold.scored == "7."
    assert _task(tmp_path, by_field).state(_doc({"q": "?", "kind": "word", "answer": "7."})).gold.scored == "7"
    assert bind("open_answer", None).target_rule({}) == "raw" and bind("choice", None).target_rule({}) == "parsed"
