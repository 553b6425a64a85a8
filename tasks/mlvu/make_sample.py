"""Synthetic MLVU dev records in the layout of the Hub dataset ``MLVU/MVLU``.

The repository keeps one JSON list of records per task, ``MLVU/json/<n>_<task>.json``, and each
task's videos in ``MLVU/video/<n>_<task>/`` (the paths VLMEvalKit's ``MLVU_MCQ.prepare_dataset``
reads after ``snapshot_download``). A multiple-choice record has the release's fields (the
authors' ``data/1_plotQA.json`` ...): ``video``, ``duration``, ``question``, ``candidates``,
``answer`` (the right candidate's text) and ``question_type`` (``plotQA``, ``findNeedle``, ``ego``,
``count``, ``order``, ``anomaly_reco``, ``topic_reasoning``). Written here: the seven
multiple-choice tasks, one or two questions each, the right candidate at a different place from
record to record; each video 32x32 H.264 at 2 fps, 8 s (a background colour every 2 s, a white
square moving in some). The generation tasks' files too: ``8_sub_scene.json`` (``video,
duration, question, answer, question_type`` "subPlot" and ``scoring_points``, a list) and
``9_summary.json`` (``question_type`` "summary"), two records each.
"""

from __future__ import annotations

import json
from pathlib import Path

from sample_data.videos import frames, write_mp4

#: (folder, question_type, video, colours (2 s each), moving square, questions: (question, candidates, answer))
TASKS = [
    ("1_plotQA", "plotQA", "movie101_1.mp4", ["red", "green", "blue", "yellow"], "left",
     [("What colour is the screen when the story begins?", ["Red", "Green", "Blue", "Yellow"], "Red"),
      ("What happens after the screen turns blue?", ["It turns black", "It turns yellow", "It turns red", "It turns green"], "It turns yellow")]),
    ("2_needle", "findNeedle", "needle_1.mp4", ["grey", "grey", "orange", "grey"], None,
     [("Which colour flashes briefly in the middle of the video?", ["Purple", "Cyan", "Orange", "White"], "Orange")]),
    ("3_ego", "ego", "ego_1.mp4", ["white", "black", "white", "black"], "right",
     [("Which way did I move the white square?", ["Up", "Right to left", "Down", "Left to right"], "Right to left")]),
    ("4_count", "count", "count_1.mp4", ["red", "blue", "red", "blue"], None,
     [("Throughout this video, how many times does the screen turn red?", ["1", "3", "4", "2"], "2"),
      ("Throughout this video, how many times does the screen turn blue?", ["2", "1", "3", "4"], "2")]),
    ("5_order", "order", "order_1.mp4", ["cyan", "purple", "yellow", "green"], None,
     [("Arrange the colours in the order they appear: (1)purple; (2)green; (3)cyan; (4)yellow.",
       ["3->1->4->2", "1->2->3->4", "4->3->2->1", "2->4->1->3"], "3->1->4->2")]),
    ("6_anomaly_reco", "anomaly_reco", "surveil_1.mp4", ["green", "green", "red", "green"], None,
     [("Does this surveillance footage contain any anomalies? If yes, which kind of anomaly?",
       ["Normal", "Explosion", "Fighting", "Colour flash"], "Colour flash")]),
    ("7_topic_reasoning", "topic_reasoning", "AWA-1.mp4", ["blue", "cyan", "blue", "cyan"], "left",
     [("What is the main background of the video?", ["Desert", "Grassland", "Ocean", "Forest"], "Ocean")]),
]


#: (folder, question_type, video, colours, square, records without video/duration/question_type)
GENERATION = [
    ("8_sub_scene", "subPlot", "subPlot_new_all_1.mp4", ["red", "red", "blue", "blue"], "left", [
        {"question": "Please describe the scene when the white square crosses the red screen.",
         "answer": "A white square moves from left to right across a red screen, which then turns blue.",
         "scoring_points": ["The square is white", "It moves from left to right", "The screen turns from red to blue"]},
        {"question": "Please describe the scene when the screen is blue.",
         "answer": "The screen is blue while the white square keeps moving to the right.",
         "scoring_points": ["The screen is blue", "The white square keeps moving"]},
    ]),
    ("9_summary", "summary", "1.mp4", ["black", "orange", "black", "orange"], None, [
        {"question": "Please summarize this video, including its main content.",
         "answer": "The video alternates between a black screen and an orange one, two seconds each, twice."},
    ]),
    ("9_summary", "summary", "2.mp4", ["green", "cyan", "grey", "white"], "right", [
        {"question": "Please summarize this video, including its main content.",
         "answer": "A white square moves right to left while the screen turns green, cyan, grey and white."},
    ]),
]


def records(question_type: str, video: str, questions: list) -> list[dict]:
    return [{"video": video, "duration": 8.0, "question": q, "candidates": c, "answer": a, "question_type": question_type}
            for q, c, a in questions]


def generate(root: Path) -> None:
    for folder, question_type, video, colours, square, questions in TASKS:
        write_mp4(root / "MLVU" / "video" / folder / video, frames(colours, 4, square=square), fps=2)
        path = root / "MLVU" / "json" / f"{folder}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(records(question_type, video, questions), ensure_ascii=False, indent=1) + "\n",
                        encoding="utf-8", newline="\n")
    generation: dict[str, list[dict]] = {}
    for folder, question_type, video, colours, square, recs in GENERATION:
        write_mp4(root / "MLVU" / "video" / folder / video, frames(colours, 4, square=square), fps=2)
        for rec in recs:
            generation.setdefault(folder, []).append({"video": video, "duration": 8.0, "question": rec["question"],
                                                      "answer": rec["answer"], "question_type": question_type,
                                                      **({"scoring_points": rec["scoring_points"]} if "scoring_points" in rec else {})})
    for folder, recs in generation.items():
        (root / "MLVU" / "json" / f"{folder}.json").write_text(json.dumps(recs, ensure_ascii=False, indent=1) + "\n",
                                                              encoding="utf-8", newline="\n")
