"""Synthetic LVBench records in the layout of the authors' release, ``video_info.meta.jsonl``.

The Hub dataset ``THUDM/LVBench`` holds ``video_info.meta.jsonl``, one JSON line per video: ``key``
(the YouTube id), ``type``, ``video_info`` (``duration_minutes``, ``fps``, ``resolution``: the
authors' ``lvbench/utils/video_utils.py`` ``get_video_info``) and ``qa``, its questions: ``uid``,
``question`` (its four options on lines of their own, "(A) ..."), ``answer`` (the letter),
``question_type`` (a list of the six capabilities) and ``time_reference``. The authors fetch
each video from YouTube by its key; here ``videos/<key>.mp4`` (ours): 32x32 H.264 at 2 fps, 8 s, a
background colour every 2 s, a white square moving in one.
"""

from __future__ import annotations

import json
from pathlib import Path

from sample_data.videos import frames, write_mp4

#: (key, type, colours, square, questions: (uid, question, options, answer, question_type, time_reference))
VIDEOS = [
    ("lvbSmplKey01", "cartoon", ["red", "green", "blue", "yellow"], "left", [
        (101, "What colour is the screen at the start?", ["Red", "Green", "Blue", "Yellow"], "A",
         ["entity recognition"], "00:00-00:02"),
        (102, "Which colour comes right after green?", ["Red", "Yellow", "Blue", "Purple"], "C",
         ["event understanding", "temporal grounding"], "00:02-00:06"),
        (103, "In which direction does the white square move?", ["Up", "Down", "Right to left", "Left to right"], "D",
         ["reasoning"], "00:00-00:08"),
    ]),
    ("lvbSmplKey02", "documentary", ["black", "white", "black", "white"], None, [
        (201, "How many times does the screen turn white?", ["Once", "Twice", "Three times", "Never"], "B",
         ["key information retrieval"], "00:02-00:08"),
        (202, "Summarize the video.", ["A red screen", "Black and white in turn", "A moving square", "A blue sky"], "B",
         ["summarization", "event understanding"], "00:00-00:08"),
    ]),
    ("lvbSmplKey03", "sports", ["green", "green", "cyan", "grey"], None, [
        (301, "At what time does the screen turn cyan?", ["00:01", "00:04", "00:06", "00:07"], "B",
         ["temporal grounding"], "00:04-00:06"),
        (302, "What colour is the screen at the end?", ["Green", "Cyan", "Grey", "Red"], "C",
         ["entity recognition", "key information retrieval"], "00:06-00:08"),
    ]),
]


def lines() -> list[dict]:
    out = []
    for key, kind, _, _, questions in VIDEOS:
        qa = [{"uid": uid, "question": question + "".join(f"\n({'ABCD'[i]}) {o}" for i, o in enumerate(options)),
               "answer": answer, "question_type": types, "time_reference": ref}
              for uid, question, options, answer, types, ref in questions]
        out.append({"key": key, "type": kind,
                    "video_info": {"duration_minutes": 8 / 60, "fps": 2.0, "resolution": {"width": 32, "height": 32}},
                    "qa": qa})
    return out


def generate(root: Path) -> None:
    for key, _, colours, square, _ in VIDEOS:
        write_mp4(root / "videos" / f"{key}.mp4", frames(colours, 4, square=square), fps=2)
    root.mkdir(parents=True, exist_ok=True)
    (root / "video_info.meta.jsonl").write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines()),
                                                encoding="utf-8", newline="\n")
