"""MLVU dev (multiple choice) on the bundled sample in the Hub's layout, in a subprocess, with
``--model replay:`` to scores computed by hand (each task's accuracy and M-Avg, the mean of the
seven); the prompt and frames sent; the VLMEvalKit frame variant and the random baseline."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("av")

from tests.folder_copies import SAMPLE, predictions_by_task as predictions, results_of, run_mmtasks  # noqa: E402
from tests.folder_copies import samples_of, text_of  # noqa: E402

#: task -> document (its place in the task's file) -> (gold letter, scripted reply)
REPLIES = {
    "mlvu_dev_plotqa": {"0": ("A", "(A) Red"),
                        "1": ("B", "B. It turns yellow")},  # no ")": the whole reply is compared: wrong
    "mlvu_dev_needle": {"0": ("C", "Best option: (C) Orange")},
    "mlvu_dev_ego": {"0": ("B", "B (Right to left)")},  # the character before the first ")" is "t": wrong
    "mlvu_dev_count": {"0": ("D", "D"), "1": ("A", "A) 2")},
    "mlvu_dev_order": {"0": ("A", "(B) 1->2->3->4")},
    "mlvu_dev_anomaly_reco": {"0": ("D", "(D) Colour flash")},
    "mlvu_dev_topic_reasoning": {"0": ("C", "C")},
}


def test_mlvu_replayed_to_hand_computed_scores(tmp_path: Path) -> None:
    pred = predictions(tmp_path / "pred.jsonl", {t: {d: r for d, (_, r) in docs.items()} for t, docs in REPLIES.items()})
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "mlvu_dev", "--data-dir", str(SAMPLE), "--model", f"replay:{pred}",
                        "--output-path", str(out)], tmp_path)
    assert proc.returncode == 1, proc.stderr  # two replies read as no letter
    results = results_of(out)
    accs = {t: results["results"][t]["acc"] for t in REPLIES}
    assert accs == pytest.approx({"mlvu_dev_plotqa": 50.0, "mlvu_dev_needle": 100.0, "mlvu_dev_ego": 0.0,
                                  "mlvu_dev_count": 100.0, "mlvu_dev_order": 0.0, "mlvu_dev_anomaly_reco": 100.0,
                                  "mlvu_dev_topic_reasoning": 100.0})
    # M-Avg: the mean of the seven task accuracies, 450 / 7 (7 of the 10 questions right: 70 per question)
    assert results["groups"]["mlvu_dev"]["average"] == pytest.approx(450 / 7)
    # lmms-eval's reading (variant lmms_eval): "B. It turns yellow" and "B (Right to left)" start with
    # their letter, right; "(B) 1->2->3->4" still wrong: 6 tasks of 7 at 100, M-Avg 600 / 7
    lmms = {t: results["variants"][t]["lmms_eval"]["metrics"]["acc"] for t in REPLIES}
    assert lmms == pytest.approx({**{t: 100.0 for t in REPLIES}, "mlvu_dev_order": 0.0})
    assert results["groups"]["mlvu_dev"]["variants"]["lmms_eval"] == pytest.approx(600 / 7)
    for task, docs in REPLIES.items():
        samples = {s["doc_id"]: s for s in samples_of(out, task)}
        assert {d: s["target"] for d, s in samples.items()} == {d: gold for d, (gold, _) in docs.items()}
    first = samples_of(out, "mlvu_dev_plotqa")[0]
    assert first["prompt"][0] == {"role": "system", "content": [{"type": "text", "text": (
        "Carefully watch this video and pay attention to every detail. Based on your observations, select the best "
        "option that accurately addresses the question.")}]}
    assert text_of(first) == ("\nQuestion: What colour is the screen when the story begins?\nOptions:\n(A) Red\n(B) Green\n"
                              "(C) Blue\n(D) Yellow\nOnly give the best option.")
    # 8 s at 2 fps, 16 frames: s = 15 / 16, int(s/2 + round(s*i)): 0, 1, 2, 3, 4, 5, 6, 7, 7, 8 ... (repeats kept)
    times = [p["timestamp"] for p in first["prompt"][-1]["content"] if p["type"] == "image"]
    s = 15 / 16
    assert times == [int(s / 2 + round(s * i)) / 2 for i in range(16)]


def test_mlvu_vlmevalkit_frames_and_random(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "mlvu_dev_vlmevalkit", "--model", "random", "--data-dir", str(SAMPLE),
                        "--output-path", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "mlvu_dev_vlmevalkit" in results_of(out)["groups"]
    sample = samples_of(out, "mlvu_dev_needle_vlmevalkit")[0]
    times = [p["timestamp"] for p in sample["prompt"][-1]["content"] if p["type"] == "image"]
    assert times == [int(i * (16 / 65)) / 2 for i in range(1, 65)]
