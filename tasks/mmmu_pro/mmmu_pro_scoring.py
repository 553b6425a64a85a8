"""MMMU-Pro's answer reading: the authors' ``parse_multi_choice_response`` of MMMU-Pro.

Loaded as a plugin file by ``mmmu_pro.yaml`` and ``mmmu_pro_vision.yaml`` (``plugins:``).

The rule is ``parse_multi_choice_response`` of github.com/MMMU-Benchmark/MMMU
``mmmu-pro/evaluate.py`` (commit bb0b95a), reimplemented from its description. It is MMMU's
rule (``mmmu/utils/eval_utils.py``; the ``choice`` parser's ``rule: mmmu``) with three changes,
so the MMMU rule cannot be reused as it is:

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
from mmtasks.scoring.parsers import OptionText, option_texts, random_letter

_EDGE_CHARACTERS = (",", ".", "!", "?", ";", ":", "'")


class ProChoiceArgs(ParserArgs):
    options_field: str = "options"
    """The record field holding the options (MMMU-Pro: a string holding a Python list)."""
    fallback: Literal["none", "random"] = "random"
    """No letter found: ``random`` (the authors' choice), a seeded guess; ``none``: unparsed."""
    seed: int = 42
    """The random fallback's seed (ours: evaluate.py does not seed its ``random``)."""
    id_field: str = "id"
    """The record field that names the document in the random fallback's seed."""


def _last(candidates: Sequence[str], position: Any) -> str:
    best = candidates[0]
    for cand in candidates[1:]:
        if position(cand) > position(best):
            best = cand
    return best


def pro_choice_step(reply: str, letters: Sequence[str], texts: Mapping[str, str]) -> tuple[str | None, str | None]:
    """The letter the authors' rule picks and how (``"answer_line"``, ``"letter"``,
    ``"option_text"``); (None, None) where the authors would guess."""
    marker = reply.rfind("Answer:")
    if marker != -1:
        tail = reply[marker + len("Answer:"):].strip()
        named = [k for k in letters if k in tail]
        if len(named) == 1:
            return named[0], "answer_line"
    for char in _EDGE_CHARACTERS:
        reply = reply.strip(char)
    padded = f" {reply} "
    bracketed = [k for k in letters if f"({k})" in padded]
    if bracketed:
        return _last(bracketed, lambda k: padded.rfind(f"({k})")), "letter"
    spaced = [k for k in letters if f"{k} " in padded] or [k for k in letters if f"{k}." in padded]
    if spaced:
        return _last(spaced, lambda k: padded.rfind(f" {k} ")), "letter"
    if len(padded.split()) > 5:
        folded = padded.lower()
        named = [k for k in letters if k in texts and texts[k].lower() in folded]
        if named:
            return _last(named, lambda k: folded.rfind(texts[k].lower())), "option_text"
    return None, None


@parser("mmmu_pro_choice", args=ProChoiceArgs)
def mmmu_pro_choice(text: str, doc: Mapping[str, Any], args: ProChoiceArgs) -> str | None:
    """The option letter by the authors' MMMU-Pro rule (see the module docstring)."""
    texts = option_texts(doc, args.options_field)
    letters = list(texts)
    letter, step = pro_choice_step(text, letters, texts)
    if letter is None:
        return random_letter(doc, letters, args) if args.fallback == "random" else None  # type: ignore[arg-type]
    return OptionText(letter) if step == "option_text" else letter
