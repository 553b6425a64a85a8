"""MathVerse testmini, Vision Only, from a copy of its folder (local JSONL and Hub layout): the other problem
versions left out and counted, replayed replies scored by hand with our offline reading and the authors'
quick match, and the authors' two GPT steps with a replayed judge."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.folder_runs import copy_bench_files, hub_folder, package_unchanged, results_of, run_mmtasks, samples_of
from tests.folder_runs import run_copy_target as run_copy

SAMPLE = Path(__file__).resolve().parents[3] / "data" / "sample"
TASK = "mathverse_testmini_vision_only_copy"
GPT = "mathverse_testmini_vision_only_gpt_copy"
LONG = ("We read the two points from the diagram, then the rise over the run gives the slope two, and the line meets "
        "the y axis at one, so putting the slope and the intercept together the line is y = 2x + 1")


@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("mathverse"):
        yield


#: sample_index -> (reply, our reading, right); the Vision Only records' answers: 104 "14", 105 "B" (multiple
#: choice), 106 "2", 107 "y=2x+1", 108 "A" (multiple choice)
REPLIES = {
    "104": ("The longest straw is about 13.9 cm, so the answer is 14.", "14", True),   # after "answer is", "." off
    "105": ("Answer: B", "B", True),
    "106": ("\\boxed{2}", "2", True),
    "107": (LONG, LONG, False),                  # no cue: the last line, not the answer's text (quick match is exact)
    "108": ("I think it is 9", None, False),     # no letter: unparsed
}


def rows(task: str) -> list[tuple[str, str, str]]:
    return [(task, d, r) for d, (r, _, _) in REPLIES.items()]


def check(proc: subprocess.CompletedProcess, out: Path) -> None:
    assert proc.returncode == 1, proc.stderr  # one unparsed reply (108), counted
    res = results_of(out)
    assert res["results"][TASK]["acc"] == pytest.approx(60.0)
    # the four other versions of problem 1 (sample_index 100-103) are left out, counted
    assert res["n-samples"][TASK] == {"original": 9, "effective": 5}
    assert res["coverage"][TASK]["excluded"] == {"other problem version": 4}
    samples = samples_of(out, TASK)
    assert {d: s["parsed"] for d, s in samples.items()} == {d: p for d, (_, p, _) in REPLIES.items()}
    assert {d: s["metrics"]["acc"] for d, s in samples.items()} == {d: 100.0 * ok for d, (_, _, ok) in REPLIES.items()}
    subjects = res["breakdowns"][TASK]["subject"]
    assert {k: v["acc"] for k, v in subjects.items()} == {"Solid Geometry": 100.0, "Plane Geometry": 50.0, "Functions": 50.0}


def test_mathverse_from_the_local_sample(tmp_path: Path) -> None:
    proc, out = run_copy(tmp_path, "mathverse", TASK, rows(TASK))
    check(proc, out)
    parts = samples_of(out, TASK)["105"]["prompt"][0]["content"]
    assert [p["type"] for p in parts] == ["image", "text"]  # the image, then query_wo
    assert parts[1]["text"].startswith("According to the question shown in the image, please directly answer")


def test_mathverse_from_the_hub_layout(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    hub = {"_base.yaml": {"path: AI4Math/MathVerse": f"path: {hub_folder('mathverse', 'hf')}"}}
    proc, out = run_copy(tmp_path, "mathverse", TASK, rows(TASK), hub=hub)
    check(proc, out)


def test_the_two_gpt_steps(tmp_path: Path) -> None:
    """Step 1 extracts, step 2 judges (replayed): 104 "14" 1, 105 "B" "Judgement: 1", 106 "2" 0, 107
    "y = 2x + 1" 1, 108 "9" 0: 3/5, whatever our offline reading says."""
    tasks = tmp_path / "tasks"
    copy_bench_files("mathverse", tasks)
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"task": t, "doc_id": d, "responses": [r]}) + "\n" for t, d, r in rows(GPT)),
                    encoding="utf-8")
    steps = {"104": ["14", "1"], "105": ["Extracted Answer: B", "Judgement: 1"], "106": ["2", "0"],
             "107": ["y = 2x + 1", " 1\n"], "108": ["9", "0"]}
    judge = tmp_path / "judge.jsonl"
    judge.write_text("".join(json.dumps({"task": GPT, "doc_id": d, "responses": r}) + "\n" for d, r in steps.items()),
                     encoding="utf-8")
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", GPT, "--include-path", str(tasks), "--data-dir", str(SAMPLE), "--model",
                        f"replay:{pred}", "--judge", f"replay:{judge}", "--output-path", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert results_of(out)["results"][GPT]["acc"] == pytest.approx(60.0)
    samples = samples_of(out, GPT)
    assert samples["105"]["parsed"] == "B"  # "Extracted Answer: " dropped
    assert {d: s["extra"]["judgement"] for d, s in samples.items()} == {"104": 1, "105": 1, "106": 0, "107": 1, "108": 0}
    step1 = samples["107"]["judge"][0]["prompt"][0]["content"][0]["text"]
    assert step1.startswith("I am providing you a response from a model to a math problem")
    # --trunk_response 30: the reply's last 30 words
    assert step1.endswith("\n\n7.\n\nModel response: '" + " ".join(LONG.split(" ")[-30:]) + "'\nExtracted Answer: ")
    step2 = samples["107"]["judge"][1]["prompt"][0]["content"][0]["text"]
    # the authors' question field is empty on a Vision Only record
    assert step2.endswith("Judgement: 1\n\n[Question]: \n[Standard Answer]: y=2x+1\n[Model_answer] : y = 2x + 1\nJudgement:")
