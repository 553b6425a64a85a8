"""LongVideoBench on the bundled sample (tiny videos, both subtitle forms), in a subprocess, with
``--model replay:`` to scores computed by hand; the frames and lines each prompt interleaves; the
task variants and the random baseline."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("av")

from tests.folder_copies import SAMPLE, predictions_by_task as predictions, results_of, run_mmtasks  # noqa: E402
from tests.folder_copies import samples_of  # noqa: E402

#: gold letters of data/sample/longvideobench and the scripted replies
REPLIES = {
    "lvbSmpl001_0": ("A", "The answer is A."),
    "lvbSmpl001_1": ("B", "Definitely B"),  # the D of "Definitely": wrong
    "lvbSmpl002_0": ("C", "E. Blue"),  # five options here: E is read, wrong
    # more than 10 words without A-E: a random option, random.Random("42:lvbSmpl002_1").choice("ABCD") = A, wrong
    "lvbSmpl002_1": ("C", "i think there is no square moving anywhere in this whole short synthetic clip"),
    "lvbSmpl003_0": ("A", "Best answer: A"),
    "lvbSmpl003_1": ("B", "(B) Right to left"),
}


def parts(sample: dict) -> list[str]:
    """The prompt's parts: "F<seconds>" for a frame, the text otherwise."""
    return [f"F{p['timestamp']:g}" if p["type"] == "image" else p["text"] for p in sample["prompt"][-1]["content"]]


def test_longvideobench_replayed_to_hand_computed_scores(tmp_path: Path) -> None:
    task = "longvideobench_val"
    pred = predictions(tmp_path / "pred.jsonl", {task: {doc: reply for doc, (_, reply) in REPLIES.items()}})
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", task, "--data-dir", str(SAMPLE), "--model", f"replay:{pred}",
                        "--output-path", str(out)], tmp_path)
    assert proc.returncode == 1, proc.stderr  # one guessed reply
    assert "guessed=1" in proc.stderr
    results = results_of(out)
    # right: 001_0, 003_0, 003_1; wrong: 001_1, 002_0, 002_1 (a guess): 3 of 6
    assert results["results"][task]["acc"] == pytest.approx(50.0)
    assert results["problems"][task].get("guessed") == 1
    groups = results["breakdowns"][task]
    assert {k: v["acc"] for k, v in groups["duration_group"].items()} == pytest.approx({"15": 50.0, "60": 0.0, "600": 100.0})
    assert {k: v["acc"] for k, v in groups["question_category"].items()} == pytest.approx(
        {"S2A": 50.0, "T2O": 0.0, "E2O": 0.0, "TAA": 100.0, "O3O": 100.0})
    # VLMEvalKit's reading (variant vlmevalkit): "Best answer: A" reads the B of "Best" (its list joins
    # "Best answer:" to "Best option:"), the long reply is wrong without a guess: 2 of 6
    assert results["variants"][task]["vlmevalkit"]["metrics"]["acc"] == pytest.approx(100 * 2 / 6)
    samples = {s["doc_id"]: s for s in samples_of(out, task)}
    assert {d: s["target"] for d, s in samples.items()} == {d: gold for d, (gold, _) in REPLIES.items()}
    assert samples["lvbSmpl002_1"]["parsed"] == "A" and samples["lvbSmpl002_1"]["read_by"] == "random"
    # lvbSmpl001: 10 s at 2 fps (20 frames), duration 10.0: min(64, 10) frames, int(20 / 10) = 2 apart:
    # frames 0, 2, ... 18, at 0 .. 9 s; "It opens on red." (0.5-1.9 s, middle 1.2) after the frames
    # at 0 and 1 s, "Now everything is blue." (4-5.8, middle 4.9) after 2, 3, 4 s; "A short
    # goodbye." (9.1-9.4: middle 9.25, widened to 8.75-9.75) after 5 .. 9 s
    frames = [f"F{t}" for t in range(10)]
    assert parts(samples["lvbSmpl001_0"]) == [
        *frames[:2], "It opens on red.\n", *frames[2:5], "Now everything is blue.\n", *frames[5:],
        "A short goodbye.\nQuestion: When the subtitle says 'It opens on red.', what colour is the screen?\n"
        "A. Red\nB. Green\nC. Blue\nD. Yellow\nAnswer with the option's letter from the given choices directly."]
    # lvbSmpl002: 8 s of video, duration 7.5: 7 frames, int(int(15.0) / 7) = 2 apart (0 .. 6 s); the
    # subtitles start 2 s in: " The screen is black." at 0-1.5 s, " Orange comes next." at 4-5.9 s,
    # " Grey until the end." from 6.2 s to the duration 7.5 - 2 (null end): middle 5.85, widened to 5.35-6.35
    assert parts(samples["lvbSmpl002_0"])[:12] == [
        "F0", " The screen is black.\n", "F1", "F2", "F3", "F4", " Orange comes next.\n", "F5",
        " Grey until the end.\n", "F6", "Question: When the subtitle says 'Orange comes next.', what colour is the screen?\n"
        "A. Black\nB. Purple\nC. Orange\nD. Grey\nE. Blue\nAnswer with the option's letter from the given choices directly."][:12]
    # lvbSmpl003: 12 s, duration 12 (an int): 12 frames 2 apart; "After the video ends." covers no frame
    assert parts(samples["lvbSmpl003_0"])[:5] == ["F0", "F1", "F2", "Still cyan.\n", "F3"]
    assert "After the video ends." not in "".join(parts(samples["lvbSmpl003_0"]))


def test_the_task_variants_send_the_peers_inputs(tmp_path: Path) -> None:
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", "longvideobench_val_lmms_eval,longvideobench_val_vlmevalkit", "--model", "random",
                        "--data-dir", str(SAMPLE), "--output-path", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    lmms = {s["doc_id"]: s for s in samples_of(out, "longvideobench_val_lmms_eval")}
    # lvbSmpl002 with 16 frames: the same 7 frames; lmms-eval places them at 0 .. 6 s (range(int(7.5)))
    assert parts(lmms["lvbSmpl002_0"]) == [
        "F0", "\n The screen is black.\n", "F1", "\n", "F2", "\n", "F3", "\n", "F4", "\n Orange comes next.\n", "F5",
        "\n Grey until the end.\n", "F6", "\nWhen the subtitle says 'Orange comes next.', what colour is the screen?\n"
        "A. Black\nB. Purple\nC. Orange\nD. Grey\nE. Blue\nAnswer with the option's letter from the given choices directly.\n"]
    vlm = {s["doc_id"]: s for s in samples_of(out, "longvideobench_val_vlmevalkit")}
    # 64 frames int(i * 20 / 65), i = 1 .. 64, of lvbSmpl001's 20 (repeats kept); no subtitles
    got = [p["timestamp"] for p in vlm["lvbSmpl001_0"]["prompt"][-1]["content"] if p["type"] == "image"]
    assert got == [int(i * (20 / 65)) / 2 for i in range(1, 65)]
    assert parts(vlm["lvbSmpl001_0"])[64:] == [
        "When the subtitle says 'It opens on red.', what colour is the screen?\nA. Red\nB. Green\nC. Blue\nD. Yellow\n"
        "Answer with the option's letter from the given choices directly."]
