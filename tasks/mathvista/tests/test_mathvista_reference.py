"""MathVista's scoring against the authors' code, lmms-eval's and VLMEvalKit's, run verbatim on the same
tricky replies (tests/reference/README.md names each file, its repository, commit and license).

- the authors (lupantech/MathVista 53d5258): ``extract_answer`` (``quick_extract=True``) with a model
  that records whether it was asked, then ``normalize_extracted_answer`` and ``safe_equal``: where
  they ask no model our ``mathvista_extract`` gives their extraction, and ``mathvista_acc`` their
  verdict; where they ask one, the judge's extraction scores as theirs does;
- lmms-eval (75571cf): ``MathVistaEvaluator`` (its LLM server stubbed: never reached offline), the
  ``lmms_eval`` variant's parser and metric;
- VLMEvalKit (e8e78f0): ``post_check`` with ``prefetch=True`` and then ``False``, the
  ``vlmevalkit_prefetch`` variant's.

``Levenshtein`` (their ``get_most_similar``) is not installed here: a plain edit distance stands in
for ``Levenshtein.distance``, checked on known pairs first.
"""

from __future__ import annotations

import importlib.util
import math
import shutil
import sys
import types
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.folder_runs import plugin
from tests.reference_code import SHARED

REFERENCE = Path(__file__).parent / "reference"


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance by the textbook recurrence (a stand-in for ``Levenshtein.distance``)."""
    rows = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            rows[i][j] = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
    return rows[-1][-1]


def test_the_stand_in_distance() -> None:
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("", "abc") == 3
    assert edit_distance("flaw", "lawn") == 2


def plugin_namespace() -> dict[str, Any]:
    """The plugin's module namespace (tasks/mathvista/mathvista.py, loaded as mmtasks loads it)."""
    registry, path = plugin("mathvista", "mathvista.py")
    return registry.metrics.get("mathvista_acc", plugins=[path]).__globals__


def _stub(name: str, **attrs: Any) -> ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    return module


def load(file: str, stubs: dict[str, ModuleType], monkeypatch: pytest.MonkeyPatch, folder: Path = REFERENCE) -> ModuleType:
    for name, module in stubs.items():
        monkeypatch.setitem(sys.modules, name, module)
    spec = importlib.util.spec_from_file_location(f"reference_{file[:-3]}", folder / file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def authors(monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, ModuleType]:
    pytest.importorskip("pandas")
    common = {"Levenshtein": _stub("Levenshtein", distance=edit_distance),
              "utilities": _stub("utilities", read_json=None, save_json=None)}
    evaluation = _stub("evaluation", __path__=[])
    prompts = _stub("evaluation.prompts", __path__=[])
    ext = _stub("evaluation.prompts.ext_ans", demo_prompt="DEMO")
    models = _stub("models", __path__=[])
    gpt = _stub("models.gpt", GPT_Model=object)
    models.gpt = gpt  # type: ignore[attr-defined]
    score = load("calculate_score_53d5258.py", common, monkeypatch)
    extract = load("extract_answer_53d5258.py", {**common, "evaluation": evaluation, "evaluation.prompts": prompts,
                                                 "evaluation.prompts.ext_ans": ext, "models": models,
                                                 "models.gpt": gpt}, monkeypatch)
    return extract, score


class Asked(Exception):
    """The authors' extract_answer asked its GPT model (caught by their code: extraction "")."""


class Recorder:
    def __init__(self) -> None:
        self.asked = 0

    def get_response(self, user_prompt: str) -> str:
        self.asked += 1
        return "GPT"


MC = {"question_type": "multi_choice", "answer_type": "text", "choices": ["30", "45", "60", "90"], "precision": None,
      "answer": "60", "query": "Q", "pid": "1"}
MC_TEXT = {"question_type": "multi_choice", "answer_type": "text", "choices": ["Yes", "No"], "precision": None,
           "answer": "Yes", "query": "Q", "pid": "6"}
INT = {"question_type": "free_form", "answer_type": "integer", "choices": None, "precision": None, "answer": "12",
       "query": "Q", "pid": "7"}
FLOAT1 = {"question_type": "free_form", "answer_type": "float", "choices": None, "precision": 1.0, "answer": "7.5",
          "query": "Q", "pid": "3"}
FLOAT2 = {"question_type": "free_form", "answer_type": "float", "choices": None, "precision": 2.0, "answer": "1.45",
          "query": "Q", "pid": "4"}
LIST = {"question_type": "free_form", "answer_type": "list", "choices": None, "precision": math.nan,
        "answer": "[2007, 2008]", "query": "Q", "pid": "5"}

#: (record, reply): replies their rules read, and replies only their GPT extractor reads
REPLIES = [
    (MC, "60"), (MC, " 60"), (MC, "C"), (MC, "(C) 60"), (MC, ""), (MC, 'The answer is "(D) 90".'), (MC, "sixty"),
    (MC_TEXT, "Yes"), (MC_TEXT, "yes"), (MC_TEXT, "Y"), (MC_TEXT, 'The answer is "No".'),
    (INT, "12"), (INT, " 12 "), (INT, "12.0"), (INT, "-0"), (INT, "1_2"), (INT, "12 cm"), (INT, 'The answer is "12.4".'),
    (INT, "١٢"), (FLOAT1, "7.5"), (FLOAT1, "7.45"), (FLOAT1, "7.55"), (FLOAT1, "1e1"), (FLOAT1, "nan"), (FLOAT1, "7,5"),
    (FLOAT2, "1.449"), (FLOAT2, "1.455"), (FLOAT2, "inf"), (FLOAT2, "$1.45"), (FLOAT2, 'The answer is "1.45".'),
    (LIST, "[2007, 2008]"), (LIST, "[2007,2008]"), (LIST, 'The answer is "[2007, 2008]".'), (LIST, ""),
]


def test_our_rules_and_score_are_the_authors(authors: tuple[ModuleType, ModuleType]) -> None:
    extract, score = authors
    fns = plugin_namespace()
    asked_somewhere = 0
    for record, reply in REPLIES:
        model = Recorder()
        theirs = extract.extract_answer(model, reply, record, quick_extract=True)
        ours = fns["official_rules"](reply, record)
        if model.asked:
            asked_somewhere += 1
            assert ours is None, (record["pid"], reply)  # their GPT is asked: so is our judge
            continue
        assert ours == theirs, (record["pid"], reply)
        their_prediction = score.normalize_extracted_answer(theirs, record["choices"], record["question_type"],
                                                            record["answer_type"], record["precision"])
        assert fns["normalize"](ours, record) == their_prediction, (record["pid"], reply)
        verdict = score.safe_equal(their_prediction, record["answer"])
        assert fns["mathvista_acc"](ours, record["answer"], record) == 100.0 * verdict, (record["pid"], reply)
    # by hand, the replies their rules leave to GPT: " 60", "C", "(C) 60", "sixty", "yes", "Y", "12.0",
    # "12 cm", "7,5", "$1.45" and the two bare lists (no rule reads a list); int() reads "1_2" and "١٢"
    assert asked_somewhere == 12


#: extractions as their GPT extractor might give them: our normalisation and verdict are theirs
EXTRACTIONS = [
    (MC, "C"), (MC, "(c)"), (MC, "(C) 45"), (MC, "60 degrees"), (MC, "E"), (MC, "c"), (MC, ""), (MC, "45"),
    (MC_TEXT, "A"), (MC_TEXT, "no"), (MC_TEXT, "Neither"),
    (INT, "12"), (INT, "12.9"), (INT, "twelve"), (INT, "1e1"), (FLOAT1, "7.46"), (FLOAT1, "7.449"),
    (FLOAT2, "1.4500"), (FLOAT2, "1.4"), (LIST, "[2007, 2008]"), (LIST, "[2007,2008]"), (LIST, "2007, 2008"),
]


def test_our_normalisation_of_any_extraction_is_the_authors(authors: tuple[ModuleType, ModuleType]) -> None:
    _, score = authors
    fns = plugin_namespace()
    right = 0
    for record, extraction in EXTRACTIONS:
        theirs = score.normalize_extracted_answer(extraction, record["choices"], record["question_type"],
                                                  record["answer_type"], record["precision"])
        assert fns["normalize"](extraction, record) == theirs, (record["pid"], extraction)
        verdict = score.safe_equal(theirs, record["answer"])
        right += verdict
        assert fns["mathvista_acc"](extraction, record["answer"], record) == 100.0 * verdict
    # by hand: C, (c), (C) 45 -> "60" (the first bracketed letter), "60 degrees" -> nearest "60", c -> nearest
    # "30"? no: every choice is 2 away ("c"->"30"...): the first, "30"; A -> Yes; 12; 12.9 -> 12; 1e1 -> 10;
    # 7.46 -> 7.5; 1.4500 -> 1.45; [2007, 2008]
    assert right == 11


#: lmms_eval/tasks/mathvista/mathvista.yaml at 75571cf, which mathvista_evals.py reads beside itself at import
LMMS_EVAL_YAML = """group: mathvista
task:
  - mathvista_testmini
  - mathvista_test
metadata:
  version: 0.0
  quick_extract: false"""


@pytest.fixture
def lmms_eval(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ModuleType:
    pytest.importorskip("yaml")
    judge = _stub("lmms_eval.llm_judge", Request=object, ServerConfig=lambda **kw: None, get_server=lambda **kw: None)
    stubs = {"Levenshtein": _stub("Levenshtein", distance=edit_distance),
             "loguru": _stub("loguru", logger=_stub("logger", info=print, error=print)),
             "lmms_eval": _stub("lmms_eval", __path__=[]), "lmms_eval.llm_judge": judge}
    shutil.copy(REFERENCE / "lmms_eval_mathvista_evals_75571cf.py", tmp_path)
    (tmp_path / "mathvista.yaml").write_text(LMMS_EVAL_YAML, encoding="utf-8")
    return load("lmms_eval_mathvista_evals_75571cf.py", stubs, monkeypatch, tmp_path)


def test_the_lmms_eval_variant_is_lmms_eval(lmms_eval: ModuleType) -> None:
    evaluator = lmms_eval.MathVistaEvaluator()
    asked: list[str] = []
    evaluator.get_chat_response = lambda prompt, **kw: asked.append(prompt) or ""
    fns = plugin_namespace()
    float_right = 0
    for record, reply in REPLIES:
        before = len(asked)
        # mathvista_process_results: the reply stripped, quick_extract false (mathvista.yaml)
        theirs = evaluator.extract_answer(reply.strip(), record, False)
        ours = fns["mathvista_extract_lmms_eval"](reply, record)
        if len(asked) > before:
            assert ours is None, (record["pid"], reply)
            continue
        assert ours == theirs, (record["pid"], reply)
        prediction = evaluator.normalize_extracted_answer(theirs, record["choices"], record["question_type"],
                                                          record["answer_type"], record["precision"])
        verdict = evaluator.safe_equal(prediction, record["answer"])
        assert fns["mathvista_acc_lmms_eval"](ours, record["answer"], record) == 100.0 * verdict, (record["pid"], reply)
        float_right += verdict and record["answer_type"] == "float"
    # the dataset's precision is a float64 (1.0): round(x, 1.0) raises, so no float question is ever right
    assert float_right == 0


@pytest.fixture
def vlmevalkit(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    pytest.importorskip("pandas")
    matching = load("vlmevalkit_matching_util_e8e78f0.py", {}, monkeypatch, SHARED)
    stubs = {"vlmeval": _stub("vlmeval", __path__=[]), "vlmeval.smp": _stub("vlmeval.smp", __path__=[]),
             "vlmeval.smp.file": _stub("vlmeval.smp.file", load=None),
             "vlmeval.utils": _stub("vlmeval.utils", can_infer=matching.can_infer)}
    return load("vlmevalkit_mathvista_e8e78f0.py", stubs, monkeypatch)


def test_the_vlmevalkit_prefetch_variant_is_vlmevalkit(vlmevalkit: ModuleType) -> None:
    fns = plugin_namespace()
    replies = [*REPLIES, (MC, "The answer is C"), (MC, "I think A or C, finally C"), (MC_TEXT, "no"),
               (MC, "Cannot determine the answer"), (INT, "0"), (FLOAT1, "7.50")]
    right = 0
    for record, reply in replies:
        choices = record["choices"] or []
        # VLMEvalKit's TSV: choices as the str of a list, answer_option the gold letter, skills a str
        line = {"question_type": record["question_type"], "answer_type": record["answer_type"],
                "choices": str(choices), "answer": record["answer"], "prediction": reply,
                "answer_option": chr(65 + choices.index(record["answer"])) if record["answer"] in choices else None}
        prefetched = vlmevalkit.post_check(line, prefetch=True)
        ours = fns["mathvista_prefetch_vlmevalkit"](reply, record)
        assert (ours is not None) == bool(prefetched), (record["pid"], reply)
        their_hit = bool(prefetched) and vlmevalkit.post_check({**line, "res": prefetched}, prefetch=False)
        assert fns["mathvista_acc_vlmevalkit_prefetch"](ours, record["answer"], record) == 100.0 * their_hit, (record["pid"], reply)
        right += their_hit
    assert right > 0
