"""BLINK's scoring variants against the peers' code run verbatim (reference/ beside this file):
``lmms_eval`` against lmms-eval's ``blink_process_results`` at 75571cfe, ``vlmevalkit`` against
VLMEvalKit's ``can_infer`` at e8e78f05 as ``extract_answer_from_item`` uses it without a judge model
(a reply it reads nothing in is "Z"), on hand-written tricky replies to two questions."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.folder_runs import plugin
from tests.reference_code import load_reference

REFERENCE = Path(__file__).parent / "reference"
registry, PLUGIN = plugin("blink", "blink_scoring.py")
DOCS = [{"idx": "val_Counting_1", "sub_task": "Counting", "choices": ["1", "2", "3", "4"], "answer": "(B)"},
        {"idx": "val_Relative_Depth_1", "sub_task": "Relative_Depth", "choices": ["Point A", "Point B"], "answer": "(A)"}]
REPLIES = ["B", "(B)", "B.", "b", "B) 2", "(A) Point A", "A", "a", "The answer is (B).", "The answer is B",
           "Based on the image, A", "Point A is closer", "I think it is B", "2", "two", "(C) 3", "  (b)  ",
           "Answer: B", "**B**", "None of them", "Cannot determine the answer", "", "1 circle: A"]


def load(name: str) -> ModuleType:
    return load_reference(name, REFERENCE)


def ours(name: str, reply: str, doc: dict[str, Any]) -> float:
    parsed = registry.parsers.get(name, plugins=[PLUGIN]).fn(reply, doc)
    choice_acc = registry.metrics.get("choice_acc", plugins=[PLUGIN])
    return 0.0 if parsed is None else choice_acc(parsed, doc["answer"].strip("()"), {"options": doc["choices"]})


@pytest.mark.parametrize("doc", DOCS, ids=[d["idx"] for d in DOCS])
def test_the_lmms_eval_variant_equals_lmms_evals_code(doc: dict[str, Any]) -> None:
    lmms = load("lmms_eval_blink_utils_75571cf")
    for reply in REPLIES:
        theirs = lmms.blink_process_results(doc, [reply])["blink_acc"]
        assert ours("blink_lmms_eval", reply, doc) == 100.0 * theirs["is_correct"], reply
        parsed = registry.parsers.get("blink_lmms_eval", plugins=[PLUGIN]).fn(reply, doc)
        assert (parsed or "") == theirs["pred_parsed"], reply


@pytest.mark.parametrize("doc", DOCS, ids=[d["idx"] for d in DOCS])
def test_the_vlmevalkit_variant_equals_vlmevalkits_code(doc: dict[str, Any]) -> None:
    matching = load_reference("vlmevalkit_matching_util_e8e78f0")
    choices = {chr(ord("A") + i): c for i, c in enumerate(doc["choices"])}
    for reply in REPLIES:
        hit = (matching.can_infer(reply, choices) or "Z") == doc["answer"].strip("()")  # extract_answer_from_item, no model
        assert ours("blink_vlmevalkit", reply, doc) == 100.0 * hit, reply


def test_where_the_readings_part() -> None:
    """By hand, gold B of four counts: lmms-eval reads the first letter of any reply."""
    doc = DOCS[0]
    assert ours("blink_lmms_eval", "The answer is (B).", doc) == 0.0       # T
    assert ours("blink_vlmevalkit", "The answer is (B).", doc) == 100.0
    assert ours("blink_lmms_eval", "Based on the image, A", doc) == 100.0  # B, of "Based"
    assert ours("blink_vlmevalkit", "Based on the image, A", doc) == 0.0
