"""MMBench's CircularEval against the peers' code run verbatim (reference/ beside this file):

- the task (``circular_acc``, per category and l2-category) against VLMEvalKit's ``mcq_circular_eval``
  and ``report_acc`` at e8e78f05 in its exact-matching mode (no judge model: what mmtasks does
  without ``--matcher``), with ``can_infer`` of the same commit;
- the variant ``lmms_eval`` against lmms-eval's ``MMBench_Evaluator.eval_result`` at 75571cfe, its
  GPT step answering "E" (lmms-eval's "none of the options") for every copy it is asked about.

The same hand-written tricky replies go through ``mmtasks.api.evaluate`` and through theirs.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from PIL import Image as PILImage

from mmtasks.api import evaluate
from tests.folder_runs import plugin
from tests.reference_code import load_reference

REFERENCE = Path(__file__).parent / "reference"
OFFSET = 1_000_000

#: (index, question options in the original's order, gold letter of the original, category, l2-category)
QUESTIONS = [
    (1, ["red", "blue", "green", "yellow"], "B", "attribute_recognition", "finegrained_perception (instance-level)"),
    (2, ["yes", "no"], "A", "image_topic", "coarse_perception"),
    (3, ["a circle", "a triangle", "a square"], "C", "spatial_relationship", "finegrained_perception (cross-instance)"),
    (4, ["one", "two", "three", "four"], "D", "object_localization", "finegrained_perception (instance-level)"),
    (5, ["cat", "dog", "bird", "fish"], "A", "image_scene", "coarse_perception"),
    (6, ["left", "right"], "B", "physical_relation", "relation_reasoning"),
]
#: index -> reply, one per circular copy (the k-th shift rotates the options left by k)
REPLIES = {
    1: "B", 1000001: "A", 2000001: "The correct answer is **D**.", 3000001: "C",
    2: "A", 1000002: "The answer is B",
    3: "C", 1000003: "I think it is B", 2000003: "A",
    4: "D", 1000004: "C.", 2000004: "(B)", 3000004: "Answer: A",
    5: "A", 1000005: "cat", 2000005: "C since the bird in the picture is what the question asks about", 3000005: "B",
    6: "B", 1000006: "Cannot determine the answer",
}


def load(name: str, **given: Any) -> ModuleType:
    return load_reference(name, REFERENCE, **given)


def records() -> list[dict[str, Any]]:
    out = []
    letters = "ABCD"
    for index, options, gold, category, l2 in QUESTIONS:
        n = len(options)
        for k in range(n):
            shifted = options[k:] + options[:k]
            out.append({"index": index + k * OFFSET, "question": f"question {index}?", "hint": None,
                        **{c: (shifted[i] if i < n else None) for i, c in enumerate(letters)},
                        "answer": letters[(letters.index(gold) - k) % n], "category": category, "image": "images/x.jpg",
                        "source": "test", "l2-category": l2, "comment": None, "split": "dev"})
    assert {r["index"] for r in out} == set(REPLIES)
    return out


def run_ours(tmp_path: Path) -> dict[str, Any]:
    folder = tmp_path / "data" / "mmbench"
    (folder / "images").mkdir(parents=True)
    PILImage.new("RGB", (8, 8), (200, 0, 0)).save(folder / "images" / "x.jpg")
    (folder / "MMBench_DEV_EN_V11.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records()), encoding="utf-8")
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"task": "mmbench_dev_en_v11", "doc_id": str(i), "responses": [r]}) + "\n"
                            for i, r in REPLIES.items()), encoding="utf-8")
    evaluate("mmbench_dev_en_v11", f"replay:{pred}", data_dir=tmp_path / "data", output_path=tmp_path / "out",
             use_cache=False, allow_failures=True)
    return json.loads((tmp_path / "out" / "results.json").read_text())


def breakdowns_of(results: dict[str, Any]) -> dict[str, Any]:
    return results["breakdowns"]["mmbench_dev_en_v11"]


def vlmevalkit_tables(pd: Any) -> Any:
    matching = load_reference("vlmevalkit_matching_util_e8e78f0")
    store: dict[str, Any] = {}

    def dump(obj: Any, path: str) -> None:
        store[path] = obj.copy() if hasattr(obj, "copy") else obj

    mc = load("multiple_choice_e8e78f0", can_infer=matching.can_infer, dump=dump, load=lambda path: store[path],
              istype=lambda s, t: isinstance(s, t), get_pred_file_format=lambda: "pkl", timestr=lambda: "t",
              track_progress_rich=None, logger=logging.getLogger("vlmevalkit"))
    meta = pd.DataFrame(records())
    data = meta.copy()
    data["prediction"] = [REPLIES[i] for i in data["index"]]
    scored = mc.mcq_circular_eval(None, data, meta, 1, "/nonexistent/result.pkl", "MMBench_DEV_EN_V11")
    return mc.report_acc(scored), mc.MMB_abbrs


def test_circular_eval_equals_vlmevalkits(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    results = run_ours(tmp_path)
    table, abbrs = vlmevalkit_tables(pd)
    ours = results["results"]["mmbench_dev_en_v11"]
    theirs = table.iloc[0]
    assert ours["circular_acc"] == pytest.approx(100 * float(theirs["Overall"]))
    # by hand: 1 ("The correct answer is **D**." reads D, the gold of copy 2), 2, 3 and 4 have every
    # copy right; 5's copy 2 names C as the first of 13 words (not among the last four, and the
    # reply is too long for the option texts): unread; 6's refusal reads Z: 4 of 6
    assert ours["circular_acc"] == pytest.approx(100 * 4 / 6)
    assert breakdowns_of(results)["category"]["image_scene"]["circular_acc"] == 0.0
    breakdowns = results["breakdowns"]["mmbench_dev_en_v11"]
    for name, column in (("category", "category"), ("l2_category", "l2-category")):
        for label, row in breakdowns[name].items():
            assert row["circular_acc"] == pytest.approx(100 * float(theirs[abbrs.get(label, label)])), (name, label)
    assert set(breakdowns["l2_category"]) == {q[4] for q in QUESTIONS}


def test_the_lmms_eval_variant_equals_lmms_evals(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    pytest.importorskip("requests")
    results = run_ours(tmp_path)
    module = load("lmms_eval_mmbench_evals_75571cf")
    evaluator = module.MMBench_Evaluator(sys_prompt="There are several options:")
    asked: list[str] = []

    def gpt(prompt: str, **_: Any) -> str:
        asked.append(prompt)
        return "E"  # lmms-eval's "none of the options": wrong, as an unread reply is without a matcher

    evaluator.get_chat_response = gpt
    rows = []
    for r in records():
        rows.append({"index": r["index"], "question": r["question"], "answer": r["answer"], "prediction": REPLIES[r["index"]].strip(),
                     "hint": r["hint"], "source": r["source"], "split": r["split"], "category": r["category"],
                     "L2-category": r["l2-category"], **{c: r.get(c, "nan") for c in "ABCDE"}})
    overall, by_category, by_l2 = evaluator.eval_result(rows, eval_method="openai")
    variant = results["variants"]["mmbench_dev_en_v11"]["lmms_eval"]
    assert variant["metrics"]["circular_acc"] == pytest.approx(100 * overall)
    for label, row in variant["breakdowns"]["category"].items():
        assert row["circular_acc"] == pytest.approx(100 * by_category[label]), label
    for label, row in variant["breakdowns"]["l2_category"].items():
        assert row["circular_acc"] == pytest.approx(100 * by_l2[label]), label
    # by hand: lmms-eval does not strip "**D**." (unread: wrong) and reads the refusal as nothing
    # (wrong): 1 and 6 wrong; it reads 5's lone C wherever it stands: 4 of 6, not VLMEvalKit's four
    assert variant["metrics"]["circular_acc"] == pytest.approx(100 * 4 / 6)
    assert variant["breakdowns"]["category"]["attribute_recognition"]["circular_acc"] == 0.0
    assert variant["breakdowns"]["category"]["image_scene"]["circular_acc"] == 100.0
    assert asked  # the unread copies went to its GPT step


def test_the_matcher_asks_vlmevalkits_prompt(tmp_path: Path, chat_server: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """With --matcher, the copies can_infer reads nothing in (5's copy 2 "C since the bird ...") go to
    the LLM with VLMEvalKit's build_prompt, verbatim; a loopback matcher answering as its judge would
    ("C") makes question 5 right: 5 of 6."""
    from mmtasks.cli import main
    from tests.chat_wire import last_user_text

    pytest.importorskip("pandas")
    folder = tmp_path / "data" / "mmbench"
    (folder / "images").mkdir(parents=True)
    PILImage.new("RGB", (8, 8), (200, 0, 0)).save(folder / "images" / "x.jpg")
    (folder / "MMBench_DEV_EN_V11.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records()), encoding="utf-8")
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"task": "mmbench_dev_en_v11", "doc_id": str(i), "responses": [r]}) + "\n"
                            for i, r in REPLIES.items()), encoding="utf-8")
    chat_server.reply = lambda body: "C" if "\nAnswer: " in last_user_text(body) else "pong"
    monkeypatch.setenv("OPENAI_BASE_URL", chat_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000")
    monkeypatch.setenv("MMTASKS_CACHE_DIR", str(tmp_path / "cache"))
    code = main(["--tasks", "mmbench_dev_en_v11", "--data-dir", str(tmp_path / "data"), "--model", f"replay:{pred}",
                 "--output-path", str(tmp_path / "out"), "--no-progress", "--allow-failures",
                 "--matcher", "openai:matcher-model"])
    assert code == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["results"]["mmbench_dev_en_v11"]["circular_acc"] == pytest.approx(100 * 5 / 6)
    asked = [last_user_text(b) for b in chat_server.bodies if "\nAnswer: " in last_user_text(b)]
    assert len(asked) == 1  # the one copy no rule reads (the refusal reads Z: not asked, as in VLMEvalKit)
    mc = load("multiple_choice_e8e78f0")
    copy = next(r for r in records() if r["index"] == 2000005)
    choices = {k: copy[k] for k in "ABCD" if copy[k] is not None}
    assert asked[0] == mc.build_prompt(copy["question"], mc.build_option_str(choices), REPLIES[2000005])


#: replies read one by one by both readings and by the peers' code; they reach each rule's edges: a
#: letter 5th and 4th from the end (VLMEvalKit takes the last four words only), a reply between two
#: and three times the option texts' length (its cap on option texts), "A" as a quantifier, the
#: affixed letters of lmms-eval's list, "Z", refusals, an option text inside another word
EDGE_REPLIES = ["B", "b", "B.", "(B)", "B)", "B).", ":B", ":B.", "Answer: C", "Option B", "I pick B for sure now",
                "I pick B for sure", "B is my pick and I stand by it", "it is surely the green one here",
                "it is green", "green or blue", "A red one", "I choose A because it is red and round", "A B",
                "A, B", "the correct answer is **b**", "The answer is D", "E", "Z", "z", "(Z)",
                "Cannot determine the answer", "Failed to obtain answer via API: B", "reddish", "", "  C  ",
                "C\nbecause", "**C**", "[B]", "{C}", "B;", "B!", "#A", "B*"]


@pytest.mark.parametrize("reply", EDGE_REPLIES)
def test_each_reply_reads_as_the_peers_code(reply: str) -> None:
    pytest.importorskip("pandas")
    pytest.importorskip("requests")
    registry, path = plugin("mmbench", "mmbench_scoring.py")
    doc = {"A": "red", "B": "blue", "C": "green", "D": None}
    options = {k: v for k, v in doc.items() if v is not None}
    theirs = load_reference("vlmevalkit_matching_util_e8e78f0").can_infer(reply, dict(options))
    assert registry.parsers.get("mmbench_option", plugins=[path]).fn(reply, doc) == (theirs or None)
    evaluator = load("lmms_eval_mmbench_evals_75571cf").MMBench_Evaluator()
    lmms = evaluator.can_infer(reply.strip(), dict(options))  # eval_sub_data strips the prediction
    assert registry.parsers.get("mmbench_option_lmms_eval", plugins=[path]).fn(reply, doc) == (lmms or None)


def test_lmms_lab_nan_strings_are_no_option_and_no_hint(tmp_path: Path) -> None:
    """lmms-lab/MMBench (the v1.0 tasks' data) writes a missing option or hint as the string "nan"
    (lmms-eval's en_utils/mmbench_evals skip ``item != "nan"``; VLMEvalKit's pandas reads "nan" in
    its TSV as NaN): it is no option to offer, draw or match, and no hint."""
    from tests.folder_runs import parts_of, samples_of

    folder = tmp_path / "data" / "mmbench"
    (folder / "images").mkdir(parents=True)
    PILImage.new("RGB", (8, 8), (200, 0, 0)).save(folder / "images" / "x.jpg")
    record = {"index": 7, "question": "Which fruit?", "hint": "nan", "A": "banana", "B": "apple", "C": "nan",
              "D": "nan", "answer": "A", "category": "c", "image": "images/x.jpg", "source": "test",
              "L2-category": "l2", "comment": "nan", "split": "dev"}
    copy = {**record, "index": 1000007, "A": "apple", "B": "banana", "answer": "B"}
    (folder / "MMBench_DEV_EN.jsonl").write_text("".join(json.dumps(r) + "\n" for r in (record, copy)), encoding="utf-8")
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"task": "mmbench_dev_en", "doc_id": d, "responses": ["banana"]}) + "\n"
                            for d in ("7", "1000007")), encoding="utf-8")
    evaluate("mmbench_dev_en", f"replay:{pred}", data_dir=tmp_path / "data", output_path=tmp_path / "out",
             use_cache=False, allow_failures=True)
    samples = samples_of(tmp_path / "out", "mmbench_dev_en")
    assert parts_of(samples["7"]) == ["<img>", "Question: Which fruit?\nOptions:\nA. banana\nB. apple\n"
                                      "Please select the correct answer from the options above. \n"]
    # "banana" names option A (B in the copy) alone: the "nan" cells are no option texts
    assert {d: s["parsed"] for d, s in samples.items()} == {"7": "A", "1000007": "B"}
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["results"]["mmbench_dev_en"]["circular_acc"] == 100.0
    registry, path = plugin("mmbench", "mmbench_scoring.py")
    assert registry.parsers.get("mmbench_option_lmms_eval", plugins=[path]).fn("banana", record) == "A"
