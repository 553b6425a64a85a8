"""MUIRBench read the peers' ways: the scoring variants ``lmms_eval`` and ``vlmevalkit`` (the task's
own reading is the authors' ``postprocess.py``: the ``choice`` parser's ``mmmu`` rule with its
seeded random fallback).

Loaded as a plugin file by ``muirbench.yaml`` (``plugins:``). Reimplemented from the peers' code;
the tests beside this folder run that code verbatim (``tests/reference/``) on the same replies.

- lmms-eval (github.com/EvolvingLMMs-Lab/lmms-eval, commit ``75571cfe``,
  ``lmms_eval/tasks/muirbench/utils.py``: the filter ``MultiChoiceRegexFilter.apply`` and
  ``muir_aggregation``): a reply starting with a capital letter and a period ("B." or "  B. two",
  ``^\\s*([A-Z])\\.``) is that letter; any other reply stays whole; it is right when, lower-cased
  and stripped, it equals the answer letter lower-cased ("B", " b " are right; "(B)", "B)",
  "The answer is B" are wrong). No random guess.
- VLMEvalKit (github.com/open-compass/VLMEvalKit, commit ``e8e78f05``, ``MUIRBench``, an
  ``ImageMCQDataset`` scored by ``mcq_vanilla_eval``): ``can_infer``
  (:mod:`mmtasks.scoring.vlmevalkit_matching`) over the options lettered A, B, ...; in its exact
  matching mode (no judge model) a reply it reads nothing in is "Z": wrong. Its LLM step (its
  generic ``build_prompt``) is not modelled: the task has no matcher (the authors use none).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mmtasks.plugin import metric, parser
from mmtasks.scoring.metrics import score
from mmtasks.scoring.vlmevalkit_matching import vlmevalkit_letter

_LETTER_PERIOD = re.compile(r"^\s*([A-Z])\.")


@parser("muirbench_lmms_eval", target="raw")
def muirbench_lmms_eval(text: str, doc: Mapping[str, Any]) -> str:
    """lmms-eval's filter: the leading "X." letter, else the whole reply (never unparsed)."""
    match = _LETTER_PERIOD.match(text)
    return match.group(1) if match else text


@metric("muirbench_lmms_eval_acc")
def muirbench_lmms_eval_acc(parsed: Any, target: Any, doc: Mapping[str, Any]) -> float:
    """``muir_aggregation``'s test: the filtered reply equals the answer, case and surrounding spaces aside."""
    return score(parsed is not None and str(parsed).lower().strip() == str(doc["answer"]).lower().strip())


@parser("muirbench_vlmevalkit")
def muirbench_vlmevalkit(text: str, doc: Mapping[str, Any]) -> str | None:
    """VLMEvalKit's ``can_infer`` over the options (a letter, "Z", or None: nothing read, "Z")."""
    return vlmevalkit_letter(text, {chr(ord("A") + i): str(o) for i, o in enumerate(doc["options"])})
