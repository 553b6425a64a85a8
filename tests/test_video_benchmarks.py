"""Video-MME and MVBench, added as task folders only.

Each runs from a copy of its folder on an include path (the copy's tasks renamed), in a
subprocess with the package unchanged, on the bundled sample (data/sample/{videomme,mvbench}:
tiny videos written by scripts/sample_data), with ``--model replay:`` to scores computed by hand
from the records and the scripted replies below.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("av")

from tests.builders import assert_regenerates, sample_generators  # noqa: E402
from tests.folder_copies import SAMPLE, copy_task_folder, results_of, run_mmtasks, samples_of  # noqa: E402

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


def predictions(path: Path, replies: dict[str, dict[str, str]]) -> Path:
    path.write_text("".join(json.dumps({"task": task, "doc_id": doc, "responses": [reply]}) + "\n"
                            for task, by_doc in replies.items() for doc, reply in by_doc.items()), encoding="utf-8")
    return path


def text_of(sample: dict) -> str:
    return "".join(p["text"] for p in sample["prompt"][-1]["content"] if p["type"] == "text")


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


def test_video_benchmarks_run_with_random_to_the_end(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "videomme,videomme_subtitles,mvbench", "--model", "random", "--data-dir", str(SAMPLE),
                        "--output-path", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert set(results_of(out)["results"]) >= {"videomme", "videomme_subtitles", "mvbench"}


@pytest.mark.parametrize("name", ["videomme", "mvbench"])
def test_the_video_samples_regenerate(tmp_path: Path, name: str) -> None:
    (generator,) = sample_generators(name)
    assert_regenerates(generator.generate, tmp_path / name, SAMPLE / name)


def test_the_regeneration_check_compares_the_hub_files_and_the_archives(tmp_path: Path) -> None:
    """A generator that changed a Hub JSON record file, or a text member or a member's name in a zip,
    no longer passes (the check once compared .jsonl and .md files alone)."""
    import zipfile

    (generator,) = sample_generators("mvbench")

    def with_json_changed(dest: Path) -> None:
        generator.generate(dest)
        path = dest / "hub" / "json" / "action_count.json"
        path.write_text(path.read_text(encoding="utf-8").replace('"answer"', '"Answer"', 1), encoding="utf-8")

    with pytest.raises(AssertionError, match="action_count.json"):
        assert_regenerates(with_json_changed, tmp_path / "a", SAMPLE / "mvbench")

    (videomme,) = sample_generators("videomme")

    def with_member_renamed(dest: Path) -> None:
        videomme.generate(dest)
        path = dest / "hub" / "subtitle.zip"
        with zipfile.ZipFile(path) as zf:
            members = [(i, zf.read(i)) for i in zf.infolist()]
        with zipfile.ZipFile(path, "w") as zf:
            for info, data in members:
                info.filename = info.filename.replace("smplVid002b", "smplVid002x")
                zf.writestr(info, data)

    with pytest.raises(AssertionError, match="subtitle.zip"):
        assert_regenerates(with_member_renamed, tmp_path / "b", SAMPLE / "videomme")
