"""MMStar from a copy of its folder on an include path (local and Hub layout): replayed replies scored
by hand, the authors' way and the peers'."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.folder_runs import hub_folder, package_unchanged, plugin
from tests.folder_runs import parts_of, results_of, run_copy_target as run_copy, samples_of


@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("mmstar"):
        yield


# The sample (data/sample/mmstar, make_sample.py): gold 0 A, 1 B, 2 A (two options), 3 C, 4 D,
# 5 B (math, geometry), 6 A (math, geometry), 7 B (math, numeric commonsense and calculation)
#: doc -> (reply, the authors' letter, VLMEvalKit's, lmms-eval's)
REPLIES = {
    "0": ("A", "A", "A", "A"),
    "1": ("(B) 2", "B", "B", "B"),
    "2": ("The answer is A", "A", "A", "A"),
    "3": ("Option C", "C", "C", "C"),
    # the authors read the first character ("b"lack); VLMEvalKit the one letter among the last four
    # words; lmms-eval the letter ending the reply
    "4": ("Black absorbs the most light, so D.", "B", "D", "D"),
    # no letter; the option text "4" is in the reply, but the reply is over twice the options' length
    "5": ("The shape has 4 sides.", None, None, None),
    "6": ("a", "A", None, None),                        # the authors lower-case: "a" is A
    # the authors: "i" is no letter; VLMEvalKit: B among the last four words; lmms-eval: "B," is none
    # of its formats, so its fallback (any occurrence) reads B
    "7": ("I think it is B, 5", None, "B", "B"),
}


def check(proc: subprocess.CompletedProcess, out: Path, task: str) -> None:
    assert proc.returncode == 1, proc.stderr  # unparsed replies are problems
    results = results_of(out)
    # the authors: 0, 1, 2, 3 and 6 right: 5 of 8
    assert results["results"][task]["acc"] == pytest.approx(100 * 5 / 8)
    assert results["problems"][task]["unparsed"] == 2
    variants = results["variants"][task]
    # VLMEvalKit: 0, 1, 2, 3, 4 and 7 right: 6 of 8
    assert variants["vlmevalkit"]["metrics"]["acc"] == pytest.approx(100 * 6 / 8)
    # lmms-eval: the same six right, but its average is the mean of the 7 axes' means: geometry 0 of
    # 2, every other axis 1 of 1: 6/7 (85.71), where the question mean is 75.0
    assert variants["lmms_eval"]["metrics"]["acc"] == pytest.approx(100 * 6 / 7)
    assert variants["lmms_eval"]["metrics"]["acc_micro"] == pytest.approx(75.0)
    assert variants["lmms_eval"]["metrics"]["acc_all"] == pytest.approx(100 * 6 / 7)  # every question scored
    rows = results["breakdowns"][task]
    assert {k: v["acc"] for k, v in rows["category"].items()} == pytest.approx({
        "coarse perception": 100.0, "fine-grained perception": 100.0, "instance reasoning": 100.0,
        "logical reasoning": 100.0, "science & technology": 0.0, "math": 100 / 3})
    assert rows["l2_category"]["geometry"]["acc"] == pytest.approx(50.0)
    # lmms-eval's math: the mean of geometry (0) and numeric commonsense (100)
    assert variants["lmms_eval"]["breakdowns"]["category"]["math"]["acc"] == pytest.approx(50.0)
    samples = samples_of(out, task)
    assert {d: s["parsed"] for d, s in samples.items()} == {d: a for d, (_, a, _, _) in REPLIES.items()}
    for i, name in ((2, "vlmevalkit"), (3, "lmms_eval")):
        assert {d: s["extra"]["variants"][name]["unparsed"] for d, s in samples.items()} == {
            d: int(r[i] is None) for d, r in REPLIES.items()}


def rows(task: str) -> list[tuple[str, str, str]]:
    return [(task, d, r) for d, (r, *_) in REPLIES.items()]


def test_mmstar_from_an_include_path_copy_local_data(tmp_path: Path) -> None:
    proc, out = run_copy(tmp_path, "mmstar", "mmstar_copy", rows("mmstar_copy"))
    check(proc, out, "mmstar_copy")
    # the image, the question as the Hub writes it (options inline), the authors' instruction
    assert parts_of(samples_of(out, "mmstar_copy")["2"]) == [
        "<img>", "Which option describes the relation of the shapes correctly?\nOptions: A: The square is left of "
        "the star, and below it., B: The star is left of the square.\nAnswer the question directly."]


def test_mmstar_from_the_hub_layout(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    hub = {"mmstar.yaml": {"path: Lin-Chen/MMStar": f"path: {hub_folder('mmstar', 'hf')}"}}
    proc, out = run_copy(tmp_path, "mmstar", "mmstar_copy", rows("mmstar_copy"), hub=hub)
    check(proc, out, "mmstar_copy")


@pytest.mark.parametrize(("question", "options"), [
    ("What?\nOptions: A: x, B: y, C: z, D: w", {"A": "x", "B": "y", "C": "z", "D": "w"}),
    ("What?\nOptions: A: A cat, sitting on a mat., B: Two dogs, C: 3, 4, and 5, D: None",
     {"A": "A cat, sitting on a mat.", "B": "Two dogs", "C": "3, 4, and 5", "D": "None"}),
    ("Is it?\nOptions: A: yes, B: no", {"A": "yes", "B": "no"}),
    ("Hint: ...\nQuestion: How many?\nChoices:\n(A) 1\n(B) 2\n(C) 3", {"A": "1", "B": "2", "C": "3"}),
    ("Hint: ...\nQuestion: How many?\n(A) 54\n(B) 52", {"A": "54", "B": "52"}),
    ("No options here", {}),
])
def test_the_options_are_read_from_the_question(question: str, options: dict[str, str]) -> None:
    registry, path = plugin("mmstar", "mmstar_scoring.py")
    adapt = registry.adapters.get("mmstar_record", plugins=[path])
    record = adapt({"index": 1, "question": question})
    assert {k: record[k] for k in "ABCD" if k in record} == options
    assert record["question"] == question


@pytest.mark.parametrize(("reply", "letter"), [
    ("B", "B"), ("b) the second", "B"), ("(c)", "C"), ("option d", "D"), ("The answer is c", "C"),
    ("Answer: B", "A"),            # the first character, "a": their rule reads A (a hit when A is the gold)
    ("(", None), ("option ", None), ("", None), ("  \n d", "D"),
])
def test_the_authors_rule(reply: str, letter: str | None) -> None:
    registry, path = plugin("mmstar", "mmstar_scoring.py")
    assert registry.parsers.get("mmstar_authors", plugins=[path]).fn(reply, {}) == letter
