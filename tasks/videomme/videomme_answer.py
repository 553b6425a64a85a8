"""Video-MME's answer rule: ``extract_characters_regex`` of the authors' evaluation script.

Loaded as a plugin file by ``videomme.yaml``. The Video-MME README (github.com/BradyFU/Video-MME,
"Evaluation") points to ``eval_your_results.py`` of github.com/thanku-all/parse_answer (commit
afd52cf); lmms-eval's ``tasks/videomme/utils.py`` copies an older, shorter prefix list. The rule:
the reply, stripped, loses every occurrence of each answer prefix below (the list as the script
writes it: two pairs of its strings have no comma between them, so Python joins each pair into
one string, which is kept so here); a reply of more than 10 words without A, B, C or D is
unanswered; else the first capital A, B, C or D anywhere in it is the answer (also inside a
word: "Definitely C" reads as D). Unanswered ("" in the script) is unparsed here; the script leaves
such a reply out of every figure (it counts only replies it read a letter from), and so does the
task (``answer.unparsed: unscored``), counting them apart.

``videomme_letter_lmms_eval``: lmms-eval's copy of the rule (``lmms_eval/tasks/videomme/utils.py``
at tag v0.7, commit ecfb599), with its shorter prefix list (without "Answer:", "Option:", "The
correct answer", "The correct option": "Answer: B" reads as the "A" of "Answer"), for the task's
``lmms_eval`` scoring variant, where an unanswered reply counts as wrong.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mmtasks.plugin import parser

ANSWER_PREFIXES = [
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    "The best option is" "The correct option is",  # noqa: ISC001 - joined as in the script
    "Best answer:" "Best option:",  # noqa: ISC001
    "Answer:",
    "Option:",
    "The correct answer",
    "The correct option",
]
_LETTER = re.compile(r"[ABCD]")


@parser("videomme_letter")
def videomme_letter(text: str, doc: Mapping[str, Any]) -> str | None:
    return _read(text, ANSWER_PREFIXES)


#: lmms-eval v0.7's list (``extract_characters_regex`` of its ``tasks/videomme/utils.py``), joined
#: strings as it writes them
LMMS_EVAL_PREFIXES = [
    "The best answer is",
    "The correct answer is",
    "The answer is",
    "The answer",
    "The best option is" "The correct option is",  # noqa: ISC001
    "Best answer:" "Best option:",  # noqa: ISC001
]


def _read(text: str, prefixes: list[str]) -> str | None:
    s = text.strip()
    for prefix in prefixes:
        s = s.replace(prefix, "")
    if len(s.split()) > 10 and not _LETTER.search(s):
        return None
    match = _LETTER.search(s)
    return match.group(0) if match else None


@parser("videomme_letter_lmms_eval")
def videomme_letter_lmms_eval(text: str, doc: Mapping[str, Any]) -> str | None:
    return _read(text, LMMS_EVAL_PREFIXES)
