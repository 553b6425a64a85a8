"""lmms-eval's ``extract_mcq_answer`` as the generic rule reads it: hand-checked replies, each
expectation worked out from the rule (ranks: start 10, end 9, phrase 7, "(A)" 6, "A." 5, "A:" 4,
"A)" 3, "A " 2, anywhere 0; of equal ranks the later position). Each benchmark that uses it
compares it with lmms-eval's code run verbatim in its own tests."""

from __future__ import annotations

import pytest

from mmtasks.scoring.lmms_eval_mcq import lmms_eval_mcq_letter


@pytest.mark.parametrize(("reply", "letter"), [
    ("B", "B"),                                   # start (and end)
    ("(C) the third", "C"),                       # "(C)" 6 (the reply starts with "(": no start)
    ("The answer is (B).", "B"),                  # phrase 7 beats the "(B)" 6; the trailing "." is stripped
    ("A. cat, or maybe C.", "A"),                 # start 10 (A then "."), over C's end (C then the stripped ".")
    ("I think D", "D"),                           # end 9; "I" is no choice
    ("Definitely C", "C"),                        # end 9: the "D" of "Definitely" is followed by a letter
    ("Answer: C", "C"),                           # "A" starts "Answer" (followed by a letter: no start); "C" ends it
    ("b", None),                                  # case-sensitive
    ("", None), ("   ", None),
    ("none of them", None),
    ("xAx", "A"),                                 # nothing but the letter inside a word: fallback
    ("Between (A) and (B), I choose A because", "A"),  # phrase "i choose": the first A after it
])
def test_lmms_eval_mcq_letter(reply: str, letter: str | None) -> None:
    assert lmms_eval_mcq_letter(reply, "ABCD") == letter


def test_the_choices_bound_what_is_read() -> None:
    assert lmms_eval_mcq_letter("E", "ABCD") is None
    assert lmms_eval_mcq_letter("E", "ABCDE") == "E"
    assert lmms_eval_mcq_letter("E") == "E"  # lmms-eval's default, A-H
