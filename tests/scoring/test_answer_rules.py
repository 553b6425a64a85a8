"""The shared last-occurrence choice rule's two variants (``answer_marker``, ``loose_letters``),
by hand: off, the rule is MMMU's; both on, MMMU-Pro's ``evaluate.py``."""

from __future__ import annotations

import pytest

from mmtasks.scoring.answer_rules import last_occurrence_choice_step

LETTERS = ["A", "B", "C", "D"]
TEXTS = {"A": "dog", "B": "cat", "C": "blue sky", "D": "red"}
PRO = {"answer_marker": "Answer:", "loose_letters": True}


@pytest.mark.parametrize(("reply", "mmmu", "pro"), [
    ("(B) seems close. Answer: D", ("B", "letter"), ("D", "answer_line")),  # the text after the marker first
    ("(B) seems close. Answer: (C) blue or D", ("C", "letter"), ("C", "letter")),  # C and D after it: on to the rule
    ("B.C.", (None, None), ("C", "letter")),  # "C " (a letter then a space, once padded), not " C "
    ("A.B.x", (None, None), ("A", "letter")),  # no "X ": "A." and "B.", no " X " to rank them: the first
    ("I think so, B", ("B", "letter"), ("B", "letter")),  # "I " is a candidate too; " B " occurs last
    ("I think it is a dog, or a cat maybe", ("B", "option_text"), ("B", "option_text")),  # the text last seen
    ("I think it is a cat, not a dog", ("A", "option_text"), ("A", "option_text")),
    ("no idea", (None, None), (None, None)),
])
def test_variants(reply: str, mmmu: tuple, pro: tuple) -> None:
    assert last_occurrence_choice_step(reply, LETTERS, TEXTS) == mmmu
    assert last_occurrence_choice_step(reply, LETTERS, TEXTS, **PRO) == pro
