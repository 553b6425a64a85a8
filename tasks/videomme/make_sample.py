"""Synthetic Video-MME records in the schema of the Hugging Face dataset ``lmms-lab/Video-MME`` (split test).

Fields, as lmms-eval reads them (``lmms_eval/tasks/videomme/utils.py``): ``video_id`` ("001"),
``duration`` (``short``, ``medium``, ``long``), ``domain``, ``sub_category``, ``url``,
``videoID`` (the YouTube id: the video is ``data/<videoID>.mp4``, its subtitles
``subtitle/<videoID>.srt``), ``question_id`` ("001-1"), ``task_type``, ``question``, ``options``
(four strings "A. ...") and ``answer`` (the letter). Three questions per video, as in the real data.

``videomme/videomme.jsonl`` holds the records (the local layout, ours); ``data/`` three tiny H.264
videos (32x32, 2 fps, a colour per 2 s); ``subtitle/`` the SubRip files of two of them, cues
wrapped in ``<font color="white" size=".72c">`` as Video-MME's are (the third video has none, as
some real ones have none). ``hub/`` is the repository ``lmms-lab/Video-MME`` as its files lay it
out: ``README.md`` (config ``videomme``, split ``test``: ``videomme/test-*``),
``videomme/test-00000-of-00001.parquet`` (the same records), the videos in
``videos_chunked_01.zip`` and ``videos_chunked_02.zip`` as ``data/<videoID>.mp4`` and the
subtitles in ``subtitle.zip`` as ``subtitle/<videoID>.srt`` (the members lmms-eval's
``videomme_doc_to_visual`` and ``videomme_doc_to_text_subtitle`` read after extracting every zip
into one folder). The durations, domains and task types are labels from the real vocabulary; the
videos are seconds long.
"""

from __future__ import annotations

from pathlib import Path

from sample_data.common import write_jsonl
from sample_data.hub import _write_card, _write_parquet
from sample_data.videos import frames, srt, write_mp4, write_zip

#: (videoID, duration, domain, sub_category, colours (2 s each), moving square, subtitles)
VIDEOS = [
    ("smplVid001a", "short", "Knowledge", "Astronomy", ["red", "green", "blue", "yellow"], "left",
     [(0.0, 1.8, "We start with a red screen."), (4.0, 5.8, "Now it turns blue."), (6.0, 7.9, "Finally yellow.")]),
    ("smplVid002b", "medium", "Life Record", "Daily Life", ["black", "white", "purple", "orange"], "right",
     [(2.0, 3.9, "This part is white."), (6.0, 7.9, "The last colour is orange.")]),
    ("smplVid003c", "long", "Sports Competition", "Football", ["green", "green", "cyan", "grey"], None, None),
]


def _options(*names: str) -> list[str]:
    return [f"{letter}. {name}." for letter, name in zip("ABCD", names)]


QUESTIONS = {
    "smplVid001a": [
        ("Attribute Perception", "What colour is the screen at the very start of the video?", _options("Red", "Green", "Blue", "Yellow"), "A"),
        ("Temporal Perception", "Which colour comes right after green?", _options("Red", "Yellow", "Blue", "Purple"), "C"),
        ("Spatial Perception", "In which direction does the white square move?", _options("Up", "Down", "Right to left", "Left to right"), "D"),
    ],
    "smplVid002b": [
        ("Attribute Perception", "What colour is the screen at the end of the video?", _options("Orange", "Black", "White", "Purple"), "A"),
        ("Counting Problem", "How many different background colours appear?", _options("Two", "Three", "Four", "Five"), "C"),
        ("Spatial Perception", "In which direction does the white square move?", _options("Left to right", "Right to left", "Up", "Down"), "B"),
    ],
    "smplVid003c": [
        ("Temporal Reasoning", "Which colour lasts longest?", _options("Grey", "Cyan", "Green", "White"), "C"),
        ("Attribute Perception", "What colour is the screen at the end of the video?", _options("Green", "Grey", "Cyan", "Red"), "B"),
        ("Object Recognition", "Is there a white square in the video?", _options("Yes, moving", "Yes, still", "No", "Only at the end"), "C"),
    ],
}


FEATURES = {"video_id": "string", "duration": "string", "domain": "string", "sub_category": "string", "url": "string",
            "videoID": "string", "question_id": "string", "task_type": "string", "question": "string",
            "options": "list:string", "answer": "string"}


def records() -> list[dict]:
    out = []
    for n, (video_id, duration, domain, sub, _, _, _) in enumerate(VIDEOS, 1):
        for k, (task_type, question, options, answer) in enumerate(QUESTIONS[video_id], 1):
            out.append({"video_id": f"{n:03d}", "duration": duration, "domain": domain, "sub_category": sub,
                        "url": f"https://www.youtube.com/watch?v={video_id}", "videoID": video_id,
                        "question_id": f"{n:03d}-{k}", "task_type": task_type, "question": question,
                        "options": options, "answer": answer})
    return out


def generate(root: Path) -> None:
    for video_id, _, _, _, colours, square, cues in VIDEOS:
        write_mp4(root / "data" / f"{video_id}.mp4", frames(colours, 4, square=square), fps=2)
        if cues is not None:
            path = root / "subtitle" / f"{video_id}.srt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(srt(cues), encoding="utf-8", newline="\n")
    write_jsonl(root / "videomme.jsonl", records())
    hub = root / "hub"
    _write_parquet(hub / "videomme" / "test-00000-of-00001.parquet", FEATURES, records())
    _write_card(hub, split="test", features=FEATURES, configs={"videomme": "videomme"}, title="Video-MME (synthetic sample)",
                body="Synthetic records in the layout of the Hugging Face dataset lmms-lab/Video-MME (split test, "
                     "videos_chunked_XX.zip, subtitle.zip), for tests and demos of mmtasks. "
                     "Generated by scripts/make_sample_data.py; no real benchmark data.")
    ids = [video_id for video_id, *_ in VIDEOS]
    write_zip(hub / "videos_chunked_01.zip", {f"data/{v}.mp4": root / "data" / f"{v}.mp4" for v in ids[:2]}, folders=("data",))
    write_zip(hub / "videos_chunked_02.zip", {f"data/{v}.mp4": root / "data" / f"{v}.mp4" for v in ids[2:]}, folders=("data",))
    write_zip(hub / "subtitle.zip", {f"subtitle/{p.name}": p for p in sorted((root / "subtitle").glob("*.srt"))},
              folders=("subtitle",))
