"""VLMEvalKit's yes/no reading (``YOrN_Extraction``) as the generic rule reads it: hand-checked replies.

Each benchmark that uses it compares it with VLMEvalKit's code run verbatim in its own tests."""

from __future__ import annotations

import pytest

from mmtasks.scoring.vlmevalkit_yorn import vlmevalkit_yes_no, yorn_words
from tests.reference_code import load_reference

REPLIES = ["Yes", "No.", "yes, there is a cat", "Yes, no doubt", "(no)", "yes/no", "Nope.", "y", "",
           "There are 3,5 cats: yes", "no.yes", "...no...", "yes!", "NO", "no\nyes", "  yes  "]


def test_equals_vlmevalkits_code() -> None:
    """The same readings as ``YOrN_Extraction`` run verbatim (tests/reference/vlmevalkit_yorn_e8e78f0.py)."""
    theirs = load_reference("vlmevalkit_yorn_e8e78f0").YOrN_Extraction
    names = {"Yes": "yes", "No": "no", "Unknown": None}
    assert [vlmevalkit_yes_no(r) for r in REPLIES] == [names[theirs(r)] for r in REPLIES]


@pytest.mark.parametrize(("reply", "read"), [
    ("Yes", "yes"),
    ("No.", "no"),                                   # the period dropped
    ("yes, there is a cat", "yes"),                  # a comma before a space dropped
    ("Yes, no doubt", None),                         # both words: Unknown
    ("(no)", "no"),                                  # marks touching no space become spaces
    ("yes/no", None),
    ("Nope.", None),                                 # no word "no"
    ("y", None),
    ("", None),
    ("There are 3,5 cats: yes", "yes"),
])
def test_vlmevalkit_yes_no(reply: str, read: str | None) -> None:
    assert vlmevalkit_yes_no(reply) == read


def test_the_words() -> None:
    assert yorn_words("Yes, it is (a) cat.") == ["yes", "it", "is", "a", "cat"]
    assert yorn_words("3.5 is no") == ["3.5", "is", "no"]             # a period between digits kept
    assert yorn_words("no-entry yes") == ["no", "entry", "yes"]       # "-" inside a word: a space
