"""Synthetic LongVideoBench val records in the layout of the Hub dataset ``longvideobench/LongVideoBench``.

The Hub repository holds ``lvb_val.json`` (a JSON list of records), ``subtitles.tar`` and the
videos in ``videos.tar.part.*``; its README has them extracted side by side, which is the folder
the authors' ``LongVideoBenchDataset(data_path, "lvb_val.json")`` reads: ``lvb_val.json``,
``videos/<video_path>``, ``subtitles/<subtitle_path>``. The records have the release's fields
(``video_id, question, question_wo_referring_query, candidates, correct_choice, position,
topic_category, question_category, level, id, video_path, subtitle_path, duration_group,
starting_timestamp_for_subtitles, duration, view_count``); the subtitle files both of the
release's forms (``{"start": "HH:MM:SS.mmm", "end": ..., "line": ...}`` and whisper's
``{"timestamp": [start, end], "text": ...}``, an end of null running to the video's end). The
videos are 32x32 H.264 at 2 fps, a background colour every 2 s; one record gives a duration
shorter than its file (7.5 s of an 8 s video), one a subtitle start offset of 2 s, as real ones do.
"""

from __future__ import annotations

import json
from pathlib import Path

from sample_data.videos import frames, write_mp4

#: (video_id, colours (2 s each), moving square, duration field, duration_group, offset, subtitles)
VIDEOS = [
    ("lvbSmpl001", ["red", "green", "blue", "yellow", "white"], "left", 10.0, 15, 0,
     [{"start": "00:00:00.500", "end": "00:00:01.900", "line": "It opens on red."},
      {"start": "00:00:04.000", "end": "00:00:05.800", "line": "Now everything is blue."},
      {"start": "00:00:09.100", "end": "00:00:09.400", "line": "A short goodbye."}]),
    ("lvbSmpl002", ["black", "purple", "orange", "grey"], None, 7.5, 60, 2.0,
     [{"timestamp": [2.0, 3.5], "text": " The screen is black."},
      {"timestamp": [6.0, 7.9], "text": " Orange comes next."},
      {"timestamp": [8.2, None], "text": " Grey until the end."}]),
    ("lvbSmpl003", ["cyan", "cyan", "green", "red", "red", "blue"], "right", 12, 600, 0,
     [{"start": "00:00:02.000", "end": "00:00:02.400", "line": "Still cyan."},
      {"start": "00:00:20.000", "end": "00:00:21.000", "line": "After the video ends."}]),
]

#: video_id -> (question, candidates, correct_choice, question_category, level)
QUESTIONS = {
    "lvbSmpl001": [
        ("When the subtitle says 'It opens on red.', what colour is the screen?", ["Red", "Green", "Blue", "Yellow"], 0, "S2A", "L1-Perception"),
        ("After the screen turns blue, which colour follows?", ["White", "Yellow", "Green", "Red"], 1, "T2O", "L2-Relation"),
    ],
    "lvbSmpl002": [
        ("When the subtitle says 'Orange comes next.', what colour is the screen?", ["Black", "Purple", "Orange", "Grey", "Blue"], 2, "S2A", "L1-Perception"),
        ("Is there a moving square in the video?", ["Yes, moving left", "Yes, moving right", "No", "Only at the end"], 2, "E2O", "L1-Perception"),
    ],
    "lvbSmpl003": [
        ("Which colour lasts longest in the video?", ["Cyan", "Green", "Red", "Blue"], 0, "TAA", "L2-Relation"),
        ("In which direction does the white square move?", ["Left to right", "Right to left", "Up", "Down"], 1, "O3O", "L2-Relation"),
    ],
}


def records() -> list[dict]:
    out = []
    for video_id, _, _, duration, group, offset, _ in VIDEOS:
        for k, (question, candidates, correct, category, level) in enumerate(QUESTIONS[video_id]):
            out.append({"video_id": video_id, "question": question, "question_wo_referring_query": question,
                        "candidates": candidates, "correct_choice": correct, "position": [0, 2],
                        "topic_category": "KN-Science", "question_category": category, "level": level,
                        "id": f"{video_id}_{k}", "video_path": f"{video_id}.mp4", "subtitle_path": f"{video_id}_en.json",
                        "duration_group": group, "starting_timestamp_for_subtitles": offset, "duration": duration,
                        "view_count": 1000 + k})
    return out


def generate(root: Path) -> None:
    for video_id, colours, square, _, _, _, subtitles in VIDEOS:
        write_mp4(root / "videos" / f"{video_id}.mp4", frames(colours, 4, square=square), fps=2)
        path = root / "subtitles" / f"{video_id}_en.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(subtitles, ensure_ascii=False, indent=1) + "\n", encoding="utf-8", newline="\n")
    (root / "lvb_val.json").write_text(json.dumps(records(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8",
                                       newline="\n")
