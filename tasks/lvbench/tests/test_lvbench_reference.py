"""LVBench against its authors' scoring and lmms-eval's prompt, run verbatim.

- ``polish_answer`` (the authors' ``lvbench/utils/answer_util.py``, from MMTASKS_REFERENCE_DIR: no
  LICENSE file upstream) reads tricky replies as ``lvbench_polish`` does, and the authors'
  ``compute_accuracy`` gives, on the answers read, the accuracy and capability accuracies of the
  ``lvbench_capabilities`` aggregator.
- lmms-eval's ``lvbench_doc_to_text`` (bundled) gives each sample's text, and its
  ``lvbench_process_results`` (its ``extract_mcq_answer``, bundled) scores tricky replies as the
  variant ``lmms_eval``'s ``lvbench_lmms_eval`` does.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from types import ModuleType

import pytest

from tests.folder_copies import SAMPLE, run_mmtasks, samples_of, text_of
from tests.reference_code import load_file as load, load_reference, reference_dir_file

FOLDER = Path(__file__).resolve().parents[1]
REFERENCE = Path(__file__).parent / "reference"


def ours() -> ModuleType:
    return load(FOLDER / "lvbench_scoring.py", "lvbench_scoring_under_test")


def authors(name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The authors' answer_util.py or compute_accuracy.py from MMTASKS_REFERENCE_DIR (jsonlines,
    which compute_accuracy imports, stood in by a reader of JSON lines)."""
    path = reference_dir_file(name, "github.com/THUDM/LVBench at f998d95, no LICENSE file: not bundled")
    stand_in = types.ModuleType("jsonlines")

    class _Reader:
        def __init__(self, path: str) -> None:
            self.path = path

        def __enter__(self) -> "_Reader":
            return self

        def __exit__(self, *exc: object) -> None:
            return None

        def __iter__(self):  # type: ignore[no-untyped-def]
            with open(self.path, encoding="utf-8") as fh:
                return iter([json.loads(line) for line in fh if line.strip()])

    stand_in.open = _Reader  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "jsonlines", stand_in)
    return load(path, f"reference_lvbench_{name[:-3]}")


#: (reply, what polish_answer reads)
REPLIES = [
    ("A", "A"), ("(B) Green", "B"), ("B) Green", "B"), ("The answer is (C).", "C"), ("Answer: C", "A"),
    ("D. Left to right", "D"), ("  (D)  ", "D"), ("Grey (C)", "C"), ("b", "b"), ("", ""), ("()", ""),
    ("The best option is D", "T"), ("(  A  ) red", "A"), ("C\nbecause", "C"), ("option(B", "B"),
    ("((B) Green", ""),  # split("(")[1]: the empty text between the two parentheses, not "B"
]


@pytest.mark.parametrize("reply, expected", REPLIES)
def test_replies_by_hand(reply: str, expected: str) -> None:
    assert ours().polish(reply) == expected
    assert ours().lvbench_polish(reply, {}) == (expected if expected in ("A", "B", "C", "D") else None)


@pytest.mark.parametrize("reply, expected", REPLIES)
def test_replies_as_the_authors_polish_answer(monkeypatch: pytest.MonkeyPatch, reply: str, expected: str) -> None:
    assert authors("answer_util.py", monkeypatch).polish_answer(reply) == ours().polish(reply) == expected


def test_figures_as_the_authors_compute_accuracy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = authors("compute_accuracy.py", monkeypatch)
    meta = SAMPLE / "lvbench" / "video_info.meta.jsonl"
    replies = {"101": "(A) Red", "102": "Answer: C", "103": "D. Left", "201": "The answer is (B)", "202": "b",
               "301": "B) 00:04", "302": "Grey (C)"}
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({uid: ours().polish(r) for uid, r in replies.items()}), encoding="utf-8")
    theirs = module.compute_accuracy(str(answers), str(meta))
    assert theirs["acc"] == pytest.approx(5 / 7)
    codes = ours().CAPABILITIES
    assert {codes[k]: v for k, v in theirs.items() if k != "acc"} == pytest.approx(
        {"ER": 1.0, "EU": 0.0, "KIR": 1.0, "TG": 0.5, "Rea": 1.0, "Sum": 0.0})


def lmms_eval(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """lmms-eval's lvbench/utils.py functions (bundled), their import of mcq_extract given the bundled copy."""
    extract = load_reference("lmms_eval_mcq_extract_75571cf")
    for name in ("lmms_eval", "lmms_eval.tasks", "lmms_eval.tasks._task_utils"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, "lmms_eval.tasks._task_utils.mcq_extract", extract)
    return load(REFERENCE / "lmms_eval_lvbench.py", "reference_lmms_eval_lvbench")


@pytest.mark.parametrize("reply", [r for r, _ in REPLIES] + ["Definitely C", "I choose A", "b", "E", "xBx", "C or D? D."])
@pytest.mark.parametrize("gold", ["A", "B", "C", "D"])
def test_replies_as_lmms_evals_process_results(monkeypatch: pytest.MonkeyPatch, reply: str, gold: str) -> None:
    theirs = lmms_eval(monkeypatch).lvbench_process_results({"answer": gold}, [reply])["lvbench_score"]
    assert (ours().lvbench_lmms_eval(reply, {}) == gold) is theirs


def test_prompts_as_lmms_evals_doc_to_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = lmms_eval(monkeypatch)
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "lvbench", "--model", "random", "--data-dir", str(SAMPLE), "--output-path", str(out)],
                       tmp_path)
    assert proc.returncode == 0, proc.stderr
    samples = {s["doc_id"]: s for s in samples_of(out, "lvbench")}
    lines = [json.loads(line) for line in (SAMPLE / "lvbench" / "video_info.meta.jsonl").read_text(encoding="utf-8").splitlines()]
    questions = [qa for line in lines for qa in line["qa"]]
    assert len(questions) == len(samples) == 7
    for qa in questions:
        assert text_of(samples[str(qa["uid"])]) == module.lvbench_doc_to_text(qa, dict(module.LMMS_EVAL_SPECIFIC_KWARGS))
