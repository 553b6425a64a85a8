"""MathVista testmini from a copy of its folder (local JSONL and Hub layout), replayed replies scored by
hand with the authors' rules (lupantech/MathVista evaluation/extract_answer.py, calculate_score.py),
the two scoring variants, the skills breakdown, and the LLM extractor (a replayed judge)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.folder_runs import copy_bench_files, hub_folder, package_unchanged, results_of, run_mmtasks, samples_of
from tests.folder_runs import run_copy_target as run_copy

SAMPLE = Path(__file__).resolve().parents[3] / "data" / "sample"


@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("mathvista"):
        yield


#: pid -> (reply, our extraction, right): the sample's gold answers are 1 "60" (choices 30/45/60/90),
#: 2 "3", 3 "7.5" (precision 1), 4 "1.45" (precision 2), 5 "[2007, 2008]", 6 "Yes" (Yes/No), 7 "12",
#: 8 "pentagon" (triangle/square/pentagon)
REPLIES = {
    "1": ("C", "C", True),                                      # ours: a bare letter; C -> "60"
    "2": ("3", "3", True),                                      # int("3")
    "3": ("7.5", "7.5", True),                                  # float("7.5"); round(7.5, 1)
    "4": ('The answer is "1.449".', "1.449", True),             # the quick rule; round(1.449, 2) = 1.45
    "5": ("The peak is between 2007 and 2008.", None, False),   # no rule, no [...]: unparsed, wrong
    "6": ("Yes", "Yes", True),                                  # one of the choices
    "7": ("The answer is 13", "13", False),                     # ours: after "answer is"; gold 12
    "8": ("(B) square", "B", False),                            # ours: the letter B -> "square"
}


def rows(task: str = "mathvista_testmini_copy") -> list[tuple[str, str, str]]:
    return [(task, pid, reply) for pid, (reply, _, _) in REPLIES.items()]


def check(proc: subprocess.CompletedProcess, out: Path) -> None:
    assert proc.returncode == 1, proc.stderr  # one unparsed reply (pid 5), counted
    res = results_of(out)
    assert res["results"]["mathvista_testmini_copy"]["acc"] == pytest.approx(100 * 5 / 8)
    samples = samples_of(out, "mathvista_testmini_copy")
    assert {d: s["parsed"] for d, s in samples.items()} == {d: p for d, (_, p, _) in REPLIES.items()}
    assert {d: s["metrics"]["acc"] for d, s in samples.items()} == {d: 100.0 * ok for d, (_, _, ok) in REPLIES.items()}
    breakdowns = res["breakdowns"]["mathvista_testmini_copy"]
    assert {k: v["acc"] for k, v in breakdowns["task"].items()} == pytest.approx({
        "figure question answering": 50.0, "geometry problem solving": 50.0, "math word problem": 100.0,
        "visual question answering": 100.0, "textbook question answering": 0.0})
    # each question in each of its skills: arithmetic is 2, 4, 7 (2 right); geometry 1, 7; statistical 3, 5
    assert {k: v["acc"] for k, v in breakdowns["skills"].items()} == pytest.approx({
        "algebraic reasoning": 100.0, "arithmetic reasoning": 200 / 3, "geometry reasoning": 50.0,
        "logical reasoning": 100.0, "numeric commonsense": 100.0, "scientific reasoning": 0.0,
        "statistical reasoning": 50.0})
    assert {k: v["n"] for k, v in breakdowns["skills"].items()} == {
        "algebraic reasoning": 1, "arithmetic reasoning": 3, "geometry reasoning": 2, "logical reasoning": 1,
        "numeric commonsense": 1, "scientific reasoning": 1, "statistical reasoning": 2}
    variants = res["variants"]["mathvista_testmini_copy"]
    # lmms-eval: the stripped reply, no quick rule: only 2 ("3") and 6 ("Yes") are read; 3 ("7.5") is read but
    # round(7.5, 1.0) raises: wrong. 2/8
    assert variants["lmms_eval"]["metrics"]["acc"] == pytest.approx(25.0)
    # VLMEvalKit's prefetch: 1 (C), 2, 3 (equal numbers), 6 (the text "yes"); 8 reads B (wrong); 4/8
    assert variants["vlmevalkit_prefetch"]["metrics"]["acc"] == pytest.approx(50.0)


def test_mathvista_from_the_local_sample(tmp_path: Path) -> None:
    proc, out = run_copy(tmp_path, "mathvista", "mathvista_testmini_copy", rows())
    check(proc, out)
    sample = samples_of(out, "mathvista_testmini_copy")["1"]
    parts = sample["prompt"][0]["content"]
    # the image, then the record's query (the authors' prompt)
    assert [p["type"] for p in parts] == ["image", "text"]
    assert parts[1]["text"].startswith("Hint: Please answer the question and provide the correct option letter")


def test_mathvista_from_the_hub_layout(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    hub = {"_base.yaml": {"path: AI4Math/MathVista": f"path: {hub_folder('mathvista', 'hf')}"}}
    proc, out = run_copy(tmp_path, "mathvista", "mathvista_testmini_copy", rows(), hub=hub)
    check(proc, out)


def test_the_llm_extractor_reads_what_the_rules_leave(tmp_path: Path) -> None:
    """The authors' pipeline: their rules read 2, 3, 4 and 6; the judge (replayed) extracts the others:
    1 "C" (right), 5 "[2007, 2008]" (right), 7 "13" (wrong), 8 "B" (wrong): 6/8."""
    tasks = tmp_path / "tasks"
    copy_bench_files("mathvista", tasks)
    task = "mathvista_testmini_gpt_copy"
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"task": t, "doc_id": d, "responses": [r]}) + "\n" for t, d, r in rows(task)),
                    encoding="utf-8")
    extractions = {"1": "C", "5": "[2007, 2008]", "7": "13", "8": " B\n"}
    judge = tmp_path / "judge.jsonl"
    judge.write_text("".join(json.dumps({"task": task, "doc_id": d, "responses": [r]}) + "\n"
                             for d, r in extractions.items()), encoding="utf-8")
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", task, "--include-path", str(tasks), "--data-dir", str(SAMPLE),
                        "--model", f"replay:{pred}", "--judge", f"replay:{judge}", "--output-path", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert results_of(out)["results"][task]["acc"] == pytest.approx(75.0)
    samples = samples_of(out, task)
    assert {d for d, s in samples.items() if s["judge"]} == set(extractions)
    assert samples["8"]["parsed"] == "B" and samples["8"]["read_by"] == "judge"
    # the judge saw the authors' extraction prompt: their demo prompt, the query, the reply, "Extracted answer: "
    prompt = samples["7"]["judge"][0]["prompt"][0]["content"][0]["text"]
    assert prompt.startswith("Please read the following example. Then extract the answer")
    assert prompt.endswith("(Unit: cm)\n\nThe answer is 13\n\nExtracted answer: ")


def test_our_offline_reading() -> None:
    """Ours, offline (README.md): the cue "answer is" / "答案是", a leading letter or a choice's text, else the
    reply's last "(X)" among the choices' letters; the last number; the last [...]."""
    from tests.folder_runs import plugin

    registry, path = plugin("mathvista", "mathvista.py")
    read = registry.parsers.get("mathvista_extract", plugins=[path]).fn
    mc = {"question_type": "multi_choice", "answer_type": "text", "choices": ["5", "6", "7", "8"]}
    assert read("所以，C的面积 = 5 + 3 = 8。\n\n所以，答案是 (D) 8。", mc) == "D"
    assert read("It is (A) or maybe (C); I pick (C) here", mc) == "C"        # no cue: the last "(X)"
    assert read("It is (E), surely", mc) is None                               # E is no choice of four
    assert read("The answer is 7", mc) == "7"                                  # a choice's text
    assert read("I cannot tell", mc) is None
    integer = {"question_type": "free_form", "answer_type": "integer", "choices": None}
    assert read("First 1,200 then 3, so the final answer is 1,204.", integer) == "1204"
    assert read("twelve", integer) is None
    lst = {"question_type": "free_form", "answer_type": "list", "choices": None}
    assert read("Either [1, 2] or [2007, 2008]", lst) == "[2007, 2008]"
