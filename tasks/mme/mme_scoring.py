"""MME: the authors' yes/no reading and their scores (acc, acc+, the subtask score, the two sums).

Loaded as a plugin file by ``mme.yaml`` (``plugins:``); what it registers is visible to that task only.
The authors' rules are those of ``eval_tool/calculation.py`` (in ``tools/eval_tool.zip`` of
github.com/BradyFU/Awesome-Multimodal-Large-Language-Models, branch Evaluation, commit dd29509):

- ``mme_yes_no`` (a parser, official): the reply lower-cased; exactly ``yes`` or ``no`` is that
  answer, else its first four characters decide: ``yes`` among them is yes, else ``no`` among them
  is no, else the reply is "other" (unparsed here, scored wrong: ``accuracy_score`` keeps it in the
  denominator). The authors' readme asks for replies on one line ("please delete" a newline): the
  newlines of a reply are deleted before it is read (ours, following that readme).
- ``mme_yes_no_lmms_eval`` (a parser, the ``lmms_eval`` variant): lmms-eval's ``parse_pred_ans``
  (``tasks/mme/utils.py``): the reply lower-cased, stripped and with every ``.`` removed first; a
  one-character reply ``y`` or ``n`` is yes or no.
- ``mme_yes_no_vlmevalkit`` (a parser, the ``vlmevalkit`` variant): VLMEvalKit's ``YOrN_Extraction``
  (``vlmeval/dataset/utils/yorn.py``, with ``process_punctuation``; the generic
  :mod:`mmtasks.scoring.vlmevalkit_yorn`): "yes" a word of the
  processed reply and "no" not, or the reverse; else Unknown (None, wrong). Its LLM matcher for the
  Unknown replies runs only when VLMEvalKit is given a judge model, and is not followed.
- ``mme_pairs`` (an aggregator, official): per subtask (``category``), acc = the share of its
  questions answered right, acc+ = the share of its images (``question_id``, the task's ``cluster``)
  whose two questions are both right, score = 100 * (acc + acc+), 0-200; ``perception`` = the sum of
  the 10 perception subtasks' scores, ``cognition`` = the sum of the 4 cognition subtasks',
  ``mme_sum`` = both sums (ours: the sum the model reports cite as "MME sum"). A subtask the run
  has no question of adds nothing (the authors' script needs all 14). An image with only one of its
  questions in the run (``--limit``) counts in acc, not in acc+ (ours: the authors' script asserts
  two lines per image).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mmtasks.errors import DataError
from mmtasks.plugin import adapter, aggregator, parser
from mmtasks.scoring.aggregation import per_sample_mean
from mmtasks.scoring.vlmevalkit_yorn import vlmevalkit_yes_no as read_yes_no_vlmevalkit

if TYPE_CHECKING:
    from mmtasks.config.task_config import TaskConfig
    from mmtasks.core.sample import Sample
    from mmtasks.scoring.aggregation import TaskResult, TaskScoring

#: calculation.py eval_type_dict (the subtasks as the dataset's ``category`` names them)
PERCEPTION = ("existence", "count", "position", "color", "posters", "celebrity", "scene", "landmark", "artwork", "OCR")
COGNITION = ("commonsense_reasoning", "numerical_calculation", "text_translation", "code_reasoning")
CATEGORY = "category"
METRIC = "acc"
SUMS = ("mme_sum", "perception", "cognition")


def read_yes_no(reply: str) -> str | None:
    """calculation.py ``parse_pred_ans`` on the lower-cased reply: "yes", "no", or None ("other")."""
    pred = reply.replace("\r", "").replace("\n", "").lower()
    if pred in ("yes", "no"):
        return pred
    prefix = pred[:4]
    if "yes" in prefix:
        return "yes"
    if "no" in prefix:
        return "no"
    return None


def read_yes_no_lmms_eval(reply: str) -> str | None:
    """lmms-eval's ``parse_pred_ans`` (tasks/mme/utils.py): lower-cased, stripped, "." removed; "y"/"n"."""
    pred = reply.lower().strip().replace(".", "")
    if pred in ("yes", "no"):
        return pred
    if len(pred) == 1:
        return {"y": "yes", "n": "no"}.get(pred)
    prefix = pred[:4]
    if "yes" in prefix:
        return "yes"
    if "no" in prefix:
        return "no"
    return None


@parser("mme_yes_no")
def mme_yes_no(text: str) -> str | None:
    return read_yes_no(text)


@parser("mme_yes_no_lmms_eval")
def mme_yes_no_lmms_eval(text: str) -> str | None:
    return read_yes_no_lmms_eval(text)

@parser("mme_yes_no_vlmevalkit")
def mme_yes_no_vlmevalkit(text: str) -> str | None:
    return read_yes_no_vlmevalkit(text)


@adapter("mme_question_key")
def mme_question_key(record: dict[str, Any]) -> dict[str, Any]:
    """``question_key``: ``<question_id>:<answer>`` (lower-cased), unique per question. ``question_id``
    names the image, which has two questions, one answered Yes and one No (the MME paper; every pair of
    the authors' eval_tool files)."""
    qid, answer = record.get("question_id"), record.get("answer")
    if not isinstance(qid, str) or not isinstance(answer, str):
        raise DataError("expected question_id and answer as text", field="question_id")
    return {**record, "question_key": f"{qid}:{answer.strip().lower()}"}


@dataclass(frozen=True)
class SubtaskScore:
    """One subtask's figures, 0-100 (score 0-200)."""

    acc: float
    acc_plus: float | None
    score: float
    questions: int
    images: int


def subtask_scores(rows: Iterable[tuple[str, str, float]]) -> dict[str, SubtaskScore]:
    """``rows``: (category, image, score 0/100) of each scored question -> each category's figures.
    acc+ counts the images with two scored questions (both right); None when there is none."""
    by_cat: dict[str, dict[str, list[float]]] = {}
    for category, image, value in rows:
        by_cat.setdefault(category, {}).setdefault(image, []).append(value)
    out: dict[str, SubtaskScore] = {}
    for category, images in by_cat.items():
        values = [v for vs in images.values() for v in vs]
        acc = sum(values) / len(values)
        pairs = [vs for vs in images.values() if len(vs) == 2]
        acc_plus = 100.0 * sum(all(v > 0 for v in vs) for vs in pairs) / len(pairs) if pairs else None
        out[category] = SubtaskScore(acc, acc_plus, acc + (acc_plus or 0.0), len(values), len(images))
    return out


def sums(scores: Mapping[str, SubtaskScore]) -> dict[str, float | None]:
    """``perception``, ``cognition`` (the sums of their subtasks' scores: None with none of them) and
    ``mme_sum`` (both)."""
    perception = [scores[c].score for c in PERCEPTION if c in scores]
    cognition = [scores[c].score for c in COGNITION if c in scores]
    p = sum(perception) if perception else None
    c = sum(cognition) if cognition else None
    total = None if p is None and c is None else (p or 0.0) + (c or 0.0)
    return {"mme_sum": total, "perception": p, "cognition": c}


def _emits(config: "TaskConfig") -> list[str]:
    return [*SUMS, METRIC, "acc_plus"]


def _rows(samples: Iterable["Sample"], unscored: float | None) -> list[tuple[str, str, float]]:
    rows = []
    for s in samples:
        value = s.metrics.get(METRIC)
        if value is None:
            if unscored is None:
                continue
            value = unscored
        rows.append((s.breakdown.get(CATEGORY, ""), s.cluster or s.doc_id, float(value)))
    return rows


@aggregator("mme_pairs", emits=_emits)
def mme_pairs(task: "TaskScoring", samples: Sequence["Sample"], seed: int) -> "TaskResult":
    """The generic means (``acc`` over questions, its image-clustered stderr, the category breakdown),
    with the category rows given ``acc_plus`` and ``score``, and the sums."""
    samples = list(samples)
    result = per_sample_mean(task, samples, seed)
    scores = subtask_scores(_rows(samples, None))
    every = subtask_scores(_rows(samples, 0.0))
    for name, value in sums(scores).items():
        result.metrics[name] = value
        result.higher_is_better[name] = True
    for name, value in sums(every).items():  # failed requests counted as wrong
        result.metrics[f"{name}_all"] = value
    pairs = {(c, img) for c, img, _ in _rows(samples, None)}
    plus = _acc_plus_overall(_rows(samples, None))
    result.metrics["acc_plus"] = plus
    result.higher_is_better["acc_plus"] = True
    rows = result.breakdowns.get(CATEGORY, {})
    for category, row in rows.items():
        for name in SUMS:  # sums of the whole task only
            row.pop(name, None)
        figures = scores.get(category)
        row["acc_plus"] = figures.acc_plus if figures else None
        row["score"] = figures.score if figures else None
    result.counts = {**result.counts, "images": len(pairs), "subtasks": len(scores)}
    return result


def _acc_plus_overall(rows: list[tuple[str, str, float]]) -> float | None:
    """The share of all images (with both questions scored) whose two questions are right."""
    images: dict[tuple[str, str], list[float]] = {}
    for category, image, value in rows:
        images.setdefault((category, image), []).append(value)
    pairs = [vs for vs in images.values() if len(vs) == 2]
    return 100.0 * sum(all(v > 0 for v in vs) for vs in pairs) / len(pairs) if pairs else None
