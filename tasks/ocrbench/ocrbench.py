"""OCRBench scoring: the authors' containment rule per question and their sums.

Loaded as a plugin file by ``ocrbench.yaml`` (``plugins:``); the names it registers are visible
to the tasks that list it.

The rule is the evaluation block every script of github.com/Yuliang-Liu/MultimodalOCR
``OCRBench/scripts/*.py`` repeats (``GPT4V.py``, ``LLaVA1_5.py`` ..., commit f5cbec6):

- a question is right (1) when one of its accepted answers, lower-cased, stripped and with
  newlines made spaces, is a substring of the reply treated the same way;
- for the ``HME100k`` questions (handwritten formulas) nothing is lower-cased and every space is
  removed from both sides instead (``x ^ { 2 }`` and ``x^{2}`` are the same);
- the score is the number of right questions (out of 1000), with the sums per category: Text
  Recognition (the six recognition types together, out of 300), Scene Text-centric VQA (200),
  Doc-oriented VQA (200), Key Information Extraction (200) and Handwritten Mathematical
  Expression Recognition (100).

lmms-eval (``lmms_eval/tasks/ocrbench/utils.py``) also folds fullwidth ASCII characters and the
ideographic space to their ASCII forms before comparing (not for HME100k): the ``lmms_eval``
scoring variant.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mmtasks.errors import DataError
from mmtasks.plugin import metric, takes_references
from mmtasks.scoring.aggregation import TaskResult, aggregator, per_sample_mean

if TYPE_CHECKING:
    from mmtasks.config.task_config import TaskConfig
    from mmtasks.core.sample import Sample
    from mmtasks.scoring.aggregation import TaskScoring

#: the source dataset whose answers are compared without spaces and case kept (the authors' test)
HME_DATASET = "HME100k"
#: the six question types the authors add up as "Text Recognition"
RECOGNITION_TYPES = ("Regular Text Recognition", "Irregular Text Recognition", "Artistic Text Recognition",
                     "Handwriting Recognition", "Digit String Recognition", "Non-Semantic Text Recognition")
#: reported metric -> the question types it sums, in the order the authors print them
CATEGORIES: dict[str, tuple[str, ...]] = {
    "text_recognition": RECOGNITION_TYPES,
    "scene_text_vqa": ("Scene Text-centric VQA",),
    "doc_vqa": ("Doc-oriented VQA",),
    "kie": ("Key Information Extraction",),
    "hmer": ("Handwritten Mathematical Expression Recognition",),
}
QUESTION_TYPES = frozenset(t for types in CATEGORIES.values() for t in types)
#: the per-question metric (100: right, 0: wrong) the sums are made of
PER_QUESTION = "correct"
#: the breakdown (task YAML ``breakdowns``) holding each question's type
TYPE_BREAKDOWN = "question_type"
SCORE = "final_score"


def _answers(target: Any, doc: Mapping[str, Any]) -> list[str]:
    answers = [target] if isinstance(target, str) else target
    if not isinstance(answers, (list, tuple)) or not answers or not all(isinstance(a, str) for a in answers):
        raise DataError(f"the answer must be a string or a non-empty list of strings, got {str(target)[:120]!r}",
                        field="answer")
    return list(answers)


def _fold_fullwidth(text: str) -> str:
    """Fullwidth ASCII (U+FF01-U+FF5E) to ASCII and the ideographic space (U+3000) to a space."""
    return "".join(chr(ord(c) - 0xFEE0) if 0xFF01 <= ord(c) <= 0xFF5E else " " if c == "\u3000" else c for c in text)


def contains_answer(reply: str, answers: Sequence[str], dataset: str, *, fold_fullwidth: bool = False) -> bool:
    """The authors' test: one accepted answer is a substring of the reply (see the module docstring)."""
    if dataset == HME_DATASET:
        predict = reply.strip().replace("\n", " ").replace(" ", "")
        return any(a.strip().replace("\n", " ").replace(" ", "") in predict for a in answers)
    fold = _fold_fullwidth if fold_fullwidth else (lambda s: s)
    predict = fold(reply).lower().strip().replace("\n", " ")
    return any(fold(a).lower().strip().replace("\n", " ") in predict for a in answers)


def _dataset(doc: Mapping[str, Any]) -> str:
    dataset = doc.get("dataset")
    if not isinstance(dataset, str):
        raise DataError(f"the record's dataset must be a string, got {dataset!r}", field="dataset")
    return dataset


@metric("ocrbench_contains")
@takes_references("several")
def ocrbench_contains(parsed: str | None, target: Any, doc: Mapping[str, Any]) -> float:
    """100 when an accepted answer is in the reply by the authors' rule, else 0."""
    return 100.0 if parsed is not None and contains_answer(parsed, _answers(target, doc), _dataset(doc)) else 0.0


@metric("ocrbench_contains_lmms_eval")
@takes_references("several")
def ocrbench_contains_lmms_eval(parsed: str | None, target: Any, doc: Mapping[str, Any]) -> float:
    """lmms-eval's rule: the authors', with fullwidth ASCII folded first (not for HME100k)."""
    return 100.0 if parsed is not None and contains_answer(parsed, _answers(target, doc), _dataset(doc),
                                                            fold_fullwidth=True) else 0.0


def _emits(config: "TaskConfig") -> list[str]:
    return [SCORE, *CATEGORIES, PER_QUESTION]


@aggregator("ocrbench_sums", emits=_emits)
def ocrbench_sums(task: "TaskScoring", samples: Sequence["Sample"], seed: int) -> TaskResult:
    """``correct`` (the percentage right, with its stderr and breakdowns, as ``per_sample_mean``
    gives it) and the authors' sums: ``final_score``, the number of right questions (out of 1000
    on the full set), and one sum per category. A question without a score (a failed request)
    adds nothing, as in the authors' scripts (a question without a prediction keeps no result)."""
    result = per_sample_mean(task, samples, seed)
    sums = dict.fromkeys(QUESTION_TYPES, 0)
    for s in samples:
        qtype = s.breakdown.get(TYPE_BREAKDOWN, "")
        if qtype not in QUESTION_TYPES:
            raise DataError(f"question_type {qtype!r} is none of OCRBench's ten", doc_id=s.doc_id,
                            field="question_type")
        value = s.metrics.get(PER_QUESTION)
        if value is not None and value > 0:
            sums[qtype] += 1
    for name, types in CATEGORIES.items():
        result.metrics[name] = sum(sums[t] for t in types)
        result.higher_is_better[name] = True
    result.metrics[SCORE] = sum(sums.values())
    result.higher_is_better[SCORE] = True
    return result
