"""Per-sample metrics, registered by name for task YAML (``metrics[].function``).

Signature: ``metric(parsed, target, doc) -> float | None`` on the 0-100 scale,
where ``parsed`` is the parser's value, ``target`` the gold answer and ``doc``
the document's record. A parsed answer of ``None`` (nothing could be parsed)
scores 0; a metric returns ``None`` when it does not apply to the sample. A
target of the wrong type is a :class:`~mmtasks.errors.DataError` naming the
document.

Register one with ``@metric("name")`` (or, from a plugin file,
``mmtasks.registry.metrics.register("name")``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mmtasks.errors import DataError
from mmtasks.registry import metrics as _metrics
from mmtasks.scoring.answer_rules import open_match
from mmtasks.scoring.parsers import literal_options
from mmtasks.scoring.rouge import rouge_l_f1
from mmtasks.scoring.text_normalize import strip_answer_prefix

Metric = Callable[[Any, Any, Mapping[str, Any]], "float | None"]


def metric(name: str) -> Callable[[Metric], Metric]:
    """Register ``fn(parsed, target, doc) -> float | None`` as the metric function ``name``."""
    return _metrics.register(name)


def bad_target(doc: Mapping[str, Any], expected: str, target: Any) -> DataError:
    return DataError(
        f"answer must be {expected}, got {target!r}",
        doc_id=str(doc["id"]) if "id" in doc else None, field="answer",
    )


def as_int(target: Any, doc: Mapping[str, Any]) -> int:
    if isinstance(target, bool):
        raise bad_target(doc, "an integer", target)
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.strip().isdigit():
        return int(target.strip())
    raise bad_target(doc, "an integer", target)


def as_int_set(target: Any, doc: Mapping[str, Any]) -> set[int]:
    if not isinstance(target, (list, tuple, set)) or not target:
        raise bad_target(doc, "a non-empty list of integers", target)
    return {as_int(item, doc) for item in target}


def score(correct: bool) -> float:
    return 100.0 if correct else 0.0


@metric("exact_integer")
def exact_integer(parsed: int | None, target: Any, doc: Mapping[str, Any]) -> float:
    """The parsed integer equals the gold integer."""
    gold = as_int(target, doc)
    return score(parsed is not None and parsed == gold)


@metric("exact_set")
def exact_set(parsed: list[int] | None, target: Any, doc: Mapping[str, Any]) -> float:
    """The parsed set of integers equals the gold set."""
    gold = as_int_set(target, doc)
    return score(parsed is not None and set(parsed) == gold)


@metric("set_f1")
def set_f1(parsed: list[int] | None, target: Any, doc: Mapping[str, Any]) -> float:
    """F1 of the parsed set against the gold set, x100."""
    gold = as_int_set(target, doc)
    if not parsed:
        return 0.0
    predicted = set(parsed)
    hits = len(predicted & gold)
    return 100.0 * 2 * hits / (len(predicted) + len(gold))


@metric("choice_acc")
def choice_acc(parsed: str | None, target: Any, doc: Mapping[str, Any]) -> float:
    """The parsed letter equals the gold letter (one letter; one of the record's ``options``
    when the record has them)."""
    gold = target.strip().upper() if isinstance(target, str) else None
    if gold is None or len(gold) != 1 or not gold.isalpha():
        raise bad_target(doc, "one option letter", target)
    options = doc.get("options")
    if isinstance(options, Mapping) and options and gold not in {str(k).strip().upper() for k in options}:
        raise bad_target(doc, f"one of the option letters {sorted(options)}", target)
    return score(parsed is not None and parsed == gold)


@metric("rouge_l_zh")
def rouge_l_zh(parsed: str | None, target: Any, doc: Mapping[str, Any]) -> float:
    """ROUGE-L F1 on jieba-segmented text (rouge-chinese), x100.

    The gold answer goes through the same :func:`strip_answer_prefix` as the
    prediction, so that an answer copied with its final period is not
    penalised for the period the parser removed.
    """
    if not isinstance(target, str):
        raise bad_target(doc, "a string", target)
    reference = strip_answer_prefix(target)
    if not reference:
        raise bad_target(doc, "a non-empty string", target)
    if parsed is None:
        return 0.0
    return 100.0 * rouge_l_f1(parsed, reference)


def accepted_answers(target: Any, doc: Mapping[str, Any]) -> str | list[str]:
    """An open question's gold: one answer, or a list of accepted ones (a list, or a string
    holding a Python list such as ``"['24/7', '3.429']"``, as MMMU's answer_dict_val.json lists
    them)."""
    if isinstance(target, (list, tuple)) and target:
        return [str(t) for t in target]
    if isinstance(target, (int, float)) and not isinstance(target, bool):
        return str(target)
    if isinstance(target, str):
        if target.strip().startswith("[") and target.strip().endswith("]"):
            try:
                answers = literal_options(doc, "answer", target)
            except DataError:  # "[x]" that is no list literal: the text itself
                return target
            if answers:
                return [str(a) for a in answers]
        return target
    raise bad_target(doc, "an answer (a string, a number or a list of accepted answers)", target)


@metric("open_answer_acc")
def open_answer_acc(parsed: Any, target: Any, doc: Mapping[str, Any]) -> float:
    """MMMU's evaluation of one answer: candidates parsed by ``open_answer`` are matched by
    ``eval_open`` (a number equal to a gold number, or a gold text inside a candidate text); a
    single string (an option letter, from ``choice`` under ``by_field``) must equal the gold
    (``eval_multi_choice``), so one metric scores a task that mixes both kinds of question."""
    gold = accepted_answers(target, doc)
    if parsed is None:
        return 0.0
    if isinstance(parsed, str):
        return score(parsed in gold if isinstance(gold, list) else parsed == gold)
    if not isinstance(parsed, list):
        raise DataError(f"open_answer_acc scores the open_answer or choice parser's answers, got {type(parsed).__name__}",
                        doc_id=str(doc["id"]) if "id" in doc else None, field="answer.parser")
    return score(open_match(gold, parsed))
