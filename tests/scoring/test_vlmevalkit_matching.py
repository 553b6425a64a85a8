"""VLMEvalKit's exact matching (``can_infer``) as the generic rule reads it: hand-checked replies.

Each benchmark that uses it compares it with VLMEvalKit's code run verbatim in its own tests."""

from __future__ import annotations

import pytest

from mmtasks.scoring.parsers import OptionText, read_by
from mmtasks.scoring.vlmevalkit_matching import vlmevalkit_letter

OPTIONS = {"A": "the first", "B": "the second", "C": "the third"}


@pytest.mark.parametrize(("reply", "letter", "how"), [
    ("B", "B", "rule"),
    ("(B) the second", "B", "rule"),
    ("I pick B", "B", "rule"),                                     # among the last four words
    ("B is right because the picture shows the second card very clearly", None, None),  # too early, too long
    ("The correct answer is **b**", "B", "rule"),                  # "answer is X", any case
    ("A B", None, None),                                           # two letters, no option text
    ("the second", "B", "option_text"),
    ("the second or the third", None, None),                       # two option texts
    ("Cannot determine the answer", "Z", "rule"),                  # a refusal: Z, wrong
    ("Z", "Z", "rule"),
    ("Failed to obtain answer via API", None, None),
])
def test_vlmevalkit_letter(reply: str, letter: str | None, how: str | None) -> None:
    found = vlmevalkit_letter(reply, OPTIONS)
    assert found == letter
    assert read_by(found) == how
    assert isinstance(found, OptionText) == (how == "option_text")


LONG = "B is the answer since the left image clearly shows the second card"


@pytest.mark.parametrize(("reply", "current", "older"), [
    (LONG, None, "B"),                                   # a letter early: only the older rule reads it
    ("The correct answer is B and not C", "B", None),    # two letters: "answer is X" only in the current
    ("A B", None, None),
    ("Cannot determine the answer", "Z", "Z"),
])
def test_older_copies_without_the_position_and_answer_is_rules(reply: str, current: str | None,
                                                                older: str | None) -> None:
    assert vlmevalkit_letter(reply, OPTIONS) == current
    assert vlmevalkit_letter(reply, OPTIONS, last_four=False, answer_is=False, cap=False) == older


def test_text_cap_and_letter_set() -> None:
    reply = "Looking closely at every part of the picture, I would say it is the second."
    assert vlmevalkit_letter(reply, OPTIONS) is None                 # longer than twice the option texts
    assert vlmevalkit_letter(reply, OPTIONS, cap=False) == "B"
    many = {chr(65 + i): f"option {i}" for i in range(8)}            # the letters are the choices' keys
    assert vlmevalkit_letter("I pick H", many) == "H"
    assert vlmevalkit_letter("I pick H", OPTIONS) is None
