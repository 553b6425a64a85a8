"""BLINK read the peers' ways: the scoring variants ``lmms_eval`` and ``vlmevalkit`` (the task's own
reading is the generic ``choice`` parser's ``first_letter`` rule, with the authors' LLM matcher on
``--matcher``).

Loaded as a plugin file by ``_base.yaml`` (``plugins:``). Reimplemented from the peers' code; the
tests beside this folder run that code verbatim (``tests/reference/``) on the same replies.

- lmms-eval (github.com/EvolvingLMMs-Lab/lmms-eval, commit ``75571cfe``,
  ``lmms_eval/tasks/blink/utils.py`` ``_extract_answer_letter``, ``blink_process_results``): the
  reply, stripped, must *start* with a letter, after any "(" or spaces (``re.match`` of
  ``[\\(\\s]*([A-Z])[\\)\\.\\s]*``, any case): that letter upper-cased is the answer. So "The answer
  is (B)" reads T, "based on ..." reads B; a reply starting with anything else reads nothing
  (an empty string, never equal to the gold: wrong).
- VLMEvalKit (github.com/open-compass/VLMEvalKit, commit ``e8e78f05``, ``BLINK``, an
  ``ImageMCQDataset`` scored by ``mcq_vanilla_eval``): ``can_infer``
  (:mod:`mmtasks.scoring.vlmevalkit_matching`) over the choices lettered A, B, ...; in its exact
  matching mode (no judge model) a reply it reads nothing in is "Z": wrong. Its LLM step asks with
  its own ``build_prompt_blink``, not the authors' prompt the task's ``answer.matcher`` holds: the
  variant's ``matcher_prompt`` in ``_base.yaml`` (asked with ``--matcher``; this parser's None is
  what goes to it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mmtasks.plugin import parser
from mmtasks.scoring.vlmevalkit_matching import vlmevalkit_letter

_LEADING_LETTER = re.compile(r"[\(\s]*([A-Z])[\)\.\s]*", re.IGNORECASE)


@parser("blink_lmms_eval")
def blink_lmms_eval(text: str, doc: Mapping[str, Any]) -> str | None:
    """lmms-eval's ``_extract_answer_letter``: the reply's leading letter, upper-cased; None when it
    starts with no letter."""
    match = _LEADING_LETTER.match(text.strip())
    return match.group(1).upper() if match else None


@parser("blink_vlmevalkit")
def blink_vlmevalkit(text: str, doc: Mapping[str, Any]) -> str | None:
    """VLMEvalKit's ``can_infer`` over the choices (a letter, "Z", or None: nothing read, "Z")."""
    return vlmevalkit_letter(text, {chr(ord("A") + i): str(c) for i, c in enumerate(doc["choices"])})
