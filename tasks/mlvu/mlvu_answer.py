"""MLVU's answer rule: ``check_ans`` of the authors' multiple-choice template.

Loaded as a plugin file by the ``mlvu_dev_*`` tasks. github.com/JUNJIE99/MLVU
``evaluation/multiple_choice_evaluation/choice_bench.py`` (commit fd060c1), the script the
evaluation README runs: the right option's letter is read from the gold "(X) answer"; the reply,
as it is (not stripped), is cut to the one character before its first ")" when it has one, and
must then equal that letter. The authors prefill "Best Option: (" so a reply reads "A) ..." (ours:
no prefill, a chat reply "(A) ..." reads the same). Here the character read is the answer when
it is one of the document's letters, else the reply is unparsed (scored 0, as the authors' test
fails): "A. Yellow", " A" and "A (Yellow)" are wrong, "A", "(A) Yellow", "Best option: (A)" right.

``mlvu_lmms_eval``: lmms-eval's reading (``mlvu_process_results``: ``extract_mcq_answer`` over
A-D, ``mmtasks.scoring.lmms_eval_mcq``), for the scoring variant ``lmms_eval``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mmtasks.errors import DataError
from mmtasks.plugin import parser
from mmtasks.scoring.lmms_eval_mcq import lmms_eval_mcq_letter


def check_reading(text: str) -> str:
    """What check_ans compares with the right letter."""
    if ")" in text:
        index = text.index(")")
        return text[index - 1:index]
    return text


@parser("mlvu_check")
def mlvu_check(text: str, doc: Mapping[str, Any]) -> str | None:
    read = check_reading(text)
    candidates = doc.get("candidates")
    if not isinstance(candidates, list):
        raise DataError("mlvu_check needs the document's candidates", field="candidates")
    letters = [chr(ord("A") + i) for i in range(len(candidates))]
    return read if read in letters else None


@parser("mlvu_lmms_eval")
def mlvu_lmms_eval(text: str, doc: Mapping[str, Any]) -> str | None:
    return lmms_eval_mcq_letter(text, "ABCD")
