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


def test_the_vlmevalkit_variant_asks_the_matcher_in_vlmevalkits_words(tmp_path: Path, chat_server: Any,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The replay test's 16 replies (test_blink.py) with a scripted loopback judge as --matcher. can_infer
    reads nothing in "I cannot tell." (Forensic_Detection, gold D) and "(B), not (A)" (Visual_Similarity,
    gold A): the variant asks each in VLMEvalKit's build_prompt_blink (run verbatim here on the record's
    question and build_option_str's options), apart from the task's own calls, which use the authors'
    prompt for the two replies the first_letter rule reads nothing in ("I cannot tell." and "left").
    The judge names (A) for "(B), not (A)" and "left", and Z for "I cannot tell.": the variant 12 of 16
    right (Visual_Similarity now right), the task Multi-view_Reasoning right."""
    import json

    from mmtasks.cli import main
    from tests.chat_wire import last_user_text
    from tasks.blink.tests.test_blink import BLINK_ACC, BLINK_REPLIES

    sample = Path(__file__).resolve().parents[3] / "data" / "sample"
    task_of = {sub: "blink_" + sub.lower().replace("-", "_") for sub in BLINK_REPLIES}
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"task": task_of[sub], "doc_id": d, "responses": [r]}) + "\n"
                            for sub, items in BLINK_REPLIES.items() for d, r, _, _ in items), encoding="utf-8")

    def judge(body: dict[str, Any]) -> str:
        text = last_user_text(body)
        if "\nYour output: " not in text:
            return "pong"
        vlmevalkit = "There are several options: \n" in text
        if text.endswith("Answer: I cannot tell.\nYour output: "):
            return "Z" if vlmevalkit else "(Z)"
        return "A" if vlmevalkit else "(A)"

    chat_server.reply = judge
    monkeypatch.setenv("OPENAI_BASE_URL", chat_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000")
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["--tasks", "blink", "--data-dir", str(sample), "--model", f"replay:{pred}", "--no-progress",
                 "--allow-failures", "--output-path", str(tmp_path / "out"), "--matcher", "openai:judge"]) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    variant = {**BLINK_ACC, "Multi-view_Reasoning": 100.0, "Visual_Similarity": 100.0}
    for sub, acc in variant.items():
        assert results["variants"][task_of[sub]]["vlmevalkit"]["metrics"]["acc"] == pytest.approx(acc), sub
    assert results["groups"]["blink"]["variants"]["vlmevalkit"] == pytest.approx(100 * 12 / 16)
    assert results["results"][task_of["Multi-view_Reasoning"]]["acc"] == pytest.approx(100.0)  # the task's matcher: (A)
    assert results["groups"]["blink"]["average"] == pytest.approx(950 / 14)
    asked = [last_user_text(b) for b in chat_server.bodies if "\nYour output: " in last_user_text(b)]
    theirs = [t for t in asked if "There are several options: \n" in t]
    assert len(asked) == 4 and len(theirs) == 2
    mc = load("vlmevalkit_build_prompt_blink_e8e78f0")
    for sub, doc_id, reply in (("Forensic_Detection", "val_Forensic_Detection_1", "I cannot tell."),
                               ("Visual_Similarity", "val_Visual_Similarity_1", "(B), not (A)")):
        record = next(json.loads(line) for line in (sample / "blink" / f"{sub}.jsonl").read_text().splitlines()
                      if json.loads(line)["idx"] == doc_id)
        choices = {chr(ord("A") + i): c for i, c in enumerate(record["choices"])}
        assert mc.build_prompt_blink(record["question"], mc.build_option_str(choices), reply) in theirs, sub
    # each sample keeps the variant's own call apart from the task's
    rows = [json.loads(x) for x in (tmp_path / "out" / "samples" / f"{task_of['Visual_Similarity']}.jsonl").read_text().splitlines()]
    own = rows[0]["extra"]["variants"]["vlmevalkit"]
    assert own["read_by"] == "matcher" and own["matcher"]["read"] == "A" and "matcher" not in rows[0]["extra"]
