"""LongVideoBench against its authors' code and the peers' copies of it, run verbatim.

- Frames: the authors' ``load_video`` (as lmms-eval copies it, bundled; and the authors' own file
  from MMTASKS_REFERENCE_DIR) opens the frames ``sampling: stride`` with ``duration_field`` sends,
  on videos whose every frame carries its number (a 25 fps and a 29.97 fps one, record durations
  shorter than the file, budgets 16 and 64).
- Subtitles: ``insert_subtitles_into_frames`` (VLMEvalKit's copy of the authors' function on
  frames, bundled; the authors' own from MMTASKS_REFERENCE_DIR) gives the order of frames and lines
  the ``longvideobench_interleave`` transform gives, on tricky subtitles; lmms-eval's text version
  with its ``compute_frame_timestamps`` gives the ``longvideobench_interleave_lmms_eval`` order.
- Answers: lmms-eval's ``parse_multi_choice_response`` (the authors' rule) reads tricky replies as
  ``longvideobench_letter`` does, falls back to a random option where ours guesses, and its
  ``longvideobench_aggregate_results`` gives our accuracy.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

av = pytest.importorskip("av")

from mmtasks.config.task_config import VideoConfig  # noqa: E402
from mmtasks.documents.video import VideoReader, stride_points  # noqa: E402
from mmtasks.scoring.parsers import is_guess  # noqa: E402
from tests.reference_code import load_file as load, reference_dir_file  # noqa: E402

FOLDER = Path(__file__).resolve().parents[1]
REFERENCE = Path(__file__).parent / "reference"


def lmms_eval() -> ModuleType:
    return load(REFERENCE / "lmms_eval_longvideobench.py", "reference_lmms_eval_longvideobench")


def vlmevalkit() -> ModuleType:
    return load(REFERENCE / "vlmevalkit_longvideobench.py", "reference_vlmevalkit_longvideobench")


def ours() -> ModuleType:
    return load(FOLDER / "longvideobench_prompt.py", "longvideobench_prompt_under_test")


def authors(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The authors' longvideobench_dataset.py (no LICENSE file upstream: not bundled) from
    MMTASKS_REFERENCE_DIR, with stand-ins for torch and decord (lmms-eval's, over PyAV)."""
    path = reference_dir_file("longvideobench_dataset.py", "github.com/longvideobench/LongVideoBench at fc3c553, no LICENSE file: not bundled")
    stand_in = lmms_eval()
    torch = types.ModuleType("torch")
    torch.Tensor = stand_in.torch.Tensor  # type: ignore[attr-defined]
    data = types.ModuleType("torch.utils.data")
    data.Dataset = object  # type: ignore[attr-defined]
    decord = types.ModuleType("decord")
    decord.VideoReader, decord.cpu = stand_in.VideoReader, stand_in.cpu  # type: ignore[attr-defined]
    for name, module in {"torch": torch, "torch.utils": types.ModuleType("torch.utils"), "torch.utils.data": data,
                         "decord": decord}.items():
        monkeypatch.setitem(sys.modules, name, module)
    return load(path, "reference_longvideobench_dataset")


# -- frames ---------------------------------------------------------------------------

def numbered_video(path: Path, n: int, rate: object) -> Path:
    """n frames at ``rate`` fps, frame k showing k // 16 on its left half and k % 16 on its right, as greys."""
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=rate)
        stream.width = stream.height = 32
        stream.pix_fmt = "yuv420p"
        stream.options = {"g": "12", "crf": "0"}
        for k in range(n):
            pixels = np.zeros((32, 32, 3), np.uint8)
            pixels[:, :16] = 16 * (k // 16) + 8
            pixels[:, 16:] = 16 * (k % 16) + 8
            for packet in stream.encode(av.VideoFrame.from_ndarray(pixels, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def number(pixels: np.ndarray) -> int:
    return 16 * int(pixels[16, 4, 0] // 16) + int(pixels[16, 28, 0] // 16)


#: (frames, fps, the record's duration, budget): a 25 fps video of 103 frames (4.12 s) read as 4.1 s;
#: 29.97 fps, 200 frames (6.67 s) read as 6.6 s; 5 fps, 103 frames read as 20.5 s, 16 and 64 frames
CASES = [(103, 25, 4.1, 64), (200, "30000/1001", 6.6, 64), (103, 5, 20.5, 16), (103, 5, 20.5, 64), (200, "30000/1001", 6.6, 4)]


def our_frames(path: Path, duration: float, budget: int) -> tuple[list[int], list[int]]:
    rule = VideoConfig(num_frames=budget, sampling="stride", duration_field="duration")
    clip = VideoReader(rule).clip(path, path.name, "d", {"duration": duration})
    return list(clip.indices), [number(np.asarray(img)) for img in clip.frames()]


@pytest.mark.parametrize("n, rate, duration, budget", CASES)
def test_the_frames_are_the_ones_load_video_opens(tmp_path: Path, n: int, rate: object, duration: float,
                                                  budget: int) -> None:
    from fractions import Fraction

    path = numbered_video(tmp_path / "v.mp4", n, Fraction(str(rate)))
    theirs = [number(np.asarray(img)) for img in lmms_eval().load_video(str(path), duration, budget)]
    indices, shown = our_frames(path, duration, budget)
    assert shown == theirs == indices
    fps = float(Fraction(str(rate)))
    assert indices == stride_points(duration, fps, budget)


def test_the_frame_indices_by_hand() -> None:
    # 4.1 s at 25 fps: min(64, 4) = 4 frames, int(int(102.5) / 4) = 25 apart
    assert stride_points(4.1, 25.0, 64) == [0, 25, 50, 75]
    # 6.6 s at 29.97 fps: 6 frames, int(197.8...) = 197, int(197 / 6) = 32 apart
    assert stride_points(6.6, 30000 / 1001, 64) == [0, 32, 64, 96, 128, 160]
    # 20.5 s at 5 fps, 16 frames: int(102.5) = 102, int(102 / 16) = 6 apart; the last frames never reached
    assert stride_points(20.5, 5.0, 16) == [6 * i for i in range(16)]
    # an hour at 30 fps, 64 frames: 108000 / 64 = 1687.5, so 1687 apart, the last at 106281 of 107999
    assert stride_points(3600.0, 30.0, 64)[-1] == 1687 * 63
    assert stride_points(0.5, 30.0, 64) == [0]  # shorter than a second: the authors divide by zero; ours frame 0


@pytest.mark.parametrize("n, rate, duration, budget", CASES[:3])
def test_the_authors_own_load_video(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n: int, rate: object,
                                    duration: float, budget: int) -> None:
    from fractions import Fraction

    module = authors(monkeypatch)
    path = numbered_video(tmp_path / "v.mp4", n, Fraction(str(rate)))
    images, times = module.load_video(str(path), duration, budget)
    indices, shown = our_frames(path, duration, budget)
    assert [number(np.asarray(img)) for img in images] == shown
    assert times == [i / float(Fraction(str(rate))) for i in indices]


# -- subtitles ------------------------------------------------------------------------

#: tricky subtitles: an int end (not a float: runs to the duration), a null end, a line shorter
#: than a second (widened), one before the first frame, one after the last, overlapping ones,
#: a middle exactly on a frame's time, the two forms of the release
SUBTITLES = [
    {"timestamp": [0.0, 0.4], "text": "before"},
    {"start": "00:00:01.000", "end": "00:00:03.000", "line": "middle on frame 2"},
    {"timestamp": [2.5, 4], "text": "int end: runs to the duration"},
    {"timestamp": [3.2, 3.6], "text": "short: widened"},
    {"start": "00:00:05.000", "end": "00:00:05.990", "line": "between frames, widened onto frame 5"},
    {"timestamp": [6.1, None], "text": "null end"},
    {"start": "00:00:30.000", "end": "00:00:31.000", "line": "after the video"},
]


def as_items(theirs: list[dict]) -> list[dict]:
    """VLMEvalKit's items as the transform's: the frame's number, the line without the added newline."""
    return [{"frame": it["value"], "text": None} if it["type"] == "image" else {"frame": None, "text": it["value"][:-1]}
            for it in theirs]


@pytest.mark.parametrize("offset, times", [(0.0, [0.0, 1.0, 2.0, 3.0, 4.0, 5.5, 7.0]),
                                           (1.5, [0.0, 0.6, 1.2, 1.8, 2.4, 3.0, 3.6, 4.2]),
                                           (0.0, [0.0, 2.0, 4.0, 6.0, 8.0])])
def test_the_interleaving_is_the_authors(offset: float, times: list[float]) -> None:
    frames = list(range(len(times)))
    theirs = vlmevalkit().insert_subtitles_into_frames(frames, times, SUBTITLES, offset, 8.0)
    assert ours().interleave(times, SUBTITLES, offset, 8.0) == as_items(theirs)


def test_the_interleaving_by_hand() -> None:
    got = ours().interleave([0.0, 1.0, 2.0, 3.0, 4.0, 5.5, 7.0], SUBTITLES, 0.0, 8.0)
    flat = [f"F{it['frame']}" if it["frame"] is not None else it["text"] for it in got]
    # "before" (0-0.4, middle 0.2): frame 0 first, then the line (widened to -0.3..0.7, frame 0 inside);
    # "middle on frame 2" (1-3, middle 2): frames 1 and 2 (2 <= 2) come first; "int end" (2.5-8,
    # middle 5.25): frames 3, 4; "short" (3.4 +- 0.5): frame 3 inside; "between frames" (5.495 +-
    # 0.5): before frame 5 (5.5 > 5.495), which is inside; "null end" (6.1-8, middle 7.05): frames 5,
    # 6 first; "after": no frame inside, left out
    assert flat == ["F0", "before", "F1", "F2", "middle on frame 2", "F3", "F4", "int end: runs to the duration",
                    "short: widened", "between frames, widened onto frame 5", "F5", "F6", "null end"]


def test_the_lmms_eval_interleaving(tmp_path: Path) -> None:
    import json

    module = lmms_eval()
    (tmp_path / "s.json").write_text(json.dumps(SUBTITLES), encoding="utf-8")
    module.RESOLVED.update({"dir": str(tmp_path), "kwargs": {"max_num_frames": 4}})
    doc = {"question": "Q?", "option0": "a", "option1": "b", "option2": "c", "option3": "N/A", "option4": "N/A",
           "subtitle_path": "s.json", "duration": 8.0, "starting_timestamp_for_subtitles": 0.0}
    kwargs = {"pre_prompt": "", "post_prompt": "Answer with the option's letter from the given choices directly.\n",
              "insert_interleave_subtitles": True}
    text = module.longvideobench_doc_to_text(doc, kwargs)
    times = ours().lmms_eval_frame_times(8.0, 4)
    assert times == module.compute_frame_timestamps(8.0, 4) == [0.0, 2.0, 4.0, 6.0]
    items = ours().interleave(times, SUBTITLES, 0.0, 8.0)
    prefix = "\n".join("<image>" if it["frame"] is not None else it["text"] for it in items)
    assert text == f"{prefix}\nQ?\nA. a\nB. b\nC. c\nAnswer with the option's letter from the given choices directly.\n"


# -- answers --------------------------------------------------------------------------

#: (reply, what the rule reads; None: a random option)
REPLIES = [
    ("A", "A"), ("(B)", "B"), ("The best answer is C.", "C"), ("Best option: D", "D"), ("The answer E", "E"),
    ("Definitely C", "D"),  # the D of "Definitely": the first capital A-E anywhere
    ("Answer: B", "A"),  # "Answer:" is no prefix of this rule: the A of "Answer"
    ("The correct option is (C)", "C"), ("none of them", None), ("", None),
    ("i think it is hard to tell what happens in this long video at all", None),  # > 10 words, no A-E
    ("it is hard to tell what happens in this long video, maybe option E", "E"),
    ("b", None), ("The answer is", None), ("  C  ", "C"), ("Option E.", "E"),
]


@pytest.mark.parametrize("reply", [r for r, _ in REPLIES] + ["Best answer: A", "Answer: B", "Option: C", "The best option is D"])
def test_replies_as_vlmevalkits_extract_characters_regex(reply: str) -> None:
    theirs = vlmevalkit().extract_characters_regex(reply)
    assert (ours().longvideobench_letter_vlmevalkit(reply, {"id": "v_0", "candidates": ["a"] * 5}) or "") == theirs


def test_the_readings_differ_by_hand() -> None:
    rule = ours()
    # VLMEvalKit's joined "Best answer:Best option:" is no prefix of "Best answer: A": the B of "Best"
    assert rule.read_letter("Best answer: A") == "A"
    assert rule.read_letter("Best answer: A", rule.VLMEVALKIT_PREFIXES) == "B"
    # "Answer:" is in VLMEvalKit's list, not in the authors'
    assert (rule.read_letter("Answer: B"), rule.read_letter("Answer: B", rule.VLMEVALKIT_PREFIXES)) == ("A", "B")


@pytest.mark.parametrize("reply, expected", REPLIES)
def test_replies_read_as_the_authors_read_them(reply: str, expected: str | None) -> None:
    theirs = lmms_eval().parse_multi_choice_response(reply, ["<random>"], {})
    assert theirs == (expected if expected is not None else "<random>")
    doc = {"id": "vid_3", "candidates": ["a", "b", "c", "d", "e"]}
    got = ours().longvideobench_letter(reply, doc)
    assert ours().read_letter(reply) == expected
    if expected is None:
        assert is_guess(got) and got in "ABCDE"
    else:
        assert got == expected and not is_guess(got)


def test_accuracy_and_groups_are_lmms_evals() -> None:
    module = lmms_eval()
    rule = ours()
    categories = ["S2E", "T2O", "TAA", "O3O"]
    docs, results, scores = [], [], []
    for i, (reply, expected) in enumerate((r, e) for r, e in REPLIES * 2 if e is not None):
        gold = i % 4
        doc = {"id": f"v{i // 3}_{i % 3}", "duration_group": [15, 60, 600, 3600][i % 4 if i < 12 else 3],
               "question_category": categories[i % 3], "correct_choice": gold,
               **{f"option{k}": (f"o{k}" if k < 4 else "N/A") for k in range(5)}}
        results.append(module.longvideobench_process_results(doc, [reply])["lvb_acc"])
        docs.append(doc)
        scores.append(float(rule.read_letter(reply) == "ABCDE"[gold]))
    overall = module.longvideobench_aggregate_results(results)
    assert overall == round(sum(scores) / len(scores), 5)
    for key in ("duration_group", "question_category"):
        for label in {d[key] for d in docs}:
            theirs = module.evaluate_longvideobench([r for r in results if r[key] == label])[1]["acc"]
            mine = [s for s, d in zip(scores, docs) if d[key] == label]
            assert theirs == pytest.approx(sum(mine) / len(mine))


def test_the_authors_own_interleaving(monkeypatch: pytest.MonkeyPatch) -> None:
    module = authors(monkeypatch)
    times = [0.0, 1.0, 2.0, 3.0, 4.0, 5.5, 7.0]
    theirs = module.insert_subtitles_into_frames(list(range(len(times))), times, SUBTITLES, 0.0, 8.0)
    assert ours().interleave(times, SUBTITLES, 0.0, 8.0) == [
        {"frame": it, "text": None} if isinstance(it, int) else {"frame": None, "text": it} for it in theirs]
