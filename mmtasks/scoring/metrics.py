"""Per-sample metrics, registered by name for task YAML (``metrics``).

Signature: ``metric(parsed, target, doc) -> float | None`` on the 0-100 scale.
A parsed answer of ``None`` (nothing could be parsed) scores 0. A target of
the wrong type is a :class:`~mmtasks.errors.DataError` naming the document.
"""

from __future__ import annotations

from typing import Any

from mmtasks.errors import DataError
from mmtasks.scoring.parsers import unanswerable as normalize_unanswerable
from mmtasks.registry import metrics
from mmtasks.scoring.rouge import rouge_l_f1
from mmtasks.scoring.text_normalize import strip_answer_prefix

#: The phrases that mark a refusal in RealBench's unanswerable subset, already
#: in the parser's folded form.
UNANSWERABLE_PHRASES = ("no relevant content mentioned", "未提及相关内容")


def _bad_target(doc: dict, expected: str, target: Any) -> DataError:
    return DataError(
        f"answer must be {expected}, got {target!r}",
        doc_id=str(doc["id"]) if "id" in doc else None, field="answer",
    )


def _as_int(target: Any, doc: dict) -> int:
    if isinstance(target, bool):
        raise _bad_target(doc, "an integer", target)
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.strip().isdigit():
        return int(target.strip())
    raise _bad_target(doc, "an integer", target)


def _as_int_set(target: Any, doc: dict) -> set[int]:
    if not isinstance(target, (list, tuple, set)) or not target:
        raise _bad_target(doc, "a non-empty list of integers", target)
    return {_as_int(item, doc) for item in target}


def _score(correct: bool) -> float:
    return 100.0 if correct else 0.0


@metrics.register("exact_integer")
def exact_integer(parsed: int | None, target: Any, doc: dict) -> float:
    """Retrieval easy: the parsed image number equals the gold number."""
    gold = _as_int(target, doc)
    return _score(parsed is not None and parsed == gold)


@metrics.register("exact_set")
def exact_set(parsed: list[int] | None, target: Any, doc: dict) -> float:
    """Retrieval hard: the parsed set of image numbers equals the gold set."""
    gold = _as_int_set(target, doc)
    return _score(parsed is not None and set(parsed) == gold)


@metrics.register("set_f1")
def set_f1(parsed: list[int] | None, target: Any, doc: dict) -> float:
    """Retrieval hard, secondary: F1 of the parsed set against the gold set, x100."""
    gold = _as_int_set(target, doc)
    if not parsed:
        return 0.0
    predicted = set(parsed)
    hits = len(predicted & gold)
    return 100.0 * 2 * hits / (len(predicted) + len(gold))


@metrics.register("choice_acc")
def choice_acc(parsed: str | None, target: Any, doc: dict) -> float:
    """Ranking: the parsed letter equals the gold letter."""
    if not isinstance(target, str) or target.strip().upper() not in {"A", "B", "C", "D"}:
        raise _bad_target(doc, "a letter A-D", target)
    return _score(parsed is not None and parsed == target.strip().upper())


@metrics.register("rouge_l_zh")
def rouge_l_zh(parsed: str | None, target: Any, doc: dict) -> float:
    """Extraction and reasoning: ROUGE-L F1 (jieba + rouge-chinese), x100.

    The gold answer goes through the same :func:`strip_answer_prefix` as the
    prediction, so that an answer copied with its final period is not
    penalised for the period the parser removed.
    """
    if not isinstance(target, str):
        raise _bad_target(doc, "a string", target)
    reference = strip_answer_prefix(target)
    if not reference:
        raise _bad_target(doc, "a non-empty string", target)
    if parsed is None:
        return 0.0
    return 100.0 * rouge_l_f1(parsed, reference)


@metrics.register("unanswerable_acc")
def unanswerable_acc(parsed: str | None, target: Any, doc: dict) -> float:
    """Unanswerable: the answer contains "No relevant content mentioned"
    (any case) or "未提及相关内容"."""
    if parsed is None:
        return 0.0
    answer = normalize_unanswerable(parsed)
    return _score(any(phrase in answer for phrase in UNANSWERABLE_PHRASES))
