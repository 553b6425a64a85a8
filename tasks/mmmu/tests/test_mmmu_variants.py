"""MMMU's scoring variants against the peers' code run verbatim (reference/ beside this file):

- ``lmms_eval`` against lmms-eval's ``mmmu_process_results`` and ``evaluate_mmmu`` at 75571cfe;
- ``vlmevalkit`` against VLMEvalKit's ``mcq_vanilla_eval`` for MMMU_DEV_VAL at e8e78f05 in its exact
  matching mode (no judge model: what the variant gives without ``--matcher``).

Hand-written tricky replies, each on a multiple-choice question and on open questions, are read by
our plugin (tasks/mmmu/mmmu_scoring.py) and by theirs; the readings and verdicts must agree.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from mmmu_peers import GUESSED, lmms_eval_verdicts, vlmevalkit_hits

from mmtasks.scoring.parsers import is_guess
from tests.folder_runs import plugin

registry, PLUGIN = plugin("mmmu", "mmmu_scoring.py")
OPTIONS = "['a circle', 'a square', 'a triangle', '<image 1>']"


def mc(doc_id: str, answer: str) -> dict[str, Any]:
    return {"id": doc_id, "question": "Which shape is shown in <image 1>?", "options": OPTIONS, "answer": answer,
            "question_type": "multiple-choice"}


def open_question(doc_id: str, answer: str) -> dict[str, Any]:
    return {"id": doc_id, "question": "How many sides does it have?", "options": "[]", "answer": answer,
            "question_type": "open"}


DOCS = [mc("validation_Art_1", "B"), mc("validation_Art_2", "D"), open_question("validation_Math_1", "4"),
        open_question("validation_Math_2", "square"), open_question("validation_Math_3", "['24/7', '3.429']"),
        open_question("validation_Math_4", "x")]
REPLIES = [
    "B", "(B)", "B.", "b", "The answer is B", "The answer is (A), not (B)", "A or B? I'd say B",
    "Not B, since DNA replicates",           # lmms-eval: the "A " of "DNA "; VLMEvalKit: the lone B
    "B. A square",                           # lmms-eval: "A " (the article); VLMEvalKit: A and B are words: the text
    "DNA says: it is not a square",          # lmms-eval: A; VLMEvalKit: the option text
    "It is a square, I think",               # 6 words: the option text for every rule
    "a square", "square", "I cannot tell", "(B) is right; A and C are not", "Cannot determine the answer",
    "The answer is D.", "D", "<image 1>", "The shape is shown in option D: <image 1>",
    "4", "four", "The answer is 4.", "It has 4 sides", "It is a square", "x", "The value is x",
    "24/7", "3.43", "Other Answers", "A", "",
]


def ours(parser: str, doc: dict[str, Any], reply: str) -> Any:
    return registry.parsers.get(parser, plugins=[PLUGIN]).fn(reply, doc)


def score(metric: str, parsed: Any, doc: dict[str, Any]) -> float:
    return registry.metrics.get(metric, plugins=[PLUGIN])(parsed, doc["answer"], doc)


@pytest.mark.parametrize("doc", DOCS, ids=[d["id"] for d in DOCS])
def test_the_lmms_eval_variant_equals_lmms_evals_code(doc: dict[str, Any]) -> None:
    theirs = lmms_eval_verdicts([doc] * len(REPLIES), REPLIES)
    for reply, (parsed, right) in zip(REPLIES, theirs):
        reading = ours("mmmu_lmms_eval", doc, reply)
        if doc["question_type"] == "multiple-choice":
            assert is_guess(reading) == (parsed == GUESSED), reply
            if parsed != GUESSED:
                assert reading == parsed, reply
                assert score("mmmu_lmms_eval_acc", reading, doc) == 100.0 * right, reply
        else:  # every open question is wrong in lmms-eval (eval_open iterates over one string)
            assert not right
            assert score("mmmu_lmms_eval_acc", reading, doc) == 0.0, reply


def test_lmms_evals_guess_is_drawn_with_seed_0_per_document() -> None:
    """Where lmms-eval guesses, the variant draws ``random.Random("0:<id>")`` (lmms-eval's seed 0;
    the authors' 42)."""
    doc = DOCS[0]
    reading = ours("mmmu_lmms_eval", doc, "I cannot tell")
    assert is_guess(reading)
    assert reading == random.Random("0:validation_Art_1").choice("ABCD")


@pytest.mark.parametrize("doc", DOCS, ids=[d["id"] for d in DOCS])
def test_the_vlmevalkit_variant_equals_vlmevalkits_code(doc: dict[str, Any]) -> None:
    pytest.importorskip("pandas")
    hits = vlmevalkit_hits([doc] * len(REPLIES), REPLIES)
    for reply, hit in zip(REPLIES, hits):
        assert score("mmmu_vlmevalkit_acc", ours("mmmu_vlmevalkit", doc, reply), doc) == 100.0 * hit, reply


def test_the_readings_that_part_the_peers() -> None:
    """The replies of the discrepancy's causes, read by hand (gold B of 'a circle', 'a square', ...)."""
    doc = DOCS[0]
    assert ours("mmmu_lmms_eval", doc, "Not B, since DNA replicates") == "A"
    assert ours("mmmu_vlmevalkit", doc, "Not B, since DNA replicates") == "B"
    assert ours("mmmu_lmms_eval", doc, "DNA says: it is not a square") == "A"
    assert ours("mmmu_vlmevalkit", doc, "DNA says: it is not a square") == "B"     # read by its text
    assert ours("mmmu_lmms_eval", doc, "(B) is right; A and C are not") == "B"
    assert ours("mmmu_vlmevalkit", doc, "(B) is right; A and C are not") is None   # three letters: the matcher's turn
    assert ours("mmmu_vlmevalkit", doc, "Cannot determine the answer") == "Z"     # a refusal: wrong, never matched
    four = DOCS[2]
    assert ours("mmmu_vlmevalkit", four, "It has 4 sides") == "A"                 # the gold's text: option A
    assert score("mmmu_vlmevalkit_acc", "A", four) == 100.0
    assert score("mmmu_lmms_eval_acc", ours("mmmu_lmms_eval", four, "4"), four) == 0.0
