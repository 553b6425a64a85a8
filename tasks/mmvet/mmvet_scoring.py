"""MM-Vet scoring: the judge's correctness score and the authors' totals per capability.

Loaded as a plugin file by the MM-Vet tasks (``plugins:``). The rules are those of the authors'
``mm-vet_evaluator.py`` (github.com/yuweihao/MM-Vet, commit ``acde843``):

- one GPT-4 call per question (``gpt-4-0613``, ``max_tokens=3``, temperature 0) with the few-shot
  grader prompt and the line "question | ground truth | prediction | "; the reply's first
  space-separated token must be a number from 0.0 to 1.0 (``mmvet_correctness``). A reply that
  is not is asked again (the authors append "Predict the correctness of the answer (digit): " and
  raise the temperature by 0.5 each time; here the same prompt is re-sent, ours), and after five
  tries the question scores 0.0;
- ``export_result``: per capability (rec, ocr, know, gen, spat, math) the sum of the scores of
  the questions that need it over their number, x100; ``total`` the mean over every question,
  x100; per capability integration (the exact set of capabilities) likewise. The paper averages
  five judge runs (``--num_run 5``; the script's default is 1): one run here (ours).

VLMEvalKit reads the whole reply as the number (``MMVet_auxeval``: ``float(output)``):
``mmvet_correctness_whole``. Its ``MMVet_acc`` counts a question of a single capability twice in that
capability's score (its capability-set key, "rec", is the capability's own key): the aggregator
``mmvet_capabilities_vlmevalkit``, for the scoring variant ``vlmevalkit`` (``total`` is the same).
lmms-eval reads the first token and aggregates as the authors do (one run); the tests check all three
against their code.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mmtasks.plugin import adapter, aggregator, verdict_parser
from mmtasks.scoring.aggregation import per_sample_mean

if TYPE_CHECKING:
    from mmtasks.config.task_config import TaskConfig
    from mmtasks.core.sample import Sample
    from mmtasks.scoring.aggregation import TaskResult, TaskScoring

#: the six capabilities, in the order of the paper's tables
CAPABILITIES = ("rec", "ocr", "know", "gen", "spat", "math")
#: the verdict field (0.0-1.0, reported x100 by ``judge.report_factor``)
SCORE = "score"
#: the headline: every question's score, a question without one counted as 0 (the authors' rule)
TOTAL = "total"


def capabilities_of(record: Mapping[str, Any]) -> list[str]:
    """The record's capabilities: a comma-separated string (``lmms-lab/MMVet``) or a list
    (``mm-vet.json``), in the canonical order."""
    value = record.get("capability")
    names = value.split(",") if isinstance(value, str) else list(value or [])
    found = {n.strip() for n in names if n.strip()}
    return [c for c in CAPABILITIES if c in found] + sorted(found - set(CAPABILITIES))


@adapter("mmvet_capabilities")
def mmvet_capabilities(record: dict[str, Any]) -> dict[str, Any]:
    """``capabilities``: the record's capabilities as a list in the canonical order."""
    return {**record, "capabilities": capabilities_of(record)}


def _score(token: str) -> dict[str, float] | None:
    try:
        value = float(token)
    except ValueError:
        return None
    if not math.isfinite(value) or value < 0.0 or value > 1.0:
        return None
    return {SCORE: value}


@verdict_parser("mmvet_correctness")
def mmvet_correctness(text: str, context: Mapping[str, Any]) -> dict[str, float] | None:
    """The authors' reading: ``content.split(" ")[0].strip()`` as a number from 0.0 to 1.0."""
    return _score(text.split(" ")[0].strip())


@verdict_parser("mmvet_correctness_whole")
def mmvet_correctness_whole(text: str, context: Mapping[str, Any]) -> dict[str, float] | None:
    """VLMEvalKit's reading (``MMVet_auxeval``): the whole reply as a number from 0 to 1."""
    return _score(text)


def _emits(config: "TaskConfig") -> list[str]:
    return [m.name for m in config.metrics]


def capability_totals(samples: Sequence["Sample"], capabilities: Mapping[str, Sequence[str]], *,
                      single_twice: bool = False) -> dict[str, float | None]:
    """``total`` and one mean per capability, x100 (the verdict is already x100): every question
    counts, one without a score as 0, as ``export_result`` sums them. ``capabilities``: doc id ->
    its capabilities. ``single_twice``: a question of one capability counts twice in it (VLMEvalKit's
    ``MMVet_acc``, whose capability-set key of such a question is the capability's own key)."""
    sums = {name: 0.0 for name in (TOTAL, *CAPABILITIES)}
    counts = {name: 0 for name in sums}
    for s in samples:
        value = s.metrics.get(SCORE)
        score = float(value) if value is not None else 0.0
        caps = list(capabilities.get(s.doc_id, ()))
        for name in (TOTAL, *caps, *(caps if single_twice and len(caps) == 1 else ())):
            if name in sums:
                sums[name] += score
                counts[name] += 1
    return {name: (sums[name] / counts[name] if counts[name] else None) for name in sums}


def _aggregate(task: "TaskScoring", samples: Sequence["Sample"], seed: int, *, single_twice: bool) -> "TaskResult":
    samples = list(samples)
    result = per_sample_mean(task, samples, seed)
    caps = {s.doc_id: str(s.breakdown.get("capabilities", "")).split("_") for s in samples}
    for name, value in capability_totals(samples, caps, single_twice=single_twice).items():
        if name in result.metrics or name in _emits(task.config):
            result.metrics[name] = value
            result.higher_is_better[name] = True
    result.metrics.pop(f"{TOTAL}_stderr", None)
    return result


@aggregator("mmvet_capabilities", emits=_emits)
def mmvet_aggregate(task: "TaskScoring", samples: Sequence["Sample"], seed: int) -> "TaskResult":
    """The generic means (``score`` over the judged questions, its stderr, breakdowns), then
    ``total`` and the six capability scores as ``export_result`` computes them."""
    return _aggregate(task, samples, seed, single_twice=False)


@aggregator("mmvet_capabilities_vlmevalkit", emits=_emits)
def mmvet_aggregate_vlmevalkit(task: "TaskScoring", samples: Sequence["Sample"], seed: int) -> "TaskResult":
    """As ``mmvet_capabilities``, a question of a single capability counted twice in it
    (VLMEvalKit's ``MMVet_acc`` adds its score under the capability and again under its
    capability set, whose key is the same string); ``total`` is unchanged."""
    return _aggregate(task, samples, seed, single_twice=True)
