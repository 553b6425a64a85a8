"""POPE: the authors' yes/no reading and their five figures (accuracy, precision, recall, F1, yes ratio).

Loaded as a plugin file by ``_base.yaml`` (``plugins:``); what it registers is visible to the POPE tasks
only. The authors' rules are those of ``evaluate.py`` (github.com/AoiDragon/POPE, commit 08d957b):

- ``pope_yes_no`` (a parser, official): only the reply's first sentence (the text before its first
  ``.``), its commas removed, split at spaces; the answer is no when a word is ``No``, ``not`` or
  ``no`` (case as written), else yes. Every reply is read: nothing is unparsed.
- ``pope_lmms_eval`` (a parser, the ``lmms_eval`` variant): lmms-eval's ``pope_process_results``
  (``tasks/pope/utils.py``): the reply lower-cased and stripped, compared whole with the answer.
- ``pope_yes_no_vlmevalkit`` (a parser, the ``vlmevalkit`` variant): VLMEvalKit's ``YOrN_Extraction``
  (``vlmeval/dataset/utils/yorn.py``, with ``process_punctuation``; the generic
  :mod:`mmtasks.scoring.vlmevalkit_yorn`): "yes" a word of the
  processed reply and "no" not, or the reverse; else Unknown (None, wrong); its recall counts an
  Unknown yes-question as a false negative (``pope_recall_unit_vlmevalkit``).
- Per-question metrics whose plain means are the authors' figures: ``pope_correct`` (accuracy),
  ``pope_precision_unit`` (a question read as yes: right or not; the mean is TP / (TP + FP)),
  ``pope_recall_unit`` (a question answered yes in the data, read as yes or no: the mean is
  TP / (TP + FN)), ``pope_said_yes`` (the yes ratio); ``pope_gold_yes`` is lmms-eval's "yes ratio",
  the share of questions whose answer is yes (its ``pope_aggregate_yes_ratio`` counts the ground truth).
- ``pope_f1`` (an aggregator): the means, and F1 = 2PR / (P + R) from them. The authors' script
  divides by zero when nothing is read as yes (precision) or P + R is 0; here precision is then null
  and F1 null, or 0 when P + R is 0 (ours).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mmtasks.plugin import aggregator, metric, parser
from mmtasks.scoring.aggregation import per_sample_mean
from mmtasks.scoring.vlmevalkit_yorn import vlmevalkit_yes_no as read_yes_no_vlmevalkit

if TYPE_CHECKING:
    from mmtasks.config.task_config import TaskConfig
    from mmtasks.core.sample import Sample
    from mmtasks.scoring.aggregation import TaskResult, TaskScoring

UNIT_METRICS = ("acc", "precision", "recall", "yes_ratio")


def read_yes_no(reply: str) -> str:
    """evaluate.py: the first sentence, commas removed, split at spaces; "No"/"not"/"no" -> no, else yes."""
    text = reply
    if text.find(".") != -1:
        text = text.split(".")[0]
    text = text.replace(",", "")
    words = text.split(" ")
    return "no" if ("No" in words or "not" in words or "no" in words) else "yes"


def read_lmms_eval(reply: str) -> str | None:
    """lmms-eval's pope_process_results: the reply lower-cased and stripped (None: empty)."""
    return reply.lower().strip() or None


@parser("pope_yes_no")
def pope_yes_no(text: str) -> str:
    return read_yes_no(text)


@parser("pope_lmms_eval")
def pope_lmms_eval(text: str) -> str | None:
    return read_lmms_eval(text)

@parser("pope_yes_no_vlmevalkit")
def pope_yes_no_vlmevalkit(text: str) -> str | None:
    return read_yes_no_vlmevalkit(text)


def _gold(target: Any) -> str:
    return str(target).strip().lower()


@metric("pope_correct")
def pope_correct(parsed: Any, target: Any, doc: Mapping[str, Any]) -> float:
    return 100.0 if parsed is not None and parsed == _gold(target) else 0.0


@metric("pope_precision_unit")
def pope_precision_unit(parsed: Any, target: Any, doc: Mapping[str, Any]) -> float | None:
    """Read as yes: 100 when the answer is yes (TP), 0 when no (FP); else not counted."""
    return None if parsed != "yes" else (100.0 if _gold(target) == "yes" else 0.0)


@metric("pope_recall_unit")
def pope_recall_unit(parsed: Any, target: Any, doc: Mapping[str, Any]) -> float | None:
    """Answered yes in the data and read as yes (TP: 100) or no (FN: 0); else not counted."""
    if _gold(target) != "yes" or parsed not in ("yes", "no"):
        return None
    return 100.0 if parsed == "yes" else 0.0


@metric("pope_recall_unit_vlmevalkit")
def pope_recall_unit_vlmevalkit(parsed: Any, target: Any, doc: Mapping[str, Any]) -> float | None:
    """VLMEvalKit's POPE_rating: answered yes in the data, read as yes (TP: 100) or anything else, its
    Unknown included (FN: 0); else not counted."""
    if _gold(target) != "yes":
        return None
    return 100.0 if parsed == "yes" else 0.0


@metric("pope_said_yes")
def pope_said_yes(parsed: Any, target: Any, doc: Mapping[str, Any]) -> float:
    return 100.0 if parsed == "yes" else 0.0


@metric("pope_gold_yes")
def pope_gold_yes(parsed: Any, target: Any, doc: Mapping[str, Any]) -> float:
    return 100.0 if _gold(target) == "yes" else 0.0


def f1_of(precision: float | None, recall: float | None) -> float | None:
    if precision is None or recall is None:
        return None
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def _emits(config: "TaskConfig") -> list[str]:
    return ["f1", *UNIT_METRICS]


@aggregator("pope_f1", emits=_emits)
def pope_f1(task: "TaskScoring", samples: Sequence["Sample"], seed: int) -> "TaskResult":
    """The per-question means (accuracy, precision, recall, yes ratio) and F1 from precision and recall."""
    result = per_sample_mean(task, samples, seed)
    result.metrics["f1"] = f1_of(result.metrics.get("precision"), result.metrics.get("recall"))  # type: ignore[arg-type]
    result.metrics["f1_stderr"] = None
    result.higher_is_better["f1"] = True
    for name in ("f1_all", "f1_micro"):
        result.metrics.pop(name, None)
    return result
