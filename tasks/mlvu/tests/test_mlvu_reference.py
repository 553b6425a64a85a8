"""MLVU against its authors' template and VLMEvalKit's copy of it, run verbatim.

- Answers: ``check_ans`` (the authors' ``choice_bench.py``, from MMTASKS_REFERENCE_DIR: no
  license upstream) and VLMEvalKit's ``check_ans_with_model`` (bundled; its LLM matcher stood in
  by "no option") accept exactly the tricky replies ``mlvu_check`` reads as the right letter.
- Prompt and target: ``qa_template`` (the authors' and VLMEvalKit's) gives the text and the right
  letter each sample of a run on the bundled sample has.
- lmms-eval (bundled, MIT): ``extract_characters_regex`` (its ``extract_mcq_answer``) reads tricky
  replies as the variant ``lmms_eval``'s ``mlvu_lmms_eval`` does, and ``mlvu_aggregate_results_dev``
  gives the group's M-Avg under it.
- Frames: the authors' ``MLVU.get_index`` (no bound, 16 segments) gives the frames ``sampling:
  centers`` sends, for videos of 2 to 100,000 frames.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from types import ModuleType

import pytest

from mmtasks.config.task_config import VideoConfig
from mmtasks.documents.video import VideoInfo, sample_indices
from tests.folder_copies import SAMPLE, results_of, run_mmtasks, samples_of, text_of
from tests.reference_code import load_file as load, load_reference, reference_dir_file

FOLDER = Path(__file__).resolve().parents[1]
REFERENCE = Path(__file__).parent / "reference"
TASKS = {"mlvu_dev_plotqa": "1_plotQA", "mlvu_dev_needle": "2_needle", "mlvu_dev_ego": "3_ego", "mlvu_dev_count": "4_count",
         "mlvu_dev_order": "5_order", "mlvu_dev_anomaly_reco": "6_anomaly_reco", "mlvu_dev_topic_reasoning": "7_topic_reasoning"}


def ours() -> ModuleType:
    return load(FOLDER / "mlvu_answer.py", "mlvu_answer_under_test")


def vlmevalkit() -> ModuleType:
    return load(REFERENCE / "vlmevalkit_mlvu.py", "reference_vlmevalkit_mlvu")


def authors(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The authors' choice_bench.py from MMTASKS_REFERENCE_DIR, torch and torchvision stood in (not used by the parts run)."""
    path = reference_dir_file("choice_bench.py", "github.com/JUNJIE99/MLVU evaluation/multiple_choice_evaluation/ at fd060c1, no license: not bundled")
    data = types.ModuleType("torch.utils.data")
    data.Dataset = object  # type: ignore[attr-defined]
    torchvision = types.ModuleType("torchvision")
    torchvision.transforms = types.ModuleType("torchvision.transforms")  # type: ignore[attr-defined]
    for name, module in {"torch": types.ModuleType("torch"), "torch.utils": types.ModuleType("torch.utils"),
                         "torch.utils.data": data, "torchvision": torchvision,
                         "torchvision.transforms": torchvision.transforms}.items():  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, name, module)
    return load(path, "reference_mlvu_choice_bench")


#: (reply, right?) with the gold "(B) ..." of four options
REPLIES = [
    ("B", True), ("(B) Green", True), ("B) Green", True), ("Best option: (B) Green", True), ("B.", False),
    ("B. Green", False), (" B", False), ("B\n", False), ("b", False), ("B (Green)", False), (")B", False),
    ("(A) Red, not (B)", False), ("The answer is (B).", True), ("(C)", False), ("", False), ("Option B", False),
    ("(b) Green", False),  # the letter before ")" compared as it is: "b" is not "B"
]


@pytest.mark.parametrize("reply, right", REPLIES)
def test_replies_as_vlmevalkits_copy_of_check_ans(reply: str, right: bool) -> None:
    doc = {"candidates": ["Red", "Green", "Blue", "Yellow"]}
    assert (ours().mlvu_check(reply, doc) == "B") is right
    item = {"answer": "B", "candidates": str(doc["candidates"])}
    assert vlmevalkit().check_ans_with_model(reply, "(B) Green", None, item) is right


@pytest.mark.parametrize("reply, right", REPLIES)
def test_replies_as_the_authors_check_ans(monkeypatch: pytest.MonkeyPatch, reply: str, right: bool) -> None:
    assert authors(monkeypatch).check_ans(pred=reply, gt="(B) Green") is right


def records() -> dict[str, list[dict]]:
    return {task: json.loads((SAMPLE / "mlvu" / "MLVU" / "json" / f"{stem}.json").read_text(encoding="utf-8"))
            for task, stem in TASKS.items()}


def run_samples(tmp_path: Path) -> dict[str, list[dict]]:
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "mlvu_dev", "--model", "random", "--data-dir", str(SAMPLE), "--output-path", str(out)],
                       tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "mlvu_dev" in results_of(out)["groups"]
    return {task: samples_of(out, task) for task in TASKS}


def check_prompts(template, samples: dict[str, list[dict]]) -> None:
    for task, recs in records().items():
        assert len(samples[task]) == len(recs)
        for sample, rec in zip(samples[task], recs):
            question, answer = template(rec)
            assert text_of(sample) == "\n" + question + "\nOnly give the best option."
            assert sample["target"] == answer[1]


def test_prompts_and_targets_as_vlmevalkits_qa_template(tmp_path: Path) -> None:
    template = vlmevalkit().MLVU_MCQ()
    check_prompts(lambda rec: template.qa_template({**rec, "candidates": str(rec["candidates"])}), run_samples(tmp_path))


def test_prompts_and_targets_as_the_authors_qa_template(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dataset = authors(monkeypatch).MLVU.__new__(authors(monkeypatch).MLVU)
    check_prompts(dataset.qa_template, run_samples(tmp_path))


CASES = [(n, fps) for n in (2, 7, 16, 17, 31, 240, 1001, 14_399, 100_000) for fps in (2.0, 25.0, 30000 / 1001)]


def our_frames(n: int, fps: float) -> list[int]:
    info = VideoInfo(duration=n / fps, frames=n, fps=fps, width=32, height=32)
    return sample_indices(info, VideoConfig(num_frames=16, sampling="centers"))


def test_the_frames_by_hand() -> None:
    # 240 frames: s = 239 / 16 = 14.9375; int(7.46875 + round(14.9375 i))
    assert our_frames(240, 2.0) == [int(239 / 32 + round(239 / 16 * i)) for i in range(16)]
    assert our_frames(240, 2.0)[:3] == [7, 22, 37]
    # 7 frames: s = 6 / 16 = 0.375, int(0.1875 + round(0.375 i)), repeats kept; round is numpy's and
    # Python's, half to even: round(1.5) = 2 (i = 4), round(4.5) = 4 (i = 12)
    assert our_frames(7, 2.0) == [0, 0, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 6]


@pytest.mark.parametrize("n, fps", CASES)
def test_the_frames_are_the_authors_get_index(monkeypatch: pytest.MonkeyPatch, n: int, fps: float) -> None:
    module = authors(monkeypatch)
    dataset = module.MLVU.__new__(module.MLVU)
    dataset.num_segments = 16  # the authors' VideoChat2 script's num_frame
    theirs = dataset.get_index(None, fps, n - 1, first_idx=0)
    assert our_frames(n, fps) == [int(i) for i in theirs]


def lmms_eval(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """lmms-eval's mlvu/utils.py functions (bundled), their import of mcq_extract given the bundled copy."""
    extract = load_reference("lmms_eval_mcq_extract_75571cf")
    for name in ("lmms_eval", "lmms_eval.tasks", "lmms_eval.tasks._task_utils"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, "lmms_eval.tasks._task_utils.mcq_extract", extract)
    return load(REFERENCE / "lmms_eval_mlvu.py", "reference_lmms_eval_mlvu")


LMMS_REPLIES = ["B", "(B) Green", "B) Green", "Best option: (B) Green", "B.", "B. Green", " B", "b", "B (Green)", ")B",
                "(A) Red, not (B)", "The answer is (B).", "(C)", "", "Option B", "Definitely C", "Answer: C", "I choose A",
                "E", "xBx", "C or D? D.", "Best option: (\nA"]


@pytest.mark.parametrize("reply", LMMS_REPLIES)
def test_replies_as_lmms_evals_reading(monkeypatch: pytest.MonkeyPatch, reply: str) -> None:
    theirs = lmms_eval(monkeypatch).extract_characters_regex(reply)
    mine = ours().mlvu_lmms_eval(reply, {"candidates": ["a", "b", "c", "d"]})
    assert (mine or "") == theirs


def test_m_avg_as_lmms_evals_aggregate(monkeypatch: pytest.MonkeyPatch) -> None:
    module = lmms_eval(monkeypatch)
    from tasks.mlvu.tests.test_mlvu import REPLIES

    names = {"mlvu_dev_plotqa": "plotQA", "mlvu_dev_needle": "needle", "mlvu_dev_ego": "ego", "mlvu_dev_count": "count",
             "mlvu_dev_order": "order", "mlvu_dev_anomaly_reco": "anomaly_reco", "mlvu_dev_topic_reasoning": "topic_reasoning"}
    results, means = [], []
    for task, docs in REPLIES.items():
        right = []
        for doc_id, (gold, reply) in docs.items():
            doc = {"question": f"{task}-{doc_id}", "task_type": names[task], "answer": gold}
            results.append(module.mlvu_process_results(doc, [reply])["mlvu_percetion_score"])
            right.append(ours().mlvu_lmms_eval(reply, {"candidates": ["a", "b", "c", "d"]}) == gold)
        means.append(100 * sum(right) / len(right))
    assert module.mlvu_aggregate_results_dev(results) == pytest.approx(sum(means) / len(means)) == pytest.approx(600 / 7)
