"""Conformance with the benchmark authors' published per-sample outputs (tests/fixtures/published/).

MMMU: the 900 validation replies of LLaVA-1.5-13B and of Qwen-VL in ``mmmu/example_outputs``
(github.com/MMMU-Benchmark/MMMU). Each model's replies are replayed (``--model replay:``) on the
records they answer, rebuilt in MMMU/MMMU's layout with placeholder images (tests/published.py),
so they go through the preflight, prompt rendering, the answer rules and the metric. The authors'
``main_eval_only.py`` (bundled verbatim) scores their ``total_val_output.json`` (their parse of the
same replies). Per document, our verdict equals theirs wherever their rule found an answer; where it
found none, both draw a random letter, and only there can the verdicts differ: the authors from one
``random`` stream seeded 42 (its letter depends on how many replies before it fell back), mmtasks
per document from ``random.Random("42:<id>")``. The guessed documents are the same set, counted in
``problems.guessed``. Per subject the accuracies then differ by exactly the guesses' difference.

BLINK: the 36,119 val replies of the authors' 19 baselines (``eval/saved_outputs``,
github.com/zeyofu/BLINK_Benchmark). The authors score the letter their ``analyze_answer``
extracted (``prediction``, gpt-3.5-turbo where their heuristic could not decide; "(Z)" for no
match) with ``eval/evaluate.py`` (bundled verbatim). Replaying those letters through the 14 BLINK
tasks gives their accuracy for every model and subtask and their "Total" (the mean of the 14). The
raw replies (``full_prediction``) read by the task's offline rule give the figures of
docs/fidelity.md (no LLM matcher).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

from tests.published import (
    LETTERS,
    blink_choice_counts,
    blink_outputs,
    blink_subtask,
    blink_task,
    write_blink_data,
    write_blink_replies,
    MMMU,
    MMMU_MODELS,
    authors_blink_module,
    authors_mmmu_eval,
    authors_mmmu_module,
    mmmu_outputs,
    mmmu_subject,
    mmmu_task,
    write_mmmu_data,
    write_mmmu_replies,
)

REPO = Path(__file__).resolve().parents[2]


def run_mmtasks(args: list[str], tmp: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MMTASKS_"))}
    env.update({"PYTHONPATH": str(REPO), "MMTASKS_CACHE_DIR": str(tmp / "cache"), "HF_HUB_OFFLINE": "1",
                "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp / "hf-home")})
    return subprocess.run([sys.executable, "-m", "mmtasks", *args, "--no-progress", "--no-cache"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)


def samples(out: Path, task: str) -> dict[str, dict[str, Any]]:
    lines = (out / "samples" / f"{task}.jsonl").read_text(encoding="utf-8").splitlines()
    return {s["doc_id"]: s for s in map(json.loads, lines)}


# --- MMMU -------------------------------------------------------------------------------------


class _Sentinel:
    """Stands in for eval_utils' ``random`` to see where the authors' rule falls back to a guess."""

    GUESS = "<guess>"

    def choice(self, letters: list[str]) -> str:
        return self.GUESS


def authors_mmmu_verdicts(model: str) -> tuple[dict[str, bool], set[str]]:
    """Per document, whether the authors' evaluation of their published parse is right (their
    ``evaluate`` on ``total_val_output.json``, as main_eval_only.py calls it), and the documents
    whose reply their ``parse_multi_choice_response`` could not read (a random guess)."""
    eval_utils = authors_mmmu_module()
    answers = json.loads((MMMU / "answer_dict_val.json").read_text(encoding="utf-8"))
    parsed = json.loads((MMMU / f"{model}_total_val_output.json").read_text(encoding="utf-8"))
    examples = []
    for doc_id, pred in parsed.items():
        kind = answers[doc_id]["question_type"]
        examples.append({"id": doc_id, "question_type": kind, "answer": answers[doc_id]["ground_truth"],
                         "parsed_pred": pred if kind == "multiple-choice" else eval_utils.parse_open_response(pred)})
    judge, _ = eval_utils.evaluate(examples)
    eval_utils.random = _Sentinel()
    guessed = set()
    for out in mmmu_outputs(model):
        if out["question_type"] != "multiple-choice":
            continue
        letter = eval_utils.parse_multi_choice_response(out["response"], out["all_choices"], out["index2ans"])
        if letter == _Sentinel.GUESS:
            guessed.add(out["id"])
        else:  # the published parse is their code's: the same letter where no guess was drawn
            assert parsed[out["id"]] == letter, out["id"]
    return {doc_id: verdict == "Correct" for doc_id, verdict in judge.items()}, guessed


@pytest.fixture(scope="module", params=MMMU_MODELS)
def mmmu_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    model = request.param
    tmp = tmp_path_factory.mktemp(f"mmmu-{model}")
    outputs = mmmu_outputs(model)
    assert len(outputs) == 900
    write_mmmu_data(outputs, tmp / "data")
    out = tmp / "run"
    proc = run_mmtasks(["--tasks", "mmmu_val", "--data-dir", str(tmp / "data"), "--model",
                        f"replay:{write_mmmu_replies(outputs, tmp / 'replies.jsonl')}", "--output-path", str(out)], tmp)
    assert proc.returncode in (0, 1), proc.stderr  # 1: guesses are problems of the run (counted, shown)
    return model, out


def test_mmmu_equals_main_eval_only_but_for_the_guesses(mmmu_run: tuple[str, Path]) -> None:
    model, out = mmmu_run
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    theirs = authors_mmmu_eval(model)
    right, guessed = authors_mmmu_verdicts(model)
    assert len(right) == 900
    by_subject: dict[str, list[str]] = defaultdict(list)
    for doc_id in right:
        by_subject[mmmu_subject(doc_id)].append(doc_id)
    assert len(by_subject) == 30
    for subject, ids in by_subject.items():
        task = mmmu_task(subject)
        ours = samples(out, task)
        assert sorted(ours) == sorted(ids), subject
        ours_right = {d: ours[d]["metrics"]["acc"] == 100.0 for d in ids}
        # the same documents guessed, and counted
        assert {d for d in ids if ours[d]["guessed"]} == guessed & set(ids), subject
        assert results["problems"][task].get("guessed", 0) == len(guessed & set(ids)), subject
        # every verdict equal but where a letter was drawn
        assert {d for d in ids if ours_right[d] != right[d]} <= guessed, subject
        # main_eval_only.py's number: its right answers over the subject's 30 (rounded to 3 places)
        assert theirs[subject] == {"num": len(ids), "acc": round(sum(right[d] for d in ids) / len(ids), 3)}, subject
        # ours: the same count, moved by the guesses alone
        shift = sum(ours_right[d] - right[d] for d in guessed & set(ids))
        assert results["results"][task]["acc"] == pytest.approx(100 * (sum(right[d] for d in ids) + shift) / len(ids)), subject
    # validation_Math_7's options name images 8-30 of a 7-image record: kept as text, as run_llava.py does
    assert results["coverage"]["mmmu_val_math"]["kept_as_text"] == {"image tag beyond its images": 1}
    # the overall mean of the 30 subjects (30 questions each) is main_eval_only's instance-level Overall
    shift = sum(samples(out, mmmu_task(mmmu_subject(d)))[d]["metrics"]["acc"] / 100 - right[d] for d in guessed)
    assert results["groups"]["mmmu_val"]["average"] == pytest.approx(100 * (sum(right.values()) + shift) / 900)
    assert theirs["Overall"] == {"num": 900, "acc": round(sum(right.values()) / 900, 3)}


# --- BLINK ------------------------------------------------------------------------------------


#: replayed end to end in every test run: the models with the most predictions that kept their
#: option's text and the most "(Z)" letters; MMTASKS_CONFORMANCE_ALL=1 replays all 19 (36,119
#: documents, about half a minute of CPU)
REPLAYED = ("OPUS", "llava-internlm2-7b")


@pytest.fixture(scope="module")
def blink(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The published records and letters, the placeholder data, and evaluate.py's numbers per model."""
    tmp = tmp_path_factory.mktemp("blink")
    outputs = blink_outputs()
    models = sorted({o["model"] for o in outputs})
    assert len(models) == 19 and len(outputs) == 19 * 1901
    write_blink_data(outputs, tmp / "data")
    answers = {o["idx"]: o["answer"] for o in outputs}
    predictions = {m: {o["idx"]: o["prediction"] for o in outputs if o["model"] == m} for m in models}
    authors = authors_blink_module(answers, predictions, tmp / "authors")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp / "authors")  # evaluate.py reads and writes relative to the working folder
        theirs = {}
        for model in models:
            authors.get_prediction_file("val", model)
            theirs[model] = authors.eval_prediction("val", model)
    return {"tmp": tmp, "outputs": outputs, "models": models, "answers": answers, "predictions": predictions,
            "subtasks": authors.subtasks, "theirs": theirs}


def kept_text(blink: dict[str, Any], model: str, subtask: str) -> int:
    """Predictions of ``model`` in ``subtask`` that kept their option's text after the gold letter
    ("(C) Point C"): evaluate.py compares strings and counts them wrong; the choice rule reads
    the letter. 34 of the 36,119 predictions keep a text, 15 of them after the gold letter."""
    answers = blink["answers"]
    return sum(1 for i, p in blink["predictions"][model].items()
               if blink_subtask(i) == subtask and p != answers[i] and p.split(" ")[0] == answers[i])


def expected_acc(blink: dict[str, Any], model: str, subtask: str) -> float:
    n = sum(1 for i in blink["answers"] if blink_subtask(i) == subtask)
    return 100 * (blink["theirs"][model][subtask] * n + kept_text(blink, model, subtask)) / n


def test_blink_task_rules_equal_evaluate_py_for_all_19_models(blink: dict[str, Any]) -> None:
    """Every model's letters read by the BLINK tasks' own parser and metric (as the runner calls
    them, on the placeholder records): evaluate.py's accuracy per subtask and its Total, but for
    the predictions that kept their option's text."""
    from mmtasks.config.task_registry import TaskRegistry
    from mmtasks.task import Task

    registry = TaskRegistry.discover()
    tasks = {}
    for subtask in blink["subtasks"]:
        task = Task(*registry.load(blink_task(subtask)))
        tasks[subtask] = (task, {d.doc_id: d for d in task.documents(blink["tmp"] / "data")})
    flipped = 0
    for model in blink["models"]:
        accs = []
        for subtask, (task, docs) in tasks.items():
            scores = []
            for doc_id, doc in docs.items():
                parsed = task.parser(blink["predictions"][model][doc_id], doc.record)
                state = task.state(doc)
                scores.append(state.score(parsed, state.target)["acc"])
            accs.append(sum(scores) / len(scores))
            assert accs[-1] == pytest.approx(expected_acc(blink, model, subtask)), (model, subtask)
            flipped += kept_text(blink, model, subtask)
        if not any(kept_text(blink, model, s) for s in blink["subtasks"]):
            assert sum(accs) / len(accs) == pytest.approx(100 * blink["theirs"][model]["Total"]), model
    assert flipped == 15


@pytest.mark.parametrize("model", REPLAYED if not os.environ.get("MMTASKS_CONFORMANCE_ALL") else
                         sorted({o["model"] for o in blink_outputs()}))
def test_blink_replayed_equals_evaluate_py(blink: dict[str, Any], model: str) -> None:
    """The model's letters replayed through the 14 tasks (preflight, prompt, parser, metric,
    aggregation): each subtask's accuracy and the group's mean are evaluate.py's numbers (but for
    the predictions that kept their option's text); a "(Z)" is no option here: unparsed, wrong
    for both, counted."""
    import mmtasks

    tmp = blink["tmp"]
    replies = write_blink_replies([o for o in blink["outputs"] if o["model"] == model], tmp / f"{model}.jsonl",
                                  "prediction")
    ours = mmtasks.evaluate(tasks="blink", model=f"replay:{replies}", data_dir=tmp / "data", use_cache=False,
                            allow_failures=True, progress=False)
    means = []
    for subtask in blink["subtasks"]:
        means.append(expected_acc(blink, model, subtask))
        assert ours["results"][blink_task(subtask)]["acc"] == pytest.approx(means[-1]), (model, subtask)
    assert ours["groups"]["blink"]["average"] == pytest.approx(sum(means) / len(means)), model
    if not any(kept_text(blink, model, s) for s in blink["subtasks"]):
        assert ours["groups"]["blink"]["average"] == pytest.approx(100 * blink["theirs"][model]["Total"]), model
    choices = blink_choice_counts(blink["outputs"])
    unreadable = Counter(blink_task(blink_subtask(i)) for i, p in blink["predictions"][model].items()
                         if p.split(" ")[0].strip("()") not in LETTERS[:choices[blink_subtask(i)]])
    assert {t: c["unparsed"] for t, c in ours["problems"].items() if c["unparsed"]} == dict(unreadable), model
