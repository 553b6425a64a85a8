"""Synthetic MVBench data in the layout of the Hugging Face dataset ``OpenGVLab/MVBench``.

``hub/`` is the repository as its card and files lay it out (main, 2025): ``README.md`` whose
``configs`` name one config per task, ``data_files: json/<task>.json``; ``json/<task>.json``, a
JSON list of records (``video``, ``question``, ``candidates``, ``answer``, the text of the right
candidate, and for the tasks whose ``data_list`` entry has a bound, ``start``/``end`` in seconds);
``video/<source>.zip`` holding each source dataset's videos as ``<source>/...`` (extracted into one
folder, a record's video is ``<prefix>/<video>``, the prefix of its task in Ask-Anything's
``data_list``), ``video/data0613.zip`` holding later videos as ``data0613/<source>/...`` (merged
into ``<source>/...``, as VLMEvalKit does), and no NTU RGB+D archive: the Hub removed
``nturgbd.zip`` and lists its videos in ``video/MVBench_videos_ntu.txt`` (Fine-grained Pose's
videos are to be got from NTU RGB+D's owners).

``mvbench.jsonl`` and the folders beside it are the local layout (ours): the records of the 20
files in one JSONL, each with ``id``, ``task_type`` (the task's name as the notebook's
``data_list`` writes it) and ``prefix`` (its video folder), and the archives extracted, the NTU
video included. One question per task over five tiny videos: three H.264 MP4s, an animated GIF
and a folder of frames (Episodic Reasoning's TVQA clips are frame folders at 3 fps); the Action
Sequence, Action Prediction, Object Interaction, Action Localization and Episodic Reasoning
records carry ``start``/``end``.
"""

from __future__ import annotations

from pathlib import Path

import json
import shutil

from sample_data.common import write_jsonl
from sample_data.videos import frames, write_frames, write_gif, write_mp4, write_zip

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


#: task -> (its json file's name, its videos' folder): Ask-Anything's ``data_list`` (the Hub's
#: archive names: ``ssv2_video``; ``Moments_in_Time_Raw/videos`` without the notebook's stray "p")
LAYOUT = {
    "Action Sequence": ("action_sequence", "star/Charades_v1_480"),
    "Action Prediction": ("action_prediction", "star/Charades_v1_480"),
    "Action Antonym": ("action_antonym", "ssv2_video"),
    "Fine-grained Action": ("fine_grained_action", "Moments_in_Time_Raw/videos"),
    "Unexpected Action": ("unexpected_action", "FunQA_test/test"),
    "Object Existence": ("object_existence", "clevrer/video_validation"),
    "Object Interaction": ("object_interaction", "star/Charades_v1_480"),
    "Object Shuffle": ("object_shuffle", "perception/videos"),
    "Moving Direction": ("moving_direction", "clevrer/video_validation"),
    "Action Localization": ("action_localization", "sta/sta_video"),
    "Scene Transition": ("scene_transition", "scene_qa/video"),
    "Action Count": ("action_count", "perception/videos"),
    "Moving Count": ("moving_count", "clevrer/video_validation"),
    "Moving Attribute": ("moving_attribute", "clevrer/video_validation"),
    "State Change": ("state_change", "perception/videos"),
    "Fine-grained Pose": ("fine_grained_pose", "nturgbd"),
    "Character Order": ("character_order", "perception/videos"),
    "Egocentric Navigation": ("egocentric_navigation", "vlnqa"),
    "Episodic Reasoning": ("episodic_reasoning", "tvqa/frames_fps3_hq"),
    "Counterfactual Inference": ("counterfactual_inference", "clevrer/video_validation"),
}
#: the one record whose video is in ``data0613.zip`` (the Hub's later videos), under its own name
LATER = {"Object Interaction": "a_0613.mp4"}


def hub_records() -> dict[str, list[dict]]:
    """json file name -> its records, as the Hub's ``json/<task>.json`` hold them."""
    out: dict[str, list[dict]] = {}
    for k, (task, video, question, candidates, answer, bound) in enumerate(TASKS):
        turn = k % len(candidates)  # the right candidate at different places
        candidates = candidates[turn:] + candidates[:turn]
        record = {"video": LATER.get(task, video), "question": question, "candidates": candidates, "answer": answer}
        if bound is not None:
            record["start"], record["end"] = bound
        out[LAYOUT[task][0]] = [record]
    return out


def records() -> list[dict]:
    """The local layout's records: the Hub's, with ``id``, ``task_type`` and ``prefix``."""
    hub = hub_records()
    return [{"id": f"mvbench_{k:02d}", "task_type": task, "prefix": LAYOUT[task][1], **hub[LAYOUT[task][0]][0]}
            for k, (task, *_) in enumerate(TASKS)]


def _card() -> str:
    configs = "".join(f"- config_name: {name}\n  data_files: json/{name}.json\n" for name, _ in LAYOUT.values())
    return ("---\nlicense: mit\ntask_categories:\n- visual-question-answering\n- video-classification\nmodalities:\n"
            f"- Video\n- Text\nconfigs:\n{configs}---\n\n# MVBench (synthetic sample)\n\nThe layout of the Hugging Face "
            "dataset OpenGVLab/MVBench (json/<task>.json, video/<source>.zip), for tests and demos of mmtasks; the "
            "videos are a few seconds of solid colours. Generated by scripts/make_sample_data.py; no real benchmark data.\n")


def generate(root: Path) -> None:
    made = root / ".videos"
    write_mp4(made / "a.mp4", frames(["red", "green", "blue", "yellow"], 4, square="left"), fps=2)
    write_mp4(made / "b.mp4", frames(["orange", "orange"], 4, square="right"), fps=2)
    write_gif(made / "c.gif", frames(["purple", "black"], 4), fps=2)
    write_mp4(made / "d.mp4", frames(["red", "cyan", "grey"], 2), fps=2)
    write_frames(made / "e", frames(["green", "blue"], 6, size=24))
    # the local layout: each record's video at <prefix>/<video>, as the archives extract
    placed: dict[str, Path] = {}
    for task, video, *_ in TASKS:
        rel = f"{LAYOUT[task][1]}/{LATER.get(task, video)}"
        source = made / video
        for path in ([p for p in sorted(source.iterdir())] if source.is_dir() else [source]):
            name = f"{rel}/{path.name}" if source.is_dir() else rel
            placed[name] = path
    for name, path in placed.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, root / name)
    write_jsonl(root / "mvbench.jsonl", records())
    # the Hub layout: one archive per source folder, the later video in data0613.zip, no NTU archive
    hub = root / "hub"
    (hub / "json").mkdir(parents=True, exist_ok=True)
    for name, recs in hub_records().items():
        (hub / "json" / f"{name}.json").write_text(json.dumps(recs, indent=2) + "\n", encoding="utf-8", newline="\n")
    later = {f"{LAYOUT[t][1]}/{v}" for t, v in LATER.items()}
    by_source: dict[str, dict[str, Path]] = {}
    for name, path in sorted(placed.items()):
        if name.startswith("nturgbd/"):
            continue
        zip_name = "data0613" if name in later else name.split("/", 1)[0]
        member = f"data0613/{name}" if name in later else name
        by_source.setdefault(zip_name, {})[member] = root / name
    for zip_name, members in sorted(by_source.items()):
        write_zip(hub / "video" / f"{zip_name}.zip", members, folders=(zip_name,))
    ntu = sorted(n.split("/", 1)[1] for n in placed if n.startswith("nturgbd/"))
    (hub / "video" / "MVBench_videos_ntu.txt").write_text("".join(f"{n}\n" for n in ntu), encoding="utf-8", newline="\n")
    (hub / "README.md").write_text(_card(), encoding="utf-8", newline="\n")
    shutil.rmtree(made)
