"""AI2D answer reading: lmms-eval's (the task's) and VLMEvalKit's exact matching (a scoring variant, and
the reading of the task ``ai2d_vlmevalkit``).

Loaded as a plugin file by the AI2D tasks (``plugins:``).

- lmms-eval (github.com/EvolvingLMMs-Lab/lmms-eval, commit ``75571cfe``, ``lmms_eval/tasks/ai2d/``):
  ``ai2d.yaml``'s filter ``MultiChoiceRegexFilter`` (``utils.py``) keeps the letter of a reply that
  starts with one followed by a period (``^\\s*([A-Z])\\.``), else the whole reply; the metric
  ``exact_match`` with ``ignore_case`` and ``ignore_punctuation`` (``lmms_eval/api/metrics.py``
  ``exact_match_hf_evaluate``) lower-cases both and removes ``string.punctuation`` from both, with no
  other normalisation (whitespace stays: " B" is wrong), and compares them to the gold letter.
  ``ai2d_lmms_eval`` returns what the filter keeps; ``ai2d_exact_match`` compares as the metric does.
- VLMEvalKit (github.com/open-compass/VLMEvalKit ``e8e78f05``, ``AI2D_TEST``, an ``ImageMCQDataset``):
  ``can_infer`` over the options (:mod:`mmtasks.scoring.vlmevalkit_matching`); ``ai2d_vlmevalkit``.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from typing import Any

from mmtasks.plugin import metric, parser
from mmtasks.scoring.metrics import score
from mmtasks.scoring.vlmevalkit_matching import vlmevalkit_letter

_LEADING_LETTER = re.compile(r"^\s*([A-Z])\.")
_NO_PUNCTUATION = str.maketrans("", "", string.punctuation)


def letters(doc: Mapping[str, Any]) -> list[str]:
    """A, B, C ... for the record's options (lmms-eval's ``ai2d_doc_to_text`` and VLMEvalKit's columns)."""
    return [chr(ord("A") + k) for k in range(len(doc["options"]))]


@parser("ai2d_lmms_eval")
def ai2d_lmms_eval(text: str, doc: Mapping[str, Any]) -> str | None:
    """lmms-eval's filter: the letter of a reply starting "X.", else the reply as it is (None: empty)."""
    match = _LEADING_LETTER.match(text)
    kept = match.group(1) if match else text
    return kept or None


@metric("ai2d_exact_match")
def ai2d_exact_match(parsed: Any, target: Any, doc: Mapping[str, Any]) -> float:
    """lmms-eval's ``exact_match`` (ignore_case, ignore_punctuation): both lower-cased and without
    punctuation, then equal; 100 or 0."""
    if parsed is None:
        return score(False)

    def norm(value: Any) -> str:
        return str(value).lower().translate(_NO_PUNCTUATION)

    return score(norm(parsed) == norm(target))


@parser("ai2d_vlmevalkit")
def ai2d_vlmevalkit(text: str, doc: Mapping[str, Any]) -> str | None:
    """VLMEvalKit's exact matching (``can_infer``) over the options lettered A, B, ..."""
    return vlmevalkit_letter(text, dict(zip(letters(doc), (str(o) for o in doc["options"]))))
