"""VLMEvalKit's exact matching of a multiple-choice reply to an option letter, as a generic rule.

VLMEvalKit scores every ``ImageMCQDataset`` (MMBench, AI2D_TEST, RealWorldQA, ...) without a judge
model by ``can_infer`` of github.com/open-compass/VLMEvalKit ``vlmeval/utils/matching_util.py``
(commit ``e8e78f05``), reimplemented here from its description (a benchmark's tests compare it with
that code, bundled under its ``tests/reference/``):

1. ``can_infer_option``: a reply holding "Failed to obtain answer via API" reads nothing; one
   holding a refusal phrase reads "Z" (no option: wrong). Otherwise ``.()[],:;!*#{}`` become spaces
   and the reply is split into words; when exactly one option letter is a word, it is the answer if
   it is among the last four words; when no letter is a word but "Z" is, "Z". Else "answer is X"
   ("correct answer is **B**", any case, X one of A-D) names X when X is an option.
2. ``can_infer_text``: a reply at most twice as long as all option texts together names the option
   whose text (case-folded) it contains, when exactly one does.

:func:`vlmevalkit_letter` returns the letter (an :class:`~mmtasks.scoring.parsers.OptionText` when
read from the option's text) or None. Benchmarks register their own parser on it (the options of a
record are each benchmark's own fields; the letters are the keys of ``choices``, A-D, A-I, A-Z ...).

Older copies of ``matching_util.py`` (still pinned in some authors' repositories) lack three of the
rules above; keyword flags turn each off: ``last_four=False`` (one option letter among the words is
the answer wherever it stands), ``answer_is=False`` (no "answer is X") and ``cap=False`` (no length
cap on ``can_infer_text``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from mmtasks.scoring.parsers import OptionText

#: the phrases ``can_infer_option`` reads as "Z" (no option)
REFUSALS = ("Sorry, I can't help with images of people yet.", "I can't process this file.",
            "I'm sorry, but without the image provided", "Cannot determine the answer")
_PUNCTUATION = str.maketrans({c: " " for c in ".()[],:;!*#{}"})
_VERBOSE = re.compile(r"(?i)(?:correct\s+)?answer\s+is\s+\**([ABCD])\**")


def infer_option(answer: str, choices: Mapping[str, str], *, last_four: bool = True,
                 answer_is: bool = True) -> str | None:
    """``can_infer_option``: the letter, "Z", or None (nothing read). ``last_four=False``: a single
    option letter among the words is the answer wherever it stands; ``answer_is=False``: no "answer is X"."""
    if "Failed to obtain answer via API" in answer:
        return None
    if any(phrase in answer for phrase in REFUSALS):
        return "Z"
    words = answer.translate(_PUNCTUATION).split()
    named = [c for c in choices if c in words]
    if len(named) == 1:
        if not last_four or words.index(named[0]) > len(words) - 5:
            return named[0]
    elif not named and "Z" in words:
        return "Z"
    if not answer_is:
        return None
    match = _VERBOSE.search(answer)
    if match and match.group(1).upper() in choices:
        return match.group(1).upper()
    return None


def infer_text(answer: str, choices: Mapping[str, str], *, cap: bool = True) -> str | None:
    """``can_infer_text``: the one option whose text the (short enough, unless ``cap=False``) reply
    contains, or None."""
    answer = answer.lower()
    if cap and len(answer) > 2 * sum(len(v) for v in choices.values()):
        return None
    named = [k for k, v in choices.items() if v.lower() in answer]
    return named[0] if len(named) == 1 else None


def vlmevalkit_letter(text: str, choices: Mapping[str, str], *, last_four: bool = True, answer_is: bool = True,
                      cap: bool = True) -> str | None:
    """``can_infer``: the option letter (or "Z") a reply names, by letter then by option text; None:
    nothing read (VLMEvalKit's exact matching then records "Z", wrong). The flags: see the module."""
    letter = infer_option(text, choices, last_four=last_four, answer_is=answer_is)
    if letter is not None:
        return letter
    found = infer_text(text, choices, cap=cap)
    return OptionText(found) if found is not None else None
