"""MVBench from a copy of its folder on an include path, in a subprocess, on the bundled sample (tiny
videos and a folder of frames), with ``--model replay:`` to scores computed by hand; the frames the
authors' get_index takes; the random baseline."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("av")

from tests.folder_copies import SAMPLE, copy_task_folder, predictions_by_task as predictions, results_of, run_mmtasks  # noqa: E402
from tests.folder_copies import samples_of, text_of  # noqa: E402

#: gold letters of data/sample/mvbench (the right candidate's place) and the scripted reply
MVBENCH = {
    "mvbench_00": ("A", "(A) It turned blue."), "mvbench_01": ("C", "C"),
    "mvbench_02": ("B", "Best option:(B) Moving right to left."),  # the B of "Best" is no standalone letter
    "mvbench_03": ("B", "(A) jumping"), "mvbench_04": ("C", "(C)"), "mvbench_05": ("B", "B"), "mvbench_06": ("A", "A."),
    "mvbench_07": ("C", "(B) on the right"), "mvbench_08": ("A", "(A) left"), "mvbench_09": ("D", "(D) throughout"),
    "mvbench_10": ("C", "I cannot tell."), "mvbench_11": ("B", "(B) 2"), "mvbench_12": ("A", "(A) 1"),
    "mvbench_13": ("C", "(C) cyan"), "mvbench_14": ("B", "(B)"), "mvbench_15": ("A", "(A) red then cyan"),
    "mvbench_16": ("C", "(A) red"), "mvbench_17": ("B", "(B) Turn right."), "mvbench_18": ("C", "(C) green"),
    "mvbench_19": ("C", "(C) The coloured screen."),
}


def test_mvbench_from_an_include_path_copy(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    task = copy_task_folder("mvbench", tasks)
    pred = predictions(tmp_path / "pred.jsonl", {task: {doc: reply for doc, (_, reply) in MVBENCH.items()}})
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", task, "--include-path", str(tasks), "--data-dir", str(SAMPLE),
                        "--model", f"replay:{pred}", "--output-path", str(out)], tmp_path)
    assert proc.returncode == 1, proc.stderr  # one unparsed reply
    results = results_of(out)
    # wrong: 03, 07, 16; unparsed: 10; right: the other 16 of 20
    assert results["results"][task]["acc"] == pytest.approx(80.0)
    assert results["problems"][task]["unparsed"] == 1
    by_task = {k: v["acc"] for k, v in results["breakdowns"][task]["task_type"].items()}
    assert len(by_task) == 20
    assert sorted(k for k, v in by_task.items() if v == 0) == ["Character Order", "Fine-grained Action", "Object Shuffle", "Scene Transition"]
    samples = {s["doc_id"]: s for s in samples_of(out, task)}
    assert {d: s["target"] for d, s in samples.items()} == {d: gold for d, (gold, _) in MVBENCH.items()}
    first = samples["mvbench_00"]
    assert first["prompt"][0]["role"] == "system"
    assert text_of(first) == (
        "\nCarefully watch the video and pay attention to the cause and sequence of events, the detail and movement of "
        "objects, and the action and pose of persons. Based on your observations, select the best option that accurately "
        "addresses the question.\nQuestion: What happened after the screen was green?\nOptions:\n(A) It turned blue.\n"
        "(B) It turned red.\n(C) It turned black.\nOnly give the best option.")
    # Action Sequence's clip is 2-8 s of the 8 s video at 2 fps: frames 4..15, s = 11/16, the authors'
    # get_index int(4 + s/2 + round(s*i)): 16 frames, repeats kept
    times = [p["timestamp"] for p in first["prompt"][-1]["content"] if p["type"] == "image"]
    assert times == [2.0, 2.5, 2.5, 3.0, 3.5, 3.5, 4.0, 4.5, 5.0, 5.0, 5.5, 6.0, 6.0, 6.5, 7.0, 7.0]
    # Episodic Reasoning: a folder of frames at 3 fps, its first 4 s
    assert [p["type"] for p in samples["mvbench_18"]["prompt"][-1]["content"]][:3] == ["image"] * 3


def test_mvbench_runs_with_random_to_the_end(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "mvbench", "--model", "random", "--data-dir", str(SAMPLE),
                        "--output-path", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "mvbench" in results_of(out)["results"]
