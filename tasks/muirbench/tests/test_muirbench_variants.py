"""MUIRBench's scoring variants against the peers' code run verbatim (reference/ beside this file):
``lmms_eval`` against lmms-eval's ``MultiChoiceRegexFilter.apply`` and ``muir_aggregation`` at
75571cfe, ``vlmevalkit`` against VLMEvalKit's ``can_infer`` at e8e78f05 as ``extract_answer_from_item``
uses it without a judge model (a reply it reads nothing in is "Z"), on hand-written tricky replies."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.folder_runs import plugin

REFERENCE = Path(__file__).parent / "reference"
registry, PLUGIN = plugin("muirbench", "muirbench_scoring.py")
DOC = {"idx": "muir_1", "task": "Counting", "image_relation": "Independent", "image_type": "Drawings",
       "question": "How many circles are there in total in <image> and <image>?",
       "options": ["2", "3", "4", "None of the choices provided"], "answer": "B"}
REPLIES = ["B", "B.", "B. 3", "  B. three", "b", " b ", "b.", "(B)", "B)", "B: 3", "The answer is B", "The answer is B.",
           "3", "three", "A. 2 or B. 3", "I think B", "None of the choices provided", "Cannot determine the answer",
           "", "C.", "(C) 4"]


class ExtendedRegexFilter:
    """Stands in for lmms-eval's base class (lmms_eval/filters/extraction.py), whose state apply never reads."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass


def load(name: str, **given: Any) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"reference_muirbench_{name}", REFERENCE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(given)
    spec.loader.exec_module(module)
    return module


def ours(name: str, metric: str, reply: str) -> float:
    parsed = registry.parsers.get(name, plugins=[PLUGIN]).fn(reply, DOC)
    fn = registry.metrics.get(metric, plugins=[PLUGIN])
    return 0.0 if parsed is None else fn(parsed, DOC["answer"], DOC)


def test_the_lmms_eval_variant_equals_lmms_evals_code() -> None:
    lmms = load("lmms_eval_muirbench_utils_75571cf", ExtendedRegexFilter=ExtendedRegexFilter)
    filtered = lmms.MultiChoiceRegexFilter(regex_pattern="([A-Z])\\.", group_select=0, ignore_case=True,
                                           ignore_punctuation=True).apply([[r] for r in REPLIES], [DOC] * len(REPLIES))
    for reply, pred in zip(REPLIES, filtered):
        result = lmms.muir_process_results(DOC, [pred])["muirbench_score_overall"]
        score = lmms.muir_aggregation([result])
        assert ours("muirbench_lmms_eval", "muirbench_lmms_eval_acc", reply) == 100.0 * score, reply


def test_the_vlmevalkit_variant_equals_vlmevalkits_code() -> None:
    matching = load("matching_util_e8e78f0")
    choices = {chr(ord("A") + i): c for i, c in enumerate(DOC["options"])}
    for reply in REPLIES:
        hit = (matching.can_infer(reply, choices) or "Z") == DOC["answer"]  # extract_answer_from_item, no model
        assert ours("muirbench_vlmevalkit", "choice_acc", reply) == 100.0 * hit, reply


@pytest.mark.parametrize(("reply", "lmms_eval", "vlmevalkit"), [
    ("(B)", 0.0, 100.0), ("The answer is B", 0.0, 100.0), (" b ", 100.0, 0.0), ("B. 3", 100.0, 100.0),
])
def test_where_the_readings_part(reply: str, lmms_eval: float, vlmevalkit: float) -> None:
    assert ours("muirbench_lmms_eval", "muirbench_lmms_eval_acc", reply) == lmms_eval
    assert ours("muirbench_vlmevalkit", "choice_acc", reply) == vlmevalkit
