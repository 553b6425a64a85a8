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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from mmtasks.errors import ConfigError, DataError
from mmtasks.registry import metrics as _metrics
from mmtasks.scoring.answer_rules import open_match
from mmtasks.scoring.parsers import is_letter, label_key, literal_options
from mmtasks.scoring.rouge import rouge_l_f1
from mmtasks.scoring.text_normalize import strip_answer_prefix

Metric = Callable[[Any, Any, Mapping[str, Any]], "float | None"]


def metric(name: str) -> Callable[[Metric], Metric]:
    """Register ``fn(parsed, target, doc) -> float | None`` as the metric function ``name``."""
    return _metrics.register(name)


References = Literal["one", "several"]


def takes_references(kind: References) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare how many references a text metric takes: ``one`` (the target must be one string)
    or ``several`` (the target may be a list of reference strings, ``target: "field:captions"``).
    A task whose target is a list is a ``check`` error, per document, for a metric that takes
    ``one``; a metric that declares nothing reads its target its own way (``exact_set``: a list
    of integers). Put it under ``@metric``."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.references = kind  # type: ignore[attr-defined]  # the declaration is kept on the function
        return fn

    return deco


def declared_references(fn: Any) -> References | None:
    """What a metric function declares with :func:`takes_references` (None: nothing)."""
    kind = getattr(getattr(fn, "func", fn), "references", None)  # a partial (bound args) keeps its function's
    return kind if kind in ("one", "several") else None


def reference_list(target: Any, doc: Mapping[str, Any]) -> list[str]:
    """The references of a target: one string, or a non-empty list of non-empty strings."""
    refs = [target] if isinstance(target, str) else target
    if not isinstance(refs, (list, tuple)) or not refs or not all(isinstance(r, str) and r.strip() for r in refs):
        doc_id = next((str(doc[k]) for k in ("id", "doc_id", "idx", "question_id") if k in doc), None)
        raise DataError(f"the target must be a non-empty string or a non-empty list of them, got {str(target)[:120]!r}",
                        doc_id=doc_id, field="target")
    return list(refs)


CorpusFn = Callable[[Sequence[Any], Sequence[Any]], float]


def corpus_metric(name: str, *, references: References = "several",
                  requires: tuple[str, ...] = ()) -> Callable[[CorpusFn], CorpusFn]:
    """Register ``fn(predictions, references) -> float`` (0-100) as a corpus metric function:
    computed once over every (answer, target) pair of the task (and of each breakdown group),
    like an ``evaluate:`` metric with ``aggregation: corpus``. ``requires``: modules it imports
    (checked when a task naming it loads, so a missing extra is a load error)."""

    def deco(fn: CorpusFn) -> CorpusFn:
        # what the task loader reads, kept on the function itself
        fn.corpus = True  # type: ignore[attr-defined]
        fn.references = references  # type: ignore[attr-defined]
        fn.requires = requires  # type: ignore[attr-defined]
        return _metrics.register(name)(fn)

    return deco


def is_corpus_function(fn: Any) -> bool:
    return getattr(fn, "corpus", False) is True


@dataclass(frozen=True, eq=False)
class CorpusFunction:
    """A registered corpus metric function (see :func:`corpus_metric`) as the task computes it."""

    name: str
    fn: CorpusFn

    def compute(self, predictions: Sequence[Any], references: Sequence[Any]) -> float | None:
        """The metric over these pairs (None: no pairs); an unparsed answer was kept as ``""``."""
        if not predictions:
            return None
        return float(self.fn(["" if p is None else str(p) for p in predictions], list(references)))


class MetricArgs(BaseModel):
    """Base of a metric function's arguments (``metrics[].args``): unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def takes_args(model: type[MetricArgs]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare that a metric function takes arguments, written ``metrics[].args`` in the task
    YAML, validated by ``model`` when the task loads and passed as ``fn(parsed, target, doc,
    args)``; a function without them is called as ``fn(parsed, target, doc)`` and refuses
    ``args``. Put it under ``@metric``: ``@metric("x") @takes_args(XArgs) def x(...)``."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.metric_args = model  # type: ignore[attr-defined]  # the args model is kept on the function
        return fn

    return deco


def bind_metric(name: str, fn: Callable[..., Any], given: Mapping[str, Any], *, file: Any, field: str) -> Metric:
    """``fn`` with its validated ``metrics[].args`` (``field``), as ``metric(parsed, target, doc)``;
    an unknown key, a value of the wrong type, or args for a function that takes none is a
    :class:`ConfigError` naming ``file`` and the key."""
    model: type[MetricArgs] | None = getattr(fn, "metric_args", None)
    if model is None:
        raise ConfigError(f"metric function {name!r} takes no args", file=file, field=field)
    try:
        args = model.model_validate(dict(given))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in (field, *err["loc"]))
        if err["type"] == "extra_forbidden":
            from mmtasks.config.yaml_loader import did_you_mean

            hint = did_you_mean(str(err["loc"][-1]), sorted(model.model_fields))
            raise ConfigError(f"unknown key for metric function {name!r}", file=file, field=where, hint=hint) from None
        raise ConfigError(err["msg"], file=file, field=where) from None
    return partial(fn, args=args)


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
    """The parsed option equals the gold option: one letter (compared upper-cased; one of the
    record's ``options`` when the record has them), or a word label of the ``choice`` parser's
    (``True``, ``yes``; compared as :func:`~mmtasks.scoring.parsers.label_key` folds it, so
    a gold ``true`` is the label ``True``)."""
    if isinstance(target, bool):
        target = str(target)
    gold = target.strip() if isinstance(target, str) else None
    if not gold:
        raise bad_target(doc, "one option letter or label", target)
    if not label_key(gold):
        raise bad_target(doc, "one option letter or label", target)
    options = doc.get("options")
    if isinstance(options, Mapping) and options and label_key(gold) not in {label_key(str(k)) for k in options}:
        raise bad_target(doc, f"one of the option labels {sorted(map(str, options))}", target)
    if is_letter(gold):
        return score(parsed is not None and parsed == gold.upper())
    return score(parsed is not None and label_key(str(parsed)) == label_key(gold))


@metric("rouge_l_zh")
@takes_references("several")
def rouge_l_zh(parsed: str | None, target: Any, doc: Mapping[str, Any]) -> float:
    """ROUGE-L F1 on jieba-segmented text (rouge-chinese), x100; with several references, the
    best F1 over them (Lin 2004, "ROUGE", section 2.1: the maximum of the pairwise scores is
    the multiple-reference score).

    The gold answer goes through the same :func:`strip_answer_prefix` as the
    prediction, so that an answer copied with its final period is not
    penalised for the period the parser removed.
    """
    if isinstance(target, (list, tuple)) and target and all(isinstance(t, str) for t in target):
        targets = list(target)
    elif isinstance(target, str):
        targets = [target]
    else:
        raise bad_target(doc, "a string or a list of strings", target)
    references = [strip_answer_prefix(t) for t in targets]
    if not all(references):
        raise bad_target(doc, "a non-empty string", target)
    if parsed is None:
        return 0.0
    return 100.0 * max(rouge_l_f1(parsed, reference) for reference in references)


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
