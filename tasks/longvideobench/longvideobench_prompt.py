"""LongVideoBench's interleaved input and answer rule.

Loaded as a plugin file by ``longvideobench_val.yaml``. The authors' dataloader
(github.com/longvideobench/LongVideoBench ``longvideobench/longvideobench_dataset.py``, commit
fc3c553) builds each question's input as a list of frames and subtitle lines in time order
(``insert_subtitles_into_frames``), then "Question: ...", one "A. candidate" per option and
"Answer with the option's letter from the given choices directly.". The transform
``longvideobench_interleave`` reads the video's subtitles file (``subtitles/<subtitle_path>``
beside ``lvb_val.json``, the Hub's ``subtitles.tar`` extracted) and writes that order into the
record as ``interleaved``: a list of ``{"frame": k, "text": None}`` (the k-th sampled frame) and
``{"frame": None, "text": line}``, which the prompt template walks. The frames' times are
``index / fps`` (the authors' ``frame_index / fps``).

``longvideobench_interleave_lmms_eval``: lmms-eval's copy (``lmms_eval/tasks/longvideobench/
utils.py``), which places the subtitles by ``compute_frame_timestamps(duration, max_num_frames)``
(``duration / k * i``, or ``0 .. int(duration) - 1``) rather than the loaded frames' times.

``longvideobench_letter``: the answer rule the authors gave lmms-eval ("Same as original
LongVideoBench paper (from author Haoning Wu)": ``parse_multi_choice_response`` there): the reply,
stripped, loses each answer prefix; more than 10 words without any of A-E, or no A-E at all: a
random option; else the first capital A, B, C, D or E anywhere (also inside a word). The authors
draw with an unseeded ``random.choice``; here ``random.Random("<seed>:<id>")``, the same letter
for a document on every run, counted as guessed (ours).

``longvideobench_letter_vlmevalkit``: VLMEvalKit's reading (``vlmeval/dataset/utils/longvideobench.py``
``extract_characters_regex``, commit e8e78f0): its own prefix list (two pairs of its strings have
no comma between them and are joined, kept so here; "Answer:" and "Option:" among them), the same
10-word rule and first A-E, and no random option: a reply it reads nothing from is matched by an
LLM in VLMEvalKit or, under its exact matching (no options to match: the record's question
holds none), wrong. For the scoring variant ``vlmevalkit``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

from mmtasks.config.task_config import TransformConfig
from mmtasks.documents.dataset import Document
from mmtasks.errors import DataError
from mmtasks.plugin import parser
from mmtasks.registry import transforms
from mmtasks.scoring.parsers import Guess

ANSWER_PREFIXES = [
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    "The best option is",
    "The correct option is",
    "Best answer:",
    "Best option:",
]
_LETTER = re.compile(r"[ABCDE]")
#: VLMEvalKit's list, its joined strings as it writes them
VLMEVALKIT_PREFIXES = [
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    "The best option is" "The correct option is",  # noqa: ISC001 - joined as in VLMEvalKit
    "Best answer:" "Best option:",  # noqa: ISC001
    "Answer:",
    "Option:",
]
#: the seed of the random fallback (ours: the authors' draw is unseeded)
SEED = 42


def read_letter(text: str, prefixes: list[str] = ANSWER_PREFIXES) -> str | None:
    """The letter the rule reads, None where the authors draw at random."""
    s = text.strip()
    for prefix in prefixes:
        s = s.replace(prefix, "")
    if len(s.split()) > 10 and not _LETTER.search(s):
        return None
    match = _LETTER.search(s)
    return match.group(0) if match else None


@parser("longvideobench_letter")
def longvideobench_letter(text: str, doc: Mapping[str, Any]) -> str | None:
    found = read_letter(text)
    if found is not None:
        return found
    import random

    candidates = doc.get("candidates")
    if not isinstance(candidates, list) or not candidates:
        raise DataError("longvideobench_letter needs the document's candidates to guess among", field="candidates")
    letters = [chr(ord("A") + i) for i in range(len(candidates))]
    return Guess(random.Random(f"{SEED}:{doc.get('id')}").choice(letters))


@parser("longvideobench_letter_vlmevalkit")
def longvideobench_letter_vlmevalkit(text: str, doc: Mapping[str, Any]) -> str | None:
    return read_letter(text, VLMEVALKIT_PREFIXES)


def timestamp_to_seconds(timestamp: str) -> float:
    h, m, s = timestamp.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def interleave(frame_times: list[float], subtitles: list[dict[str, Any]], starting_timestamp: float,
               duration: float) -> list[dict[str, Any]]:
    """``insert_subtitles_into_frames`` of the authors' dataloader, on frame numbers: the frames up
    to each subtitle's middle, then the subtitle if a frame lies strictly inside it (a subtitle
    shorter than a second widened to one second about its middle), the remaining frames last. A
    ``timestamp`` subtitle whose end is not a float (null, or an int) ends at ``duration``, as the
    authors' ``isinstance(end, float)`` test has it."""
    out: list[dict[str, Any]] = []
    cur = 0
    for subtitle in subtitles:
        if "timestamp" in subtitle:
            start, end = subtitle["timestamp"]
            if not isinstance(end, float):
                end = duration
            start -= starting_timestamp
            end -= starting_timestamp
            text = subtitle["text"]
        else:
            start = timestamp_to_seconds(subtitle["start"]) - starting_timestamp
            end = timestamp_to_seconds(subtitle["end"]) - starting_timestamp
            text = subtitle["line"]
        middle = (start + end) / 2
        while cur < len(frame_times) and frame_times[cur] <= middle:
            out.append({"frame": cur, "text": None})
            cur += 1
        if end - start < 1:
            end, start = middle + 0.5, middle - 0.5
        if any(start < t < end for t in frame_times):
            out.append({"frame": None, "text": text})
    out.extend({"frame": k, "text": None} for k in range(cur, len(frame_times)))
    return out


def lmms_eval_frame_times(duration: float, max_num_frames: int) -> list[float]:
    """lmms-eval's ``compute_frame_timestamps``: where it places the frames among the subtitles."""
    if duration > max_num_frames:
        return [duration / max_num_frames * i for i in range(max_num_frames)]
    return [float(i) for i in range(int(duration))]


def _subtitles(doc: Document) -> list[dict[str, Any]]:
    rec = doc.record
    name = rec.get("subtitle_path")
    if not isinstance(name, str) or not name:
        raise DataError("expected the subtitles file's name", file=doc.source, doc_id=doc.doc_id, field="subtitle_path")
    rel = PurePosixPath(name)
    if rel.is_absolute() or ".." in rel.parts:
        raise DataError("must name a file inside subtitles/", file=doc.source, doc_id=doc.doc_id, field="subtitle_path")
    path = Path(doc.source).parent / "subtitles" / rel
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError:
        raise DataError(f"subtitles file not found: {path} (extract the Hub's subtitles.tar beside lvb_val.json)",
                        file=doc.source, doc_id=doc.doc_id, field="subtitle_path") from None
    except ValueError as exc:
        raise DataError(f"subtitles file {path} is not JSON: {exc}", file=doc.source, doc_id=doc.doc_id,
                        field="subtitle_path") from None
    if not isinstance(data, list) or not all(isinstance(s, dict) for s in data):
        raise DataError(f"subtitles file {path}: expected a list of subtitles", file=doc.source, doc_id=doc.doc_id,
                        field="subtitle_path")
    return data


def _interleaved(doc: Document, frame_times: list[float]) -> Document:
    rec = doc.record
    try:
        items = interleave(frame_times, _subtitles(doc), float(rec["starting_timestamp_for_subtitles"]),
                           float(rec["duration"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(f"a subtitle or record field is malformed: {exc!r}", file=doc.source, doc_id=doc.doc_id,
                        field="subtitle_path") from None
    return replace(doc, record={**rec, "interleaved": items})


@transforms.register("longvideobench_interleave")
def longvideobench_interleave(doc: Document, cfg: TransformConfig) -> Document:
    clip = doc.videos[0]
    return _interleaved(doc, [index / clip.fps for index in clip.indices])


@transforms.register("longvideobench_interleave_lmms_eval")
def longvideobench_interleave_lmms_eval(doc: Document, cfg: TransformConfig) -> Document:
    clip = doc.videos[0]
    # the task's num_frames (lmms-eval's max_num_frames), as the clip records its rule ("num_frames=16,...")
    found = re.match(r"num_frames=(\d+)", clip.rule)
    if found is None:
        raise DataError(f"needs a num_frames rule, got {clip.rule!r}", file=doc.source, doc_id=doc.doc_id,
                        field="dataset.video")
    return _interleaved(doc, lmms_eval_frame_times(float(doc.record["duration"]), int(found.group(1))))
