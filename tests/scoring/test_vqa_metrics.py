"""ANLS, relaxed accuracy and the VQA accuracy (mmtasks/scoring/vqa_metrics.py) on hand-computed
cases; the benchmark folders' tests compare them with the reference scripts run verbatim."""

from __future__ import annotations

import pytest

from mmtasks.errors import DataError
from mmtasks.registry import metrics
from mmtasks.scoring.vqa_metrics import (AnlsArgs, RelaxedArgs, VqaAccuracyArgs, anls, levenshtein, relaxed_correct,
                                         vqa_accuracy, vqa_answer_form)


@pytest.mark.parametrize(("a", "b", "d"), [("", "", 0), ("abc", "", 3), ("kitten", "sitting", 3),
                                           ("flaw", "lawn", 2), ("same", "same", 0), ("ab", "ba", 2)])
def test_levenshtein(a: str, b: str, d: int) -> None:
    assert levenshtein(a, b) == d == levenshtein(b, a)


@pytest.mark.parametrize(("reply", "answers", "expected"), [
    ("Paris", ["paris"], 1.0),                       # case
    ("  new   york ", ["New York"], 1.0),            # whitespace collapsed for the distance
    ("pari", ["paris"], 0.8),                        # 1 edit / 5
    ("pari   ", ["paris"], 1 - 1 / 7),              # divided by the reply's length as given (7)
    ("abcd", ["abcdefgh"], 0.5),                     # exactly 0.5: kept
    ("abc", ["abcdefg"], 0.0),                       # 3/7 < 0.5: 0
    ("1995", ["1994", "1995"], 1.0),                 # the best reference
    ("", ["x"], 0.0),
    ("", [""], 1.0),                                 # an empty pair: distance 0
])
def test_anls(reply: str, answers: list[str], expected: float) -> None:
    assert anls(reply, answers) == pytest.approx(expected)


@pytest.mark.parametrize(("reply", "target", "expected"), [
    ("10.4", "10", True), ("10.6", "10", False), ("9.5", "10", True), ("9.49", "10", False),
    ("50%", "0.5", True), ("0.5", "50%", True), ("50", "50%", False),
    ("Yes", "yes", True), ("yes.", "yes", False),
    ("0", "0", True), ("0.0", "0", False),           # a zero reference is compared as text
    (" 12", "12", True),                              # float() reads it
    ("twelve", "12", False),
])
def test_relaxed_correct(reply: str, target: str, expected: bool) -> None:
    assert relaxed_correct(reply, target) is expected


@pytest.mark.parametrize(("text", "evalai", "vlmevalkit"), [
    ("The Coca-Cola", "coca cola", "coca cola"),
    ("Two dogs.", "2 dogs", "2 dogs"),
    ("3.", "3", "3."),                      # vqaEval's period rule drops it; VLMEvalKit's keeps it
    ("John's", "john 's", "john's"),       # EvalAI splits "'s" off
    ("Dont", "don't", "don't"),
    ("1,000", "1000", "1000"),
    ("what?", "what", "what"),
    ("a / b", "b", "b"),                    # "/" touching a space: removed; "a" is an article
    ("x/y", "x y", "x y"),
    ("3.5", "3.5", "3.5"),
])
def test_vqa_answer_form(text: str, evalai: str, vlmevalkit: str) -> None:
    assert vqa_answer_form(text, "evalai") == evalai
    assert vqa_answer_form(text, "vlmevalkit") == vlmevalkit


def test_vqa_accuracy_counts_each_answer_left_out() -> None:
    # 2 of 10 humans said "stop": leaving out one of them leaves 1 match (1/3), 2 times;
    # leaving out another leaves 2 (2/3), 8 times: (2 * 1/3 + 8 * 2/3) / 10 = 0.6
    answers = ["stop", "stop"] + ["go"] * 8
    assert vqa_accuracy("Stop.", answers) == pytest.approx(0.6)
    assert vqa_accuracy("go", answers) == pytest.approx(1.0)     # 7 or 8 others: capped at 1
    assert vqa_accuracy("yield", answers) == 0.0
    # 3 of 10: (3 * 2/3 + 7 * 1) / 10 = 0.9
    assert vqa_accuracy("one", ["1", "1", "1"] + ["x"] * 7) == pytest.approx(0.9)


def test_the_metrics_by_name() -> None:
    doc = {"questionId": "q1"}
    assert metrics.get("anls")("pari", ["paris"], doc) == pytest.approx(80.0)
    assert metrics.get("anls")("abc", ["abcd"], doc, args=AnlsArgs(threshold=0.8)) == 0.0
    assert metrics.get("anls")(None, ["x"], doc) == 0.0
    assert metrics.get("relaxed_accuracy")("12 ", "12%", doc) == 0.0
    assert metrics.get("relaxed_accuracy")("Yes ", "yes", doc) == 0.0
    assert metrics.get("relaxed_accuracy")("Yes ", "yes", doc, args=RelaxedArgs(strip=True)) == 100.0
    assert metrics.get("vqa_accuracy")("3.", ["3"] * 10, doc) == 100.0
    assert metrics.get("vqa_accuracy")("3.", ["3"] * 10, doc, args=VqaAccuracyArgs(normalization="vlmevalkit")) == 0.0
    with pytest.raises(DataError, match="target"):
        metrics.get("anls")("x", [], doc)
