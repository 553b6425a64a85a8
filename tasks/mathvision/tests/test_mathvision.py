"""MATH-Vision from a copy of its folder (local JSONL and Hub layout), replayed replies scored by hand with
the authors' rules (mathllm/MATH-V evaluation/evaluate.py and utils.py), per subject and level, and the
VLMEvalKit prefetch variant."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.folder_runs import hub_folder, package_unchanged, results_of, samples_of
from tests.folder_runs import run_copy_target as run_copy

pytest.importorskip("latex2sympy2_extended")


@pytest.fixture(autouse=True)
def _package_unchanged():
    with package_unchanged("mathvision"):
        yield


#: (task, id) -> (reply, the authors' reading, right); gold: 1 C (options 3..7), 2 B (options the letters),
#: 3 61, 4 2\sqrt{3}, 5 (1,2); test split: 6 E, 7 12
REPLIES = {
    ("mathvision_testmini_copy", "1"): ("There are 5 squares, so the answer is C.", "c", True),  # ends " C."
    ("mathvision_testmini_copy", "2"): ("\\boxed{A}", "a", False),                     # the boxed letter; gold B
    ("mathvision_testmini_copy", "3"): ("The number is 61.", "61", True),              # a number after "is "
    ("mathvision_testmini_copy", "4"): ("So \\boxed{\\sqrt{12}}", "\\sqrt{12}", True),  # latex2sympy: 2*sqrt(3)
    ("mathvision_testmini_copy", "5"): ("The answer is (2, 1).", "(2,1)", False),      # tuples compared in order
    ("mathvision_test_copy", "6"): ("E", "e", True),
    ("mathvision_test_copy", "7"): ("I think 13", "ithink13", False),                  # spaces dropped, no number read
}


def rows() -> list[tuple[str, str, str]]:
    return [(task, doc, reply) for (task, doc), (reply, _, _) in REPLIES.items()]


def check(proc: subprocess.CompletedProcess, out: Path) -> None:
    assert proc.returncode == 0, proc.stderr
    res = results_of(out)
    assert res["results"]["mathvision_testmini_copy"]["acc"] == pytest.approx(60.0)   # 1, 3, 4 of 5
    assert res["results"]["mathvision_test_copy"]["acc"] == pytest.approx(50.0)       # 6 of 2
    for task in ("mathvision_testmini_copy", "mathvision_test_copy"):
        samples = samples_of(out, task)
        assert {d: s["parsed"] for d, s in samples.items()} == {d: p for (t, d), (_, p, _) in REPLIES.items() if t == task}
        assert {d: s["metrics"]["acc"] for d, s in samples.items()} == {
            d: 100.0 * ok for (t, d), (_, _, ok) in REPLIES.items() if t == task}
    breakdowns = res["breakdowns"]["mathvision_testmini_copy"]
    assert {k: v["acc"] for k, v in breakdowns["subject"].items()} == {
        "counting": 100.0, "logic": 0.0, "arithmetic": 100.0, "metric geometry - length": 100.0, "analytic geometry": 0.0}
    assert {k: v["acc"] for k, v in breakdowns["level"].items()} == {"1": 100.0, "2": 100.0, "3": 0.0, "4": 0.0, "5": 100.0}
    # VLMEvalKit's prefetch: 1 reads C (right), 2 reads A (wrong), the free-form replies are not the answer
    # as a whole (GPT would be asked): 1/5; test: 6 reads E: 1/2
    variants = res["variants"]
    assert variants["mathvision_testmini_copy"]["vlmevalkit_prefetch"]["metrics"]["acc"] == pytest.approx(20.0)
    assert variants["mathvision_test_copy"]["vlmevalkit_prefetch"]["metrics"]["acc"] == pytest.approx(50.0)


def test_mathvision_from_the_local_sample(tmp_path: Path) -> None:
    proc, out = run_copy(tmp_path, "mathvision", "mathvision_testmini_copy,mathvision_test_copy", rows())
    check(proc, out)
    parts = samples_of(out, "mathvision_testmini_copy")["1"]["prompt"][0]["content"]
    # Qwen-VL.py: the image, then geninput's text
    assert [p["type"] for p in parts] == ["image", "text"]
    assert parts[1]["text"] == ('Please solve the problem step by step and put your answer in one "\\boxed{}". If it is a '
                                'multiple choice question, only one letter is allowed in the "\\boxed{}".\nHow many '
                                "squares can you see in the picture?\n<image1>\n(A) 3\n(B) 4\n(C) 5\n(D) 6\n(E) 7\n")
    # options that are the letters themselves are left out (the image shows them)
    text = samples_of(out, "mathvision_testmini_copy")["2"]["prompt"][0]["content"][1]["text"]
    assert text.endswith("seen from above?\n<image1>\n")


def test_mathvision_from_the_hub_layout(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    hub = {"_base.yaml": {"path: MathLLMs/MathVision": f"path: {hub_folder('mathvision', 'hf')}"}}
    proc, out = run_copy(tmp_path, "mathvision", "mathvision_testmini_copy,mathvision_test_copy", rows(), hub=hub)
    check(proc, out)


def test_option_texts_in_dollars_are_read() -> None:
    """An option written "$\\frac{1}{2}$" (as the real options are) equals the reading "\\frac{1}{2}": the
    authors' latex2sympy2 reads the "$" delimiters (their published Random-Chance verdicts count such
    replies right), and so does our parser with its basic clean-up; degrees stay as they were."""
    from tests.folder_runs import plugin

    registry, path = plugin("mathvision", "mathvision.py")
    acc = registry.metrics.get("mathvision_acc", plugins=[path])
    options = ["$\\frac{1}{2}$", "$\\frac{1}{3}$", "$6+\\pi$", "$1: 4: 9$", "3"]

    def score(reading: str, gold: str) -> float:
        return acc(reading, gold, {"options": options, "answer": gold})

    assert score("\\frac{1}{2}", "A") == 100.0
    assert score("\\frac{1}{3}", "A") == 0.0
    assert score("6+\\pi", "C") == 100.0
    assert score("1:4:9", "D") == 100.0
