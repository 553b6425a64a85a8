"""LVBench's answer rule and per-capability accuracies.

Loaded as a plugin file by ``lvbench.yaml``. The authors' repository (github.com/THUDM/LVBench,
commit f998d95) scores an answer file: ``lvbench/utils/answer_util.py`` ``polish_answer`` turns a
reply into a letter (stripped; cut before its first ")"; after its first "(" when it has one; its
first word; that word's first character), and ``lvbench/metrics/compute_accuracy.py`` counts it
right when it equals the record's ``answer``, overall and in each of the question's
``question_type`` entries (a question of two types counts in both). ``lvbench_polish`` is that
reading; a character that is not one of A-D is unparsed here (scored 0, as the authors' equality
fails). ``lvbench_capabilities`` adds each capability's accuracy to the per-question ``acc``.
``lvbench_lmms_eval``: lmms-eval's reading (``lvbench_process_results``: ``extract_mcq_answer``
over A-D, ``mmtasks.scoring.lmms_eval_mcq``), for the scoring variant ``lmms_eval``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mmtasks.plugin import parser
from mmtasks.scoring.lmms_eval_mcq import lmms_eval_mcq_letter
from mmtasks.scoring.aggregation import TaskResult, aggregator, mean, per_sample_mean, values_by_label

if TYPE_CHECKING:
    from mmtasks.plugin import Sample
    from mmtasks.scoring.aggregation import TaskScoring

#: the six capabilities (the records' question_type values) and the short names of the authors'
#: scripts/test_acc.py name_map, which the leaderboard uses
CAPABILITIES = {"entity recognition": "ER", "event understanding": "EU", "key information retrieval": "KIR",
                "temporal grounding": "TG", "reasoning": "Rea", "summarization": "Sum"}


def polish(answer: str) -> str:
    """``polish_answer``: the letter the authors read in a reply ("" for an empty one)."""
    answer = answer.strip()
    answer = answer.split(")")[0].strip()
    if "(" in answer:
        answer = answer.split("(")[1].strip()
    answer = answer.split(" ")[0]
    return answer[0] if answer else answer


@parser("lvbench_polish")
def lvbench_polish(text: str, doc: Mapping[str, Any]) -> str | None:
    read = polish(text)
    return read if read in ("A", "B", "C", "D") else None


@parser("lvbench_lmms_eval")
def lvbench_lmms_eval(text: str, doc: Mapping[str, Any]) -> str | None:
    return lmms_eval_mcq_letter(text, "ABCD")


def _emits(config: Any) -> list[str]:
    return ["acc", *(f"acc_{code.lower()}" for code in CAPABILITIES.values())]


@aggregator("lvbench_capabilities", emits=_emits)
def lvbench_capabilities(task: "TaskScoring", samples: Sequence["Sample"], seed: int) -> TaskResult:
    """The per-question means and breakdowns, and ``acc_<code>``: the accuracy over the questions
    whose ``question_type`` holds that capability (the breakdown of the same code, label "yes")."""
    samples = list(samples)
    result = per_sample_mean(task, samples, seed)
    for code in CAPABILITIES.values():
        values = values_by_label(samples, "acc", code).get("yes", [])
        result.metrics[f"acc_{code.lower()}"] = mean(values) if values else None
    return result
