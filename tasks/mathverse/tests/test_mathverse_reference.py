"""MathVerse's two GPT steps against the authors' code, run verbatim (tests/reference/README.md: repository,
commit, license): on tricky replies, the prompts the judge is sent (a replayed run of the task) are the
authors' ``create_test_prompt`` of step 1 (after ``trunk_response``, 30 words) and of step 2; the
extraction and the judgement read from the judge's replies are theirs; and the offline metric is their
``match_answer(quick_match=True)``."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.folder_runs import copy_bench_files, plugin, results_of, run_mmtasks, samples_of

REFERENCE = Path(__file__).parent / "reference"
SAMPLE = Path(__file__).resolve().parents[3] / "data" / "sample"
GPT = "mathverse_testmini_vision_only_gpt_copy"


def load(file: str, name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REFERENCE / file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def authors(monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, ModuleType]:
    pytest.importorskip("openai")
    pytest.importorskip("tqdm")
    pytest.importorskip("PIL")
    load("utils_937b090.py", "utils", monkeypatch)
    load("prompts_937b090.py", "prompts", monkeypatch)
    s1 = load("extract_answer_s1_937b090.py", "reference_mathverse_s1", monkeypatch)
    s2 = load("score_answer_s2_937b090.py", "reference_mathverse_s2", monkeypatch)
    return s1, s2


def plugin_namespace() -> dict[str, Any]:
    registry, path = plugin("mathverse", "mathverse.py")
    return registry.metrics.get("mathverse_quick_match", plugins=[path]).__globals__


#: Vision Only records of the sample: reply, step 1 reply, step 2 reply
LONG = " ".join(f"w{i}" for i in range(40)) + " so the answer is 14"
CASES = {
    "104": (LONG, "Extracted Answer: 14", "Judgement: 1"),
    "105": ("It's (B), 'since' {AB} = {AC}\n\nAnswer: B", "B", "1"),
    "106": ("The slope is $\\frac{2}{1}$ = 2\nso 2", "  2  ", "Judgement:0"),
    "107": ("y = 2x + 1 \\\\ done {{x}}", "y = 2x + 1", " 1 "),
    "108": ("", "null", "0"),
}


def test_the_judge_is_asked_as_the_authors_ask_gpt(tmp_path: Path, authors: tuple[ModuleType, ModuleType],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    s1, s2 = authors
    tasks = tmp_path / "tasks"
    copy_bench_files("mathverse", tasks)
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps({"task": GPT, "doc_id": d, "responses": [r]}) + "\n"
                            for d, (r, _, _) in CASES.items()), encoding="utf-8")
    judge = tmp_path / "judge.jsonl"
    judge.write_text("".join(json.dumps({"task": GPT, "doc_id": d, "responses": [a, b]}) + "\n"
                             for d, (_, a, b) in CASES.items()), encoding="utf-8")
    out = tmp_path / "out"
    proc = run_mmtasks(["--tasks", GPT, "--include-path", str(tasks), "--data-dir", str(SAMPLE), "--model",
                        f"replay:{pred}", "--judge", f"replay:{judge}", "--output-path", str(out)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    records = {json.loads(line)["sample_index"]: json.loads(line)
               for line in (SAMPLE / "mathverse" / "testmini.jsonl").read_text(encoding="utf-8").splitlines()}
    samples = samples_of(out, GPT)
    right = 0
    for doc, (reply, step1_reply, step2_reply) in CASES.items():
        inst = dict(records[doc])
        sent = [call["prompt"][0]["content"][0]["text"] for call in samples[doc]["judge"]]
        # step 1: extract_answer(...)'s prompt, on trunk_response(response, 30)
        assert sent[0] == s1.create_test_prompt(s1.demo_prompt_extract, s1.trunk_response(reply, 30), inst)
        # the extraction as extract_answer_s1.py stores it
        extraction = step1_reply.replace("Extracted Answer: ", "").strip()
        assert samples[doc]["parsed"] == extraction
        # step 2: score_answer_s2.py's prompt with that extraction, and its judgement
        inst["extraction"] = extraction
        assert sent[1] == s2.create_test_prompt(s2.demo_prompt_score, inst)
        judgement = int(step2_reply.replace("Judgement:", "").strip())
        assert samples[doc]["extra"]["judgement"] == judgement
        assert samples[doc]["metrics"]["acc"] == 100.0 * judgement
        right += judgement
    assert results_of(out)["results"][GPT]["acc"] == pytest.approx(100.0 * right / len(CASES)) == pytest.approx(60.0)


def test_quick_match_is_the_authors(authors: tuple[ModuleType, ModuleType]) -> None:
    _, s2 = authors
    fns = plugin_namespace()
    pairs = [("14", "14"), ("14", "14.0"), ("B", "B"), ("B", "b"), ("y=2x+1", "y = 2x + 1"), ("2", " 2"), ("A", None)]
    for answer, extraction in pairs:
        theirs = s2.match_answer({"answer": answer, "extraction": extraction}, api_key=None, quick_match=True)
        assert fns["mathverse_quick_match"](extraction, answer, {}) == 100.0 * int(theirs), (answer, extraction)


def test_judge_replies_the_authors_would_ask_again() -> None:
    fns = plugin_namespace()
    # score_answer_s2.py loops while the judgement is not "0" or "1"; get_chat_response while the reply is empty
    for text in ["", "2", "Judgement: yes", "1.0", "Judgement: 1 (consistent)"]:
        assert fns["_judgement"](text) is None, text
    assert fns["_extraction"]("   ") is None
    assert fns["_extraction"]("Extracted Answer: null") == {"extraction": "null"}
    assert fns["trunk_response"]("a b c", 2) == "b c" and fns["trunk_response"]("a b c", -1) == "a b c"
