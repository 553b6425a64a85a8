"""Synthetic MVBench records in the schema of the Hugging Face dataset ``OpenGVLab/MVBench``.

The real dataset has one JSON file per task (``json/<task>.json``: ``video``, ``question``,
``candidates``, ``answer`` (the text of the right candidate) and, for the tasks whose clip is part
of a longer video, ``start`` and ``end`` in seconds), read by Ask-Anything's
``video_chat2/mvbench.ipynb`` (``MVBench_dataset``). Here all 20 tasks are in one file,
``mvbench/mvbench.jsonl``, each record carrying ``task_type`` (the task's name as the
notebook's ``data_list`` writes it) and ``video`` as a path under ``mvbench/videos/`` (ours: the
real files sit in each task's own source folder). One question per task over five tiny videos:
three H.264 MP4s, an animated GIF and a folder of frames (Episodic Reasoning's TVQA clips are
frame folders at 3 fps); the Action Sequence, Action Prediction, Object Interaction, Action
Localization and Episodic Reasoning records carry ``start``/``end``.
"""

from __future__ import annotations

from pathlib import Path

from sample_data.common import write_jsonl
from sample_data.videos import frames, write_frames, write_gif, write_mp4

TASKS = [
    ("Action Sequence", "a.mp4", "What happened after the screen was green?", ["It turned blue.", "It turned red.", "It turned black."], "It turned blue.", (2.0, 8.0)),
    ("Action Prediction", "a.mp4", "What will the screen probably do next?", ["Turn yellow.", "Turn green.", "Stay red."], "Turn yellow.", (0.0, 6.0)),
    ("Action Antonym", "b.mp4", "What is the square doing?", ["Moving right to left.", "Moving left to right.", "Not moving."], "Moving right to left.", None),
    ("Fine-grained Action", "b.mp4", "Which motion best describes the square?", ["sliding", "jumping", "spinning", "shrinking"], "sliding", None),
    ("Unexpected Action", "c.gif", "What is surprising in the video?", ["The colour suddenly turns black.", "A square appears.", "Nothing changes."], "The colour suddenly turns black.", None),
    ("Object Existence", "a.mp4", "Is there a white square when the screen is blue?", ["yes", "no"], "yes", None),
    ("Object Interaction", "a.mp4", "Which colour was the screen while the square was in the middle?", ["green or blue", "yellow", "black"], "green or blue", (1.0, 7.0)),
    ("Object Shuffle", "b.mp4", "Where is the square at the end?", ["on the left", "on the right", "in the middle"], "on the left", None),
    ("Moving Direction", "b.mp4", "What direction is the white square moving?", ["left", "right", "up", "down"], "left", None),
    ("Action Localization", "a.mp4", "During which part of the clip is the screen red?", ["at the beginning", "in the middle", "at the end", "throughout"], "at the beginning", (0.0, 4.0)),
    ("Scene Transition", "c.gif", "What is the scene transition in the video?", ["From purple to black.", "From black to purple.", "From red to green."], "From purple to black.", None),
    ("Action Count", "a.mp4", "How many times does the colour change?", ["3", "2", "4"], "3", None),
    ("Moving Count", "b.mp4", "How many moving objects are there?", ["1", "0", "2", "3"], "1", None),
    ("Moving Attribute", "b.mp4", "What colour is the moving object?", ["white", "orange", "cyan"], "white", None),
    ("State Change", "c.gif", "How does the screen change?", ["It gets darker.", "It gets brighter.", "It does not change."], "It gets darker.", None),
    ("Fine-grained Pose", "d.mp4", "What is the colour pattern?", ["red then cyan", "cyan then red", "only grey"], "red then cyan", None),
    ("Character Order", "d.mp4", "Which colour appears first?", ["red", "cyan", "grey"], "red", None),
    ("Egocentric Navigation", "b.mp4", "Where should you go to follow the square?", ["Turn left.", "Turn right.", "Stop."], "Turn left.", None),
    ("Episodic Reasoning", "e", "What colour is shown in the second half?", ["blue", "yellow", "green", "red"], "blue", (0.0, 4.0)),
    ("Counterfactual Inference", "a.mp4", "If the square were removed, what would remain?", ["The coloured screen.", "Nothing.", "Two squares."], "The coloured screen.", None),
]


def records() -> list[dict]:
    out = []
    for k, (task, video, question, candidates, answer, bound) in enumerate(TASKS):
        turn = k % len(candidates)  # the right candidate at different places
        candidates = candidates[turn:] + candidates[:turn]
        record = {"task_type": task, "video": f"videos/{video}", "question": question, "candidates": candidates, "answer": answer}
        if bound is not None:
            record["start"], record["end"] = bound
        out.append(record)
    return out


def generate(root: Path) -> None:
    videos = root / "videos"
    write_mp4(videos / "a.mp4", frames(["red", "green", "blue", "yellow"], 4, square="left"), fps=2)
    write_mp4(videos / "b.mp4", frames(["orange", "orange"], 4, square="right"), fps=2)
    write_gif(videos / "c.gif", frames(["purple", "black"], 4), fps=2)
    write_mp4(videos / "d.mp4", frames(["red", "cyan", "grey"], 2), fps=2)
    write_frames(videos / "e", frames(["green", "blue"], 6, size=24))
    write_jsonl(root / "mvbench.jsonl", [{"id": f"mvbench_{k:02d}", **r} for k, r in enumerate(records())])
