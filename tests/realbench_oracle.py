"""A scripted RealBench "model" for the loopback chat server: it reads the prompt,
finds the sample record it is about, and answers - mostly right, sometimes wrong,
sometimes unparseably on the first ask - so that runs against it give non-trivial
scores and several waves (re-asks).

The reply depends only on the prompt and on how many replies that same prompt has
already been given (``counts``): a re-ask of an unparseable first answer gets a
real answer. A run that resumes from the cache and never re-sends a finished
request therefore sees exactly the replies an uninterrupted run sees.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.chat_wire import last_user_text

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
UNSURE = "I am not sure."
#: the unanswerable task's instruction (it shares questions with the extraction tasks)
_UNANSWERABLE_MARK = "Multimodal Multi-Image Extraction Task"
_IMAGE_LABEL = re.compile(r"Image \d+:")
_OPTION_LINE = re.compile(r"^([A-D])\. ([0-9,]+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class _Record:
    kind: str  # ranking, retrieval_easy, retrieval_hard, extraction, reasoning, unanswerable
    text: str
    n_images: int
    data: dict[str, Any]


def stable_hash(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


class RealBenchOracle:
    """Callable as a ``ChatServer.reply``: body -> reply text."""

    def __init__(self, data_dir: Path = SAMPLE, *, unsure_every: int = 5, wrong_every: int = 6) -> None:
        self.records: list[_Record] = []
        for file in sorted((data_dir / "realbench").glob("*.jsonl")):
            stem = file.stem
            kind = stem if stem.startswith("retrieval") or stem == "unanswerable" else stem.split("_")[0]
            for line in file.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    rec = json.loads(line)
                    self.records.append(_Record(kind, rec["text"], len(rec["images"]), rec))
        self.unsure_every = unsure_every
        self.wrong_every = wrong_every
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def record_for(self, prompt: str) -> _Record:
        n_images = len(_IMAGE_LABEL.findall(prompt))
        unanswerable = _UNANSWERABLE_MARK in prompt
        found = [r for r in self.records if r.n_images == n_images and (r.kind == "unanswerable") == unanswerable and r.text in prompt]
        if not found:
            raise LookupError(f"no sample record for prompt {prompt[:120]!r}")
        return max(found, key=lambda r: len(r.text))

    def correct(self, prompt: str) -> str:
        rec = self.record_for(prompt)
        answer = rec.data["answer"]
        if rec.kind == "ranking":
            order = rec.data["options"][answer]
            # the letter under which the prompt lists the correct order (options may be shuffled)
            for letter, listed in _OPTION_LINE.findall(prompt):
                if [int(x) for x in listed.split(",")] == order:
                    return letter
            raise LookupError(f"the correct order {order} is not among the prompt's options")
        if rec.kind == "retrieval_hard":
            return ", ".join(str(x) for x in answer)
        if rec.kind == "retrieval_easy":
            return str(answer)
        if rec.kind == "unanswerable":
            return "No relevant content mentioned."
        return f"The answer is: {answer}"

    def wrong(self, prompt: str, right: str) -> str:
        rec = self.record_for(prompt)
        if rec.kind == "ranking":
            return next(letter for letter, _ in _OPTION_LINE.findall(prompt) if letter != right)
        if rec.kind == "retrieval_easy":
            return str(int(right) % rec.n_images + 1)
        if rec.kind == "retrieval_hard":
            return right.split(", ")[0] if ", " in right else str(int(right) % rec.n_images + 1)
        return "The answer is: 不知道"

    def reply(self, prompt: str, times_answered: int) -> str:
        """The reply to the ``times_answered``-th (from 0) delivery of ``prompt``."""
        rec = self.record_for(prompt)
        h = stable_hash(prompt)
        if times_answered == 0 and rec.kind in ("ranking", "retrieval_easy", "retrieval_hard") and h % self.unsure_every == 0:
            return UNSURE
        right = self.correct(prompt)
        return self.wrong(prompt, right) if h % self.wrong_every == 1 else right

    def __call__(self, body: dict) -> str:
        prompt = last_user_text(body)
        with self._lock:
            k = self.counts[prompt]
            self.counts[prompt] += 1
        return self.reply(prompt, k)
