"""RealWorldQA answer reading: lmms-eval's rule (the task's), its older rule and VLMEvalKit's (variants).

Loaded as a plugin file by ``realworldqa.yaml`` (``plugins:``). xAI released RealWorldQA (with
Grok-1.5 Vision, April 2024) as records of an image, a question that carries its own answer-format
instruction, and an answer, without a scoring script. The harnesses that score it:

- lmms-eval (github.com/EvolvingLMMs-Lab/lmms-eval, commit ``75571cfe``,
  ``lmms_eval/tasks/realworldqa/utils.py`` ``realworldqa_process_results``; the task's rule,
  ``realworldqa_lmms_eval`` here): a question whose answer is one of A-D is multiple choice, and
  the reply's letter is ``extract_mcq_answer`` (``lmms_eval/tasks/_task_utils/mcq_extract.py``;
  :mod:`mmtasks.scoring.lmms_eval_mcq`) among A-D; any other question is open, and the reply, lower-cased, stripped and without trailing
  periods, must equal the answer lower-cased.
- lmms-eval before its pull request #1274 (v0.3 to v0.7, commit ``1233094d``; the variant
  ``lmms_eval_1233094``): a reply that is a number word ("three") becomes its digit; punctuation is
  removed; when an option text of the question (each "X. text" it holds, lettered A, B, ... in the
  order found) occurs in it, the reply becomes that option's letter; then the reply, lower-cased,
  stripped and without trailing periods, must equal the answer lower-cased ("The answer is C" is
  wrong, "C." and "Right" are right).
- VLMEvalKit (github.com/open-compass/VLMEvalKit ``e8e78f05``, ``RealWorldQA`` an
  ``ImageMCQDataset``; the variant ``vlmevalkit``): ``can_infer``
  (:mod:`mmtasks.scoring.vlmevalkit_matching`) over the question's options; an open question
  (VLMEvalKit's own TSV copy has none, ours) is read as lmms-eval reads it.

The adapter ``realworldqa_options`` adds two fields every rule reads: ``options`` (letter -> text of
each line "X. text" of the question) and ``kind`` (``choice`` when the answer is one of A-D, as
lmms-eval decides, else ``open``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mmtasks.errors import DataError
from mmtasks.plugin import adapter, metric, parser
from mmtasks.scoring.lmms_eval_mcq import lmms_eval_mcq_letter
from mmtasks.scoring.metrics import score
from mmtasks.scoring.vlmevalkit_matching import vlmevalkit_letter

_OPTION_LINE = re.compile(r"^([A-Z])\.\s+(.+?)\s*$", re.M)
#: lmms-eval's choice letters (``realworldqa_process_results``: A-D, whatever the question has)
LMMS_EVAL_CHOICES = ("A", "B", "C", "D")


@adapter("realworldqa_options")
def realworldqa_options(record: dict[str, Any]) -> dict[str, Any]:
    """``options`` (letter -> text of each "X. text" line of the question) and ``kind``."""
    options = {m.group(1): m.group(2) for m in _OPTION_LINE.finditer(str(record.get("question", "")))}
    kind = "choice" if str(record.get("answer", "")).strip().upper() in LMMS_EVAL_CHOICES else "open"
    return {**record, "options": options, "kind": kind}


# --- lmms-eval at 75571cfe ---------------------------------------------------------------------

def open_reply(text: str) -> str | None:
    """lmms-eval's reading of an open question's reply: lower-cased, stripped, trailing periods
    removed (None when nothing is left)."""
    cleaned = text.lower().strip().rstrip(".")
    return cleaned or None


@parser("realworldqa_lmms_eval")
def realworldqa_lmms_eval(text: str, doc: Mapping[str, Any]) -> str | None:
    """lmms-eval's rule at 75571cfe: the letter among A-D, or the open reply cleaned."""
    kind = doc.get("kind")
    if kind is None:
        raise DataError("realworldqa_lmms_eval needs the document's kind (choice or open)", field="kind")
    if kind == "choice":
        return lmms_eval_mcq_letter(text, LMMS_EVAL_CHOICES)
    return open_reply(text)


# --- lmms-eval at 1233094d (v0.3 to v0.7) ---------------------------------------------------------

_NUMBER_WORDS = {"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
                 "seven": "7", "eight": "8", "nine": "9", "ten": "10"}
#: the old filter's options: anywhere in the question, not only at a line start
_OLD_OPTION = re.compile(r"\b([A-Z])\.\s+([^\n]*)")


@parser("realworldqa_lmms_eval_1233094")
def realworldqa_lmms_eval_1233094(text: str, doc: Mapping[str, Any]) -> str | None:
    """lmms-eval's rule before #1274: number word -> digit, punctuation removed, an option text
    found -> its letter; the result lower-cased without trailing periods (None: nothing left)."""
    reply = _NUMBER_WORDS.get(text.lower(), text)
    letters: dict[str, str] = {}
    for k, (_, option) in enumerate(_OLD_OPTION.findall(str(doc["question"]))):
        letters[option.strip()] = chr(ord("A") + k)
    cleaned = re.sub(r"[^\w\s]", "", reply).strip()
    # the first option text found, scanning the reply left to right (alternatives in question order)
    pattern = re.compile("|".join(re.escape(t) for t in letters))
    match = pattern.search(cleaned) if letters else None
    read = letters[match.group()] if match and match.group() in letters else cleaned
    return read.lower().strip().rstrip(".") or None


# --- VLMEvalKit at e8e78f05 -----------------------------------------------------------------------

@parser("realworldqa_vlmevalkit")
def realworldqa_vlmevalkit(text: str, doc: Mapping[str, Any]) -> str | None:
    """VLMEvalKit's exact matching over the question's options; an open question as lmms-eval reads it."""
    if doc["kind"] == "choice" and doc["options"]:
        return vlmevalkit_letter(text, doc["options"])
    return open_reply(text)


@metric("realworldqa_match")
def realworldqa_match(parsed: Any, target: Any, doc: Mapping[str, Any]) -> float | None:
    """100 when the reading equals the answer, case aside (a letter, or an open answer), else 0."""
    return score(parsed is not None and str(parsed).lower() == str(target).strip().lower())
