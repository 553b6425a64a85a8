"""MMMU-Pro's answer reading: the authors' ``parse_multi_choice_response`` of MMMU-Pro.

Loaded as a plugin file by ``mmmu_pro.yaml`` and ``mmmu_pro_vision.yaml`` (``plugins:``).

The rule is ``parse_multi_choice_response`` of github.com/MMMU-Benchmark/MMMU
``mmmu-pro/evaluate.py`` (commit bb0b95a), reimplemented from its description. It is MMMU's
rule (``mmmu/utils/eval_utils.py``; the ``choice`` parser's ``rule: mmmu``) with three changes,
which the shared rule takes as parameters (``last_occurrence_choice_step(...,
answer_marker="Answer:", loose_letters=True)`` in ``mmtasks/scoring/answer_rules.py``):

0. first, the text after the last "Answer:" (stripped): when exactly one option letter occurs
   in it (anywhere, as a substring: "Answer: B" -> B; "Answer: (C) Dog" names C and D, so it
   falls through), that letter;
1. the reply loses ``, . ! ? ; : '`` at its ends and is padded with a space; every letter whose
   "(A)" appears;
2. else every letter followed by a space ("A ", not MMMU's " A ": "I think" names I among ten
   options);
3. else every letter followed by a period ("A.");
4. else, for replies of more than 5 words, every option whose text (case-folded) appears.

Among several candidates the last occurrence wins: of "(A)" for step 1, of " A " for steps 2
and 3 (for step 3 no " A " occurs, so every position is -1 and the first letter wins, numpy's
argmax), of the option text for step 4. No candidate: the authors draw ``random.choice`` of the
letters (unseeded in evaluate.py); here a seeded letter ``random.Random("<seed>:<id>")``
(ours), counted as guessed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from mmtasks.plugin import ParserArgs, parser
from mmtasks.scoring.answer_rules import last_occurrence_choice_step
from mmtasks.scoring.parsers import OptionText, option_texts, random_letter


class ProChoiceArgs(ParserArgs):
    options_field: str = "options"
    """The record field holding the options (MMMU-Pro: a string holding a Python list)."""
    fallback: Literal["none", "random"] = "random"
    """No letter found: ``random`` (the authors' choice), a seeded guess; ``none``: unparsed."""
    seed: int = 42
    """The random fallback's seed (ours: evaluate.py does not seed its ``random``)."""
    id_field: str = "id"
    """The record field that names the document in the random fallback's seed."""


def pro_choice_step(reply: str, letters: Sequence[str], texts: Mapping[str, str]) -> tuple[str | None, str | None]:
    """The letter the authors' rule picks and how (``"answer_line"``, ``"letter"``,
    ``"option_text"``); (None, None) where the authors would guess."""
    return last_occurrence_choice_step(reply, letters, texts, answer_marker="Answer:", loose_letters=True)


@parser("mmmu_pro_choice", args=ProChoiceArgs)
def mmmu_pro_choice(text: str, doc: Mapping[str, Any], args: ProChoiceArgs) -> str | None:
    """The option letter by the authors' MMMU-Pro rule (see the module docstring)."""
    texts = option_texts(doc, args.options_field)
    letters = list(texts)
    letter, step = pro_choice_step(text, letters, texts)
    if letter is None:
        return random_letter(doc, letters, args) if args.fallback == "random" else None  # type: ignore[arg-type]
    return OptionText(letter) if step == "option_text" else letter
