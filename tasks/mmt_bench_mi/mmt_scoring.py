"""MMT-Bench (multi-image) answer reading: VLMEvalKit's exact matching of an option.

Loaded as a plugin file by ``mmt_bench_mi.yaml`` (``plugins:``). The MMT-Bench authors
(github.com/OpenGVLab/MMT-Bench README) recommend VLMEvalKit, which scores ``MMT-Bench_VAL_MI``
with ``ImageMCQDataset.evaluate_heuristic`` -> ``mcq_vanilla_eval``. Without a judge model
(``exact_matching``) a reply's letter is ``can_infer`` of github.com/open-compass/VLMEvalKit
``vlmeval/utils/matching_util.py`` (commit ``e8e78f05``), the generic
:mod:`mmtasks.scoring.vlmevalkit_matching` over the options A-I:

1. ``can_infer_option``: a reply holding "Failed to obtain answer via API" reads nothing; one
   holding a refusal phrase ("Sorry, I can't help with images of people yet.", "I can't process
   this file.", "I'm sorry, but without the image provided", "Cannot determine the answer") reads
   "Z" (no option: wrong). Otherwise ``.()[],:;!*#{}`` become spaces and the reply is split into
   words; when exactly one option letter is a word, it is the answer if it is among the last four
   words; when no letter is a word but "Z" is, "Z". Else "answer is X" ("correct answer is **B**",
   any case, X one of A-D) names X when X is an option.
2. ``can_infer_text``: a reply at most twice as long as all option texts together names the
   option whose text (case-folded) it contains, when exactly one does.

Nothing read: VLMEvalKit's exact matching records "Z" (wrong); here the reply is unparsed
(``answer.retries: 0``: scored 0, and counted). "Z" itself is returned as read, and is wrong.

The task follows VLMEvalKit at ``e8e78f05``. MMT-Bench's own repository (github.com/OpenGVLab/MMT-Bench
at ``84012c9``) ships an older copy of VLMEvalKit (``vlmeval/utils/matching_util.py``), which differs
in three ways: a single option letter among the words is the answer wherever it stands (not only
among the last four: "B is the answer since the left image ..." reads B there, nothing here), there
is no "answer is X" rule, and ``can_infer_text`` has no length cap. ``vlmeval_option_84012c9`` reads
that way (the generic rule with ``last_four=False, answer_is=False, cap=False``), for the scoring
variant ``vlmevalkit_84012c9``.

``mmt_l2_subtask_mean`` (aggregator, the scoring variant ``l2_subtask_mean``): the same metrics, with
each ``l2_category`` row the mean of its subtasks' (``category``) accuracies, as VLMEvalKit's
``report_acc_MMT`` reports a meta-task (in both copies), where the task's own breakdown averages
the questions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mmtasks.plugin import aggregator, parser
from mmtasks.scoring.aggregation import TaskResult, per_sample_mean
from mmtasks.scoring.vlmevalkit_matching import vlmevalkit_letter

if TYPE_CHECKING:
    from mmtasks.config.task_config import TaskConfig
    from mmtasks.core.sample import Sample
    from mmtasks.scoring.aggregation import TaskScoring

LETTERS = "ABCDEFGHI"


def options_of(doc: Mapping[str, Any]) -> dict[str, str]:
    """The record's options: the columns A..I that hold text (VLMEvalKit: those not NaN)."""
    return {k: str(doc[k]) for k in LETTERS if doc.get(k) is not None and str(doc[k]).strip()}


@parser("vlmeval_option")
def vlmeval_option(text: str, doc: Mapping[str, Any]) -> str | None:
    """The option letter by VLMEvalKit's exact matching (see the module docstring); None: unparsed."""
    return vlmevalkit_letter(text, options_of(doc))


@parser("vlmeval_option_84012c9")
def vlmeval_option_84012c9(text: str, doc: Mapping[str, Any]) -> str | None:
    """The option letter as MMT-Bench's pinned copy of VLMEvalKit reads it; None: unparsed."""
    return vlmevalkit_letter(text, options_of(doc), last_four=False, answer_is=False, cap=False)


def _emits(config: "TaskConfig") -> list[str]:
    return [m.name for m in config.metrics if m.function]


@aggregator("mmt_l2_subtask_mean", emits=_emits)
def mmt_l2_subtask_mean(task: "TaskScoring", samples: Sequence["Sample"], seed: int) -> TaskResult:
    """The generic means, each ``l2_category`` row the mean of its subtasks' means (``report_acc_MMT``)."""
    samples = list(samples)
    result = per_sample_mean(task, samples, seed)
    rows = result.breakdowns.get("l2_category", {})
    names = [m.name for m in task.config.metrics]
    for name in names:
        by_l2: dict[str, dict[str, list[float]]] = {}
        for s in samples:
            value = s.metrics.get(name)
            l2, sub = s.breakdown.get("l2_category"), s.breakdown.get("category")
            if value is not None and l2 is not None and sub is not None:
                by_l2.setdefault(l2, {}).setdefault(sub, []).append(float(value))
        for l2, row in rows.items():
            subs = [sum(v) / len(v) for v in by_l2.get(l2, {}).values() if v]
            row[name] = sum(subs) / len(subs) if subs else None
    return result
