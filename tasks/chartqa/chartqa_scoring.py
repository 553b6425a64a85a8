"""ChartQA's split scores: the relaxed accuracy of the human-written half (``type`` ``human_test``)
and of the machine-generated half (``augmented_test``), each None on the other half's questions
(so each is the mean over its own half), as lmms-eval's ``relaxed_human_split`` and
``relaxed_augmented_split`` are (``lmms_eval/tasks/chartqa/utils.py``). The rule itself is the
generic ``relaxed_accuracy`` (``mmtasks/scoring/vqa_metrics.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mmtasks.plugin import metric
from mmtasks.scoring.metrics import takes_args, takes_references
from mmtasks.scoring.vqa_metrics import RelaxedArgs, relaxed_accuracy


def _on_half(kind: str, parsed: Any, target: Any, doc: Mapping[str, Any], args: RelaxedArgs | None) -> float | None:
    return relaxed_accuracy(parsed, target, doc, args) if doc.get("type") == kind else None


@metric("chartqa_relaxed_human")
@takes_references("several")
@takes_args(RelaxedArgs)
def relaxed_human(parsed: Any, target: Any, doc: Mapping[str, Any], args: RelaxedArgs | None = None) -> float | None:
    """Relaxed accuracy on a human-written question; None on an augmented one."""
    return _on_half("human_test", parsed, target, doc, args)


@metric("chartqa_relaxed_augmented")
@takes_references("several")
@takes_args(RelaxedArgs)
def relaxed_augmented(parsed: Any, target: Any, doc: Mapping[str, Any], args: RelaxedArgs | None = None) -> float | None:
    """Relaxed accuracy on a machine-generated question; None on a human-written one."""
    return _on_half("augmented_test", parsed, target, doc, args)
