"""RealWorldQA from a copy of its folder on an include path (local and Hub layout), replayed replies
scored by hand; the task's reading and its variants against lmms-eval's and VLMEvalKit's code run
verbatim (reference/ beside this file)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import ModuleType

import pytest

from tests.folder_runs import hub_folder, package_unchanged, parts_of, plugin, results_of, samples_of
from tests.folder_runs import run_copy_target as run_copy
from tests.reference_code import load_reference


REFERENCE = Path(__file__).parent / "reference"


@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("realworldqa"):
        yield


# --- the sample replayed -------------------------------------------------------------------------

#: doc -> (reply, task's reading, lmms_eval_1233094's, vlmevalkit's); golds 0 C, 1 A, 2 "3", 3 A, 4 "No"
REPLIES = {
    # "the answer is" outranks "(C)" in lmms-eval; the old rule wants the bare letter; VLMEvalKit's one letter
    "0": ("The answer is (C).", "C", "the answer is c", "C"),
    # no letter: lmms-eval's fallback takes the B of "Blue"; the old rule and VLMEvalKit read the option text
    "1": ("Blue", "B", "a", "A"),
    # an open question: only the old rule turns the number word into a digit
    "2": ("three", "three", "3", "three"),
    # "Answer: A": the old rule keeps the whole reply
    "3": ("Answer: A", "A", "answer a", "A"),
    "4": ("No.", "no", "no", "no"),
}
#: the acc each reading gives (hand-computed from the columns above against the golds)
ACC = {"task": 60.0, "lmms_eval_1233094": 60.0, "vlmevalkit": 80.0}


def rows() -> list[tuple[str, str, str]]:
    return [("realworldqa_copy", d, r) for d, (r, *_) in REPLIES.items()]


def check(proc: subprocess.CompletedProcess, out: Path) -> None:
    assert proc.returncode == 0, proc.stderr
    results = results_of(out)
    assert results["results"]["realworldqa_copy"]["acc"] == pytest.approx(ACC["task"])
    variants = results["variants"]["realworldqa_copy"]
    for name in ("lmms_eval_1233094", "vlmevalkit"):
        assert variants[name]["metrics"]["acc"] == pytest.approx(ACC[name]), name
    samples = samples_of(out, "realworldqa_copy")
    assert {d: s["parsed"] for d, s in samples.items()} == {d: p for d, (_, p, _, _) in REPLIES.items()}
    # (choice: 0 right, 1 wrong, 3 right; open: 2 wrong, 4 right)
    by_kind = results["breakdowns"]["realworldqa_copy"]["kind"]
    assert {k: (round(v["acc"], 2), v["n"]) for k, v in by_kind.items()} == {"choice": (66.67, 3), "open": (50.0, 2)}
    assert samples["1"]["extra"]["variants"]["vlmevalkit"]["read_by"] == "option_text"


def test_realworldqa_from_the_local_sample(tmp_path: Path) -> None:
    proc, out = run_copy(tmp_path, "realworldqa", "realworldqa_copy", rows())
    check(proc, out)
    # the image, then the question as the record holds it (its options and instruction included)
    assert parts_of(samples_of(out, "realworldqa_copy")["2"]) == [
        "<img>", "How many shapes are in the picture?\nPlease answer directly with a single word or number."]


def test_realworldqa_from_the_hub_layout(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    hub = {"realworldqa.yaml": {"path: lmms-lab/RealWorldQA": f"path: {hub_folder('realworldqa', 'hf')}"}}
    proc, out = run_copy(tmp_path, "realworldqa", "realworldqa_copy", rows(), hub=hub)
    check(proc, out)


# --- conformance with the peers' code ------------------------------------------------------------

def load(name: str) -> ModuleType:
    return load_reference(name, REFERENCE)


THREE = ("Which way is the car turning?\nA. Left\nB. Straight\nC. Right\n"
         "Please answer directly with only the letter of the correct option and nothing else.")
FOUR = ("How far is the truck?\nA. 5 meters\nB. 15 meters\nC. 50 meters\nD. 150 meters\n"
        "Please answer directly with only the letter of the correct option and nothing else.")
OPEN = "How many traffic lights are visible?\nPlease answer directly with a single word or number."
#: (question, gold, reply): replies where the three readings disagree, or a rule has an edge
CASES = [
    (THREE, "C", "C"), (THREE, "C", "C."), (THREE, "C", "(C)"), (THREE, "C", "c"), (THREE, "C", "Right"),
    (THREE, "C", "right"), (THREE, "C", "The answer is C"), (THREE, "C", "The answer is (C)."),
    (THREE, "C", "C) Right"), (THREE, "C", "Answer: C"), (THREE, "A", "A. Left"), (THREE, "A", "Left"),
    (THREE, "B", "Straight ahead"), (THREE, "B", "Blue"), (THREE, "A", "I would say A, not B or C"),
    (THREE, "B", "B is the answer since the car is going straight ahead"), (THREE, "A", "A B"),
    (THREE, "C", "The car turns right, so the correct option is C."), (THREE, "A", ""),
    (THREE, "C", "Cannot determine the answer"), (THREE, "C", "**C**"), (THREE, "A", "Option A"),
    (THREE, "B", "The correct answer is **B**"), (THREE, "C", "I choose C"), (THREE, "A", "答案是A"),
    (THREE, "C", "B. No wait, the answer is C"), (THREE, "A", "The answer is A or C"), (THREE, "C", "A or (C)"),
    (FOUR, "B", "B"), (FOUR, "B", "15 meters"), (FOUR, "C", "50 meters."), (FOUR, "D", "150 meters"),
    (FOUR, "B", "About 15 meters (B)"), (FOUR, "D", "D: 150 meters"),
    (OPEN, "3", "3"), (OPEN, "3", "3."), (OPEN, "3", "three"), (OPEN, "3", "Three."), (OPEN, "3", " 3 "),
    (OPEN, "0", "zero"), (OPEN, "3", "There are 3."), (OPEN, "Downhill", "downhill"),
    (OPEN, "Downhill", "Downhill..."), (OPEN, "3", "3 traffic lights"), (OPEN, "3.5", "3.5"), (OPEN, "3.5", "3.5 m."),
]


def doc_of(question: str, gold: str) -> dict:
    registry, path = plugin("realworldqa", "realworldqa_scoring.py")
    adapt = registry.adapters.get("realworldqa_options", plugins=[path])
    return adapt({"question": question, "answer": gold})


def ours(parser_name: str, question: str, gold: str, reply: str) -> float:
    registry, path = plugin("realworldqa", "realworldqa_scoring.py")
    doc = doc_of(question, gold)
    parsed = registry.parsers.get(parser_name, plugins=[path]).fn(reply, doc)
    match = registry.metrics.get("realworldqa_match", plugins=[path])
    return match(parsed, gold, doc) / 100.0


@pytest.mark.parametrize(("question", "gold", "reply"), CASES)
def test_the_task_reads_as_lmms_eval_75571cf(question: str, gold: str, reply: str, capsys) -> None:
    reference = load("realworldqa_utils_75571cf")
    theirs = reference.realworldqa_process_results({"question": question, "answer": gold}, [reply])["exact_match"]
    assert ours("realworldqa_lmms_eval", question, gold, reply) == theirs


@pytest.mark.parametrize(("question", "gold", "reply"), CASES)
def test_the_variant_lmms_eval_1233094_reads_as_its_filters(question: str, gold: str, reply: str, capsys) -> None:
    reference = load("realworldqa_utils_1233094")
    theirs = reference.score({"question": question, "answer": gold}, reply)  # (it prints each prediction)
    assert ours("realworldqa_lmms_eval_1233094", question, gold, reply) == theirs


@pytest.mark.parametrize(("question", "gold", "reply"), [c for c in CASES if c[0] != OPEN])
def test_the_variant_vlmevalkit_reads_as_can_infer(question: str, gold: str, reply: str) -> None:
    reference = load_reference("vlmevalkit_matching_util_e8e78f0")
    registry, path = plugin("realworldqa", "realworldqa_scoring.py")
    doc = doc_of(question, gold)
    theirs = reference.can_infer(reply, dict(doc["options"]))
    parsed = registry.parsers.get("realworldqa_vlmevalkit", plugins=[path]).fn(reply, doc)
    assert parsed == (theirs or None)


def test_the_cases_tell_the_readings_apart() -> None:
    """Each variant scores some of the tricky replies differently from the task's reading."""
    task = [ours("realworldqa_lmms_eval", *c) for c in CASES]
    for name in ("realworldqa_lmms_eval_1233094", "realworldqa_vlmevalkit"):
        assert [ours(name, *c) for c in CASES] != task, name
