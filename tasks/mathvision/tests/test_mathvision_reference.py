"""MATH-Vision's reading and check against the authors' code, lmms-eval's and VLMEvalKit's, run verbatim on
the same tricky replies (tests/reference/README.md names each file, its repository, commit and license).

- the authors (mathllm/MATH-V a1f5cc3): ``evaluate.py`` ``evaluate`` run whole on an answer file (its
  ``data/test.jsonl`` written from the records below), with their ``utils.py``: our ``mathvision_answer``
  gives their ``model_answer`` and ``mathvision_acc`` their ``correct`` on every reply;
- lmms-eval (75571cf): ``mathvision_process_results`` with its ``eval_utils.py`` gives the same verdicts
  (lmms-eval scores MATH-Vision as the authors do: no variant);
- VLMEvalKit (e8e78f0): ``post_check`` with ``prefetch=True`` then ``False``, the ``vlmevalkit_prefetch``
  variant's.

The LaTeX parser is the one mmtasks uses (``latex2sympy2_extended``, configured as the plugin does) in
every module, under the name ``latex2sympy2`` where they import that: what is compared is their code
around it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import types
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.folder_runs import plugin
from tests.reference_code import SHARED

pytest.importorskip("latex2sympy2_extended")
REFERENCE = Path(__file__).parent / "reference"


def plugin_namespace() -> dict[str, Any]:
    registry, path = plugin("mathvision", "mathvision.py")
    return registry.metrics.get("mathvision_acc", plugins=[path]).__globals__


def _stub(name: str, **attrs: Any) -> ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    return module


def load(path: Path, name: str, stubs: dict[str, ModuleType], monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    for stub_name, module in stubs.items():
        monkeypatch.setitem(sys.modules, stub_name, module)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


def parser_stub() -> ModuleType:
    return _stub("latex2sympy2", latex2sympy=plugin_namespace()["_latex2sympy"]())


MC = {"id": "1", "question": "Q", "options": ["3", "4", "5", "6", "7"], "answer": "C", "level": 1, "subject": "counting"}
LETTERS = {"id": "2", "question": "Q", "options": ["A", "B", "C", "D", "E"], "answer": "B", "level": 3, "subject": "logic"}
NUMBER = {"id": "3", "question": "Q", "options": [], "answer": "61", "level": 2, "subject": "arithmetic"}
ROOT = {"id": "4", "question": "Q", "options": [], "answer": "2\\sqrt{3}", "level": 5, "subject": "metric geometry - length"}
PAIR = {"id": "5", "question": "Q", "options": [], "answer": "(1,2)", "level": 4, "subject": "analytic geometry"}
HALF = {"id": "6", "question": "Q", "options": [], "answer": "0.5", "level": 2, "subject": "algebra"}
ANGLE = {"id": "7", "question": "Q", "options": [], "answer": "30", "level": 3, "subject": "metric geometry - angle"}
RECORDS = [MC, LETTERS, NUMBER, ROOT, PAIR, HALF, ANGLE]

REPLIES = [
    (MC, "There are 5 squares, so the answer is C."), (MC, "C"), (MC, "(C)\nbecause"), (MC, "C\nThe rest"),
    (MC, "\\boxed{C}"), (MC, "\\boxed{5}"), (MC, "The answer is 5"), (MC, "the correct answer is (c). Done."),
    (MC, "\\boxed{A} or \\boxed{C}"), (MC, "The final answer is $\\boxed{(C)}$"), (MC, "Answer: (C) 5"), (MC, ""),
    (LETTERS, "\\boxed{B}"), (LETTERS, "B."), (LETTERS, "I pick B"), (LETTERS, "The answer is B. Because"),
    (NUMBER, "The number is 61."), (NUMBER, "61"), (NUMBER, "\\boxed{61.0}"), (NUMBER, "x = 61"),
    (NUMBER, "The answer is 61 daisies"), (NUMBER, "\\boxed{60+1}"), (NUMBER, "sixty-one"), (NUMBER, "6 1"),
    (ROOT, "So \\boxed{\\sqrt{12}}"), (ROOT, "\\boxed{2\\sqrt3}"), (ROOT, "\\boxed{3.46}"), (ROOT, "\\boxed{3.47}"),
    (ROOT, "The answer is $2\\sqrt{3}$ cm."), (ROOT, "\\boxed{\\frac{6}{\\sqrt{3}}}"),
    (PAIR, "The answer is (1, 2)."), (PAIR, "\\boxed{(2,1)}"), (PAIR, "\\boxed{(1.0, 2)}"), (PAIR, "[1,2]"),
    (HALF, "\\boxed{1/2}"), (HALF, "\\boxed{\\frac{1}{2}}"), (HALF, "\\boxed{.5}"), (HALF, "50\\%"),
    (ANGLE, "\\boxed{30^\\circ}"), (ANGLE, "\\boxed{30^{\\circ}}"), (ANGLE, "The angle is 30 degrees"),
    (ANGLE, "\\boxed{\\frac{\\pi}{6}}"),
]


def test_our_reading_and_check_are_the_authors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numpy")
    pytest.importorskip("tqdm")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"id": r["id"], "response": reply}) + "\n" for r, reply in REPLIES),
                       encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # evaluate.py reads ./data/test.jsonl at import
    utils = load(REFERENCE / "utils_a1f5cc3.py", "utils", {"latex2sympy2": parser_stub()}, monkeypatch)
    evaluate = load(REFERENCE / "evaluate_a1f5cc3.py", "reference_mathvision_evaluate",
                    {"fire": _stub("fire"), "utils": utils}, monkeypatch)
    evaluate.evaluate(str(answers), regen_answer=True)
    theirs = [json.loads(line) for line in answers.read_text(encoding="utf-8").splitlines()]
    fns = plugin_namespace()
    right = 0
    for (record, reply), line in zip(REPLIES, theirs, strict=True):
        ours = fns["mathvision_answer"](reply, record)
        assert ours == line["model_answer"], (record["id"], reply)
        assert fns["mathvision_acc"](ours, record["answer"], record) == 100.0 * line["correct"], (record["id"], reply)
        right += line["correct"]
    # by hand, the 13 wrong: "Answer: (C) 5" (read whole: "answer:c5"), "", "I pick B", "61 daisies", "sixty-one",
    # 3.47 (not 3.46 to 2 decimals), "2\\sqrt{3} cm" (the unit kept), (2,1) and (1.0,2) (tuples compared as
    # text once evaluated), "[1,2]", "50\\%" (50), "30 degrees" (read whole) and pi/6 (radians, not 30)
    assert right == 29


def test_lmms_eval_scores_as_the_authors(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("tqdm")
    eval_utils = load(REFERENCE / "lmms_eval_mathvision_eval_utils_75571cf.py", "lmms_eval.tasks.mathvision.eval_utils",
                      {"latex2sympy2": parser_stub()}, monkeypatch)
    stubs = {"loguru": _stub("loguru", logger=_stub("logger", warning=print, error=print)),
             "lmms_eval": _stub("lmms_eval", __path__=[]), "lmms_eval.tasks": _stub("lmms_eval.tasks", __path__=[]),
             "lmms_eval.tasks.mathvision": _stub("lmms_eval.tasks.mathvision", __path__=[]),
             "lmms_eval.tasks.mathvision.eval_utils": eval_utils,
             "lmms_eval.verifiers": _stub("lmms_eval.verifiers", VerificationPipeline=object),
             "lmms_eval.verifiers.extractors": _stub("lmms_eval.verifiers.extractors", StripReasoningExtractor=object),
             "lmms_eval.verifiers.openai": _stub("lmms_eval.verifiers.openai", OpenAIVerifier=object)}
    lmms = load(REFERENCE / "lmms_eval_mathvision_utils_75571cf.py", "reference_lmms_eval_mathvision", stubs, monkeypatch)
    fns = plugin_namespace()
    for record, reply in REPLIES:
        scores = lmms.mathvision_process_results(record, [reply])["mathvision_standard_eval"]["scores"]
        ours = fns["mathvision_acc"](fns["mathvision_answer"](reply, record), record["answer"], record)
        assert ours == 100.0 * scores[0], (record["id"], reply)


def test_the_vlmevalkit_prefetch_variant_is_vlmevalkit(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pandas")
    fns = plugin_namespace()
    parse = fns["_latex2sympy"]()  # resolved (and kept) before the stub below takes the module's name
    matching = load(SHARED / "vlmevalkit_matching_util_e8e78f0.py", "reference_matching_util", {}, monkeypatch)
    timeout = _stub("timeout_decorator", timeout=lambda *a, **k: (lambda fn: fn))
    stubs = {"timeout_decorator": timeout, "vlmeval": _stub("vlmeval", __path__=[]),
             "vlmeval.smp": _stub("vlmeval.smp", get_logger=lambda name: _stub("log", critical=print, warning=print),
                                  load=None),
             "vlmeval.utils": _stub("vlmeval.utils", can_infer=matching.can_infer),
             "latex2sympy2_extended": _stub("latex2sympy2_extended", latex2sympy=parse)}
    vlmeval = load(REFERENCE / "vlmevalkit_mathv_e8e78f0.py", "reference_vlmevalkit_mathv", stubs, monkeypatch)
    hits = 0
    for record, reply in REPLIES:
        # VLMEvalKit's TSV: choices as the str of a list (the options)
        line = {"choices": str(record["options"]), "answer": record["answer"], "prediction": reply}
        prefetched = vlmeval.post_check(line, prefetch=True)
        ours = fns["mathvision_prefetch_vlmevalkit"](reply, record)
        assert (ours is not None) == bool(prefetched), (record["id"], reply)
        their_hit = bool(prefetched) and vlmeval.post_check({**line, "res": prefetched}, prefetch=False)
        ours_hit = fns["mathvision_acc_vlmevalkit_prefetch"](ours, record["answer"], record)
        assert ours_hit == 100.0 * their_hit, (record["id"], reply)
        hits += their_hit
    assert 0 < hits < len(REPLIES)
    assert os.environ.get("VERBOSE") in (None, "", "0")  # can_infer_option's quantifier check is off
