"""MMMU read the peers' ways: the scoring variants ``lmms_eval`` and ``vlmevalkit`` (the task's own rule,
the authors', is the ``choice``/``open_answer`` parsers and ``open_answer_acc``).

Loaded as a plugin file by ``_base.yaml`` (``plugins:``). Reimplemented from the peers' code; the
tests beside this folder run that code verbatim (``tests/reference/``) on the same replies.

- lmms-eval (github.com/EvolvingLMMs-Lab/lmms-eval, commit ``75571cfe``, task ``mmmu_val``:
  ``lmms_eval/tasks/mmmu/utils.py`` ``mmmu_process_results``, ``evaluate_mmmu``; the choice rule
  ``parse_mmmu_multi_choice_response`` of ``lmms_eval/tasks/_task_utils/mmmu_mcq_utils.py``):
  multiple choice: "(A)" forms, else every letter followed by a space ("A ", also the "A " of
  "DNA " or of the article "A circle"), else every letter followed by a period, else (replies of
  more than 5 words) the option texts; the last " A " wins (the authors' rule wants " A ", between
  spaces, and has no "A." step). Nothing found: ``random.choice`` of the letters from Python's
  global stream, which lmms-eval seeds with 0 (``simple_evaluate(random_seed=0)``, ``--seed``'s
  first value), not 42 as the authors' scripts do; here ``random.Random("0:<id>")``, a draw of the
  document's own. Open questions: ``parse_open_response``'s candidates, of which
  ``mmmu_process_results`` keeps ``str(candidates[0])`` (one string, since lmms-eval's #724,
  736454b5, June 2025); ``evaluate_mmmu`` then gives that string to ``eval_open``, which iterates
  over it, so each *character* is a prediction: a gold answer is found only if it is inside one
  character, which no normalised gold is (a one-character gold is " x"/"x "). Every open question
  is scored wrong.
- VLMEvalKit (github.com/open-compass/VLMEvalKit, commit ``e8e78f05``, ``MMMU_DEV_VAL``, an
  ``ImageMCQDataset``: ``vlmeval/dataset/utils/multiple_choice.py`` ``mcq_vanilla_eval``,
  ``MMMU_preproc``, ``extract_answer_from_item``): an open question becomes a two-option one,
  A = the gold answer, B = "Other Answers", gold A (``MMMU_preproc``; a gold that is no capital
  letter becomes A); every reply is read by ``can_infer``
  (:mod:`mmtasks.scoring.vlmevalkit_matching`) over those options; what it cannot read goes to
  the LLM matcher (``--matcher``: ``answer.matcher``, VLMEvalKit's ``build_prompt``) or, without
  one, is "Z": wrong.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from mmtasks.plugin import metric, parser
from mmtasks.scoring.answer_rules import last_occurrence_choice_step, normalize, parse_open
from mmtasks.scoring.metrics import score
from mmtasks.scoring.parsers import Guess, OptionText, literal_options
from mmtasks.scoring.vlmevalkit_matching import vlmevalkit_letter

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
#: lmms-eval's Python ``random`` seed (``simple_evaluate``'s ``random_seed`` default, ``--seed 0,...``)
LMMS_EVAL_SEED = 0
#: VLMEvalKit's second option of an open question (``MMMU_preproc``)
OTHER_ANSWERS = "Other Answers"


def is_choice(doc: Mapping[str, Any]) -> bool:
    return doc["question_type"] == "multiple-choice"


def option_map(doc: Mapping[str, Any]) -> dict[str, str]:
    """Letter -> option text of a multiple-choice question, A, B, C ... in order."""
    return {LETTERS[i]: str(o) for i, o in enumerate(literal_options(doc, "options", doc["options"]))}


# --- lmms-eval at 75571cfe --------------------------------------------------------------------


@parser("mmmu_lmms_eval", target="raw")
def mmmu_lmms_eval(text: str, doc: Mapping[str, Any]) -> str:
    """lmms-eval's reading: a letter (loose letters, a seed-0 guess when none), or for an open
    question the string of the first candidate ``parse_open_response`` gives."""
    if is_choice(doc):
        texts = option_map(doc)
        letter, step = last_occurrence_choice_step(text, list(texts), texts, loose_letters=True)
        if letter is None:
            return Guess(random.Random(f"{LMMS_EVAL_SEED}:{doc['id']}").choice(list(texts)))
        return OptionText(letter) if step == "option_text" else letter
    candidates = parse_open(text)
    # lmms-eval takes the first of a set (an order that changes between processes); no score
    # depends on which: see mmmu_lmms_eval_acc
    return str(candidates[0]) if candidates else ""


@metric("mmmu_lmms_eval_acc")
def mmmu_lmms_eval_acc(parsed: Any, target: Any, doc: Mapping[str, Any]) -> float:
    """lmms-eval's ``evaluate_mmmu``: ``eval_multi_choice`` (the letter equals the answer), or
    ``eval_open`` on one string, each character of which is a prediction."""
    if parsed is None:
        return 0.0
    gold = str(doc["answer"])
    if is_choice(doc):
        return score(parsed == gold)
    accepted = normalize(gold)  # the answer field is a string, never a list: normalize_str of it whole
    return score(any(isinstance(ans, str) and ans in char for char in str(parsed) for ans in accepted))


# --- VLMEvalKit at e8e78f05 -------------------------------------------------------------------


def vlmevalkit_options(doc: Mapping[str, Any]) -> dict[str, str]:
    """The options VLMEvalKit scores a question over: its own, or (an open question,
    ``MMMU_preproc``) A = the gold answer, B = "Other Answers"."""
    return option_map(doc) if is_choice(doc) else {"A": str(doc["answer"]), "B": OTHER_ANSWERS}


def vlmevalkit_gold(doc: Mapping[str, Any]) -> str:
    """``mcq_vanilla_eval``'s gold: the answer when it is a capital letter, else A."""
    answer = str(doc["answer"])
    return answer if answer in LETTERS else "A"


@parser("mmmu_vlmevalkit", target="raw")
def mmmu_vlmevalkit(text: str, doc: Mapping[str, Any]) -> str | None:
    """``can_infer`` over VLMEvalKit's options (a letter, or "Z": no option); None: nothing read
    (the matcher's turn, else "Z")."""
    return vlmevalkit_letter(text, vlmevalkit_options(doc))


@metric("mmmu_vlmevalkit_acc")
def mmmu_vlmevalkit_acc(parsed: Any, target: Any, doc: Mapping[str, Any]) -> float:
    """``eval_vanilla``: the letter read equals VLMEvalKit's gold."""
    return score(parsed is not None and str(parsed) == vlmevalkit_gold(doc))
