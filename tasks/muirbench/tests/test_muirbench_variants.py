"""MUIRBench's scoring variants against the peers' code run verbatim (reference/ beside this file):
``lmms_eval`` against lmms-eval's ``MultiChoiceRegexFilter.apply`` and ``muir_aggregation`` at
75571cfe, ``vlmevalkit`` against VLMEvalKit's ``can_infer`` at e8e78f05 as ``extract_answer_from_item``
uses it without a judge model (a reply it reads nothing in is "Z"), on hand-written tricky replies."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.folder_runs import plugin
from tests.reference_code import load_reference

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
    return load_reference(name, REFERENCE, **given)


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
    matching = load_reference("vlmevalkit_matching_util_e8e78f0")
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


def test_the_vlmevalkit_variant_asks_vlmevalkits_matcher(tmp_path: Path, chat_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The replay test's replies (test_muirbench.py) with a loopback judge as --matcher: can_infer reads
    nothing in muir_sample_6 ("I am not sure.", gold A) and muir_sample_9 ("E", options A-D), which the
    authors' rule guesses for too; each is asked once, with VLMEvalKit's build_prompt verbatim. The
    judge names A for the first (right: the variant and the task 5 of 9) and Z for the second (the
    variant: wrong; the task keeps its guess A, gold B: wrong)."""
    import json

    from mmtasks.cli import main
    from tests.chat_wire import last_user_text

    sample = Path(__file__).resolve().parents[3] / "data" / "sample"
    replies = {"muir_sample_1": "B", "muir_sample_2": "(D) None of the choices provided", "muir_sample_3": "A",
               "muir_sample_4": "The answer is D.", "muir_sample_5": "C", "muir_sample_6": "I am not sure.",
               "muir_sample_7": "F", "muir_sample_8": "C", "muir_sample_9": "E"}
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"task": "muirbench", "doc_id": d, "responses": [r]}) + "\n"
                            for d, r in replies.items()), encoding="utf-8")

    def judge(body: dict[str, Any]) -> str:
        text = last_user_text(body)
        return ("A" if text.endswith("Answer: I am not sure.\nYour output: ") else "Z") if "\nYour output: " in text else "pong"

    chat_server.reply = judge
    monkeypatch.setenv("OPENAI_BASE_URL", chat_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000")
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["--tasks", "muirbench", "--data-dir", str(sample), "--model", f"replay:{pred}", "--no-progress",
                 "--allow-failures", "--output-path", str(tmp_path / "out"), "--matcher", "openai:judge"]) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["variants"]["muirbench"]["vlmevalkit"]["metrics"]["acc"] == pytest.approx(100 * 5 / 9)
    assert results["variants"]["muirbench"]["lmms_eval"]["metrics"]["acc"] == pytest.approx(100 * 2 / 9)
    assert results["results"]["muirbench"]["acc"] == pytest.approx(100 * 5 / 9)
    asked = [last_user_text(b) for b in chat_server.bodies if "\nYour output: " in last_user_text(b)]
    assert len(asked) == 2
    record = next(json.loads(line) for line in (sample / "muirbench" / "muirbench.jsonl").read_text().splitlines()
                  if json.loads(line)["idx"] == "muir_sample_6")
    mc = load("matcher_prompt_e8e78f0")
    choices = {chr(ord("A") + i): o for i, o in enumerate(record["options"])}
    assert mc.build_prompt(record["question"], mc.build_option_str(choices), "I am not sure.") in asked
