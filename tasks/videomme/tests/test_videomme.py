"""Video-MME from a copy of its folder on an include path (the copy's tasks renamed), in a subprocess,
on the bundled sample (tiny videos), with ``--model replay:`` to scores computed by hand from the
records and the scripted replies below; subtitles windowed to the sampled frames; the random baseline."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("av")

from tests.folder_copies import SAMPLE, copy_task_folder, predictions_by_task as predictions, results_of, run_mmtasks  # noqa: E402
from tests.folder_copies import samples_of, text_of  # noqa: E402


#: one reply per question, each read by Video-MME's official extract_characters_regex
VIDEOMME_REPLIES = {
    "001-1": "A",                        # A, gold A: right
    "001-2": "The best answer is C.",    # the prefix goes: C, gold C: right
    "001-3": "Definitely the last one",  # the first capital A-D anywhere: the D of "Definitely", gold D: right
    "002-1": "Based on the video, A",    # the B of "Based", gold A: wrong
    "002-2": "answer: c",                # no capital A-D: unparsed
    "002-3": "The answer B",             # "The answer" goes: B, gold B: right
    "003-1": "I think it is the green one because it lasts for most of the video time overall",  # > 10 words, no A-D: unparsed
    "003-2": "(B)",                      # B, gold B: right
    "003-3": "C",                        # C, gold C: right
}


def test_videomme_from_an_include_path_copy(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    task = copy_task_folder("videomme", tasks)
    subs = "videomme_subtitles_copy"
    pred = predictions(tmp_path / "pred.jsonl", {task: VIDEOMME_REPLIES, subs: VIDEOMME_REPLIES})
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", f"{task},{subs}", "--include-path", str(tasks), "--data-dir", str(SAMPLE),
                        "--model", f"replay:{pred}", "--output-path", str(out)], tmp_path)
    assert proc.returncode == 1, proc.stderr  # two unparsed replies per task are problems
    results = results_of(out)
    for name in (task, subs):
        # right: 001-1, 001-2, 001-3, 002-3, 003-2, 003-3 = 6 of the 7 read (the authors' denominator:
        # the 2 unparsed are left out and counted apart); 6 of 9 counting them wrong
        assert results["results"][name]["acc"] == pytest.approx(100 * 6 / 7)
        assert results["results"][name]["acc_all"] == pytest.approx(100 * 6 / 9)
        assert results["coverage"][name]["unscored"] == {"unparsed": 2}
        assert results["problems"][name]["unparsed"] == 2
        by_duration = results["breakdowns"][name]["duration"]
        assert {k: v["acc"] for k, v in by_duration.items()} == pytest.approx({"short": 100.0, "medium": 50.0, "long": 100.0})
        # lmms-eval's rule (a variant): the same replies, the 2 unread counted wrong
        assert results["variants"][name]["lmms_eval"]["metrics"]["acc"] == pytest.approx(100 * 6 / 9)
    samples = {s["doc_id"]: s for s in samples_of(out, task)}
    content = samples["001-1"]["prompt"][-1]["content"]
    assert [p["type"] for p in content] == ["image"] * 16 + ["text"]  # 32 asked, the 16 frames of the sample video
    assert text_of(samples["001-1"]) == (
        "Select the best answer to the following multiple-choice question based on the video. Respond with only the "
        "letter (A, B, C, or D) of the correct option.\nWhat colour is the screen at the very start of the video?\n"
        "A. Red.\nB. Green.\nC. Blue.\nD. Yellow.\nThe best answer is:")
    with_subs = {s["doc_id"]: s for s in samples_of(out, subs)}
    # one line per frame (the authors' rule): frames 0..15 at 0, 0.5, ... 7.5 s; the first cue with
    # start < t < end: none at 0 s (0 < 0 is false), each cue at three frames
    assert text_of(with_subs["001-1"]).startswith("This video's subtitles are listed below:\n" + "We start with a red screen.\n" * 3
                                                   + "Now it turns blue.\n" * 3 + "Finally yellow.\n" * 3 + "Select the best answer")
    assert text_of(with_subs["003-1"]).startswith("This video's subtitles are listed below:\nNo subtitles available\nSelect")


def test_videomme_subtitles_are_windowed_to_the_sampled_frames(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    copy_task_folder("videomme", tasks)
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "videomme_subtitles_copy", "--include-path", str(tasks), "--data-dir", str(SAMPLE),
                        "--model", "random", "--num-frames", "2", "--output-path", str(out), "--limit", "4"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    samples = {s["doc_id"]: s for s in samples_of(out, "videomme_subtitles_copy")}
    # two frames, the authors' segment middles of 16: s = 7.5, (0 + 8) // 2 = 4 and (8 + 15) // 2 = 11,
    # at 2.0 and 5.5 s; a line per frame from the first cue with start < t < end
    assert text_of(samples["001-1"]).startswith("This video's subtitles are listed below:\nNow it turns blue.\nSelect")
    # 2.0 s is the start of "This part is white." (2.0 < 2.0 is false), 5.5 s within no cue: no line
    assert text_of(samples["002-1"]).startswith("This video's subtitles are listed below:\n\nSelect")
    assert [p.get("timestamp") for p in samples["002-1"]["prompt"][-1]["content"] if p["type"] == "image"] == [2.0, 5.5]
    assert results_of(out)["config"]["video"] == {"num_frames": 2}


def test_videomme_runs_with_random_to_the_end(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "videomme,videomme_subtitles", "--model", "random", "--data-dir", str(SAMPLE),
                        "--output-path", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert set(results_of(out)["results"]) >= {"videomme", "videomme_subtitles"}
