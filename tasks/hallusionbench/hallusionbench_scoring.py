"""HallusionBench: the authors' GPT-4 verdict, their correctness rule, and aAcc, fAcc, qAcc.

Loaded as a plugin file by ``hallusionbench.yaml`` (``plugins:``). The authors' rules are those of
``utils.py`` (github.com/tianyi-lab/HallusionBench, commit 744007c, BSD-3-Clause):

- ``hallusionbench_key`` (a record adapter, ours): ``question_key``, the authors' per-question name
  ``<category>_<subcategory>_<set_id>_<figure_id>_<question_id>`` (``get_eval_all`` asserts it is
  unique), the document id.
- ``hallusionbench_verdict`` (a verdict parser, official): ``evaluate_by_chatgpt``: "incorrect" in the
  lower-cased judge reply is 0, else "correct" in it is 1, else 2 (unclear): every reply is a verdict.
  ``correct`` is ``assign_correctness``: 1 for verdict 1; for a VS question without its figure
  (``figure_id`` 0) verdict 2 counts as correct too.
- ``hallusionbench_scores`` (an aggregator, official): ``aAcc`` = the share of questions correct
  (``get_eval_all``), ``fAcc`` = the share of figures (``<category>_<subcategory>_<set_id>_<figure_id>``,
  VS figure 0 left out) whose questions are all correct (``get_eval_fig``), ``qAcc`` = the share of
  questions (``<category>_<subcategory>_<set_id>_<question_id>``) correct for every figure they are asked
  about (``get_eval_pair_all``). A question without a verdict (a failed request or judge) is left
  out of all three (ours: the authors' loop retries until the judge answers).
- ``hallusionbench_scores_image_split`` (an aggregator, the ``lmms_eval`` and ``vlmevalkit``
  variants): the same (and ``correct``, the coverage) over the questions of the ``image`` split only
  (``visual_input`` 1 or 2): lmms-eval's task reads that split alone, and VLMEvalKit's
  ``HallusionBench.tsv`` holds those 951 questions only. VLMEvalKit's ``Hallusion_rating``
  (``vlmeval/dataset/utils/yorn.py``, commit e8e78f05) groups figures by
  ``<l2-category>_<set_id>_<figure_id>`` and questions by ``<l2-category>_<set_id>_<question_id>``,
  its l2-category being ``<category>_<subcategory>`` (``VD_chart``): the authors' groups.
- ``hallusionbench_yes_no_vlmevalkit`` (a parser, the ``vlmevalkit`` variant): VLMEvalKit's
  ``YOrN_Extraction`` (the generic :mod:`mmtasks.scoring.vlmevalkit_yorn`): "Yes", "No", or None
  (its Unknown); ``hallusionbench_correct_vlmevalkit`` (a metric): 100 when that reading equals the
  answer (``score = answer == extracted``), else 0, in place of the judge's ``correct``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mmtasks.errors import DataError
from mmtasks.plugin import adapter, aggregator, metric, parser, verdict_parser
from mmtasks.scoring.aggregation import per_sample_mean
from mmtasks.scoring.vlmevalkit_yorn import vlmevalkit_yes_no

if TYPE_CHECKING:
    from mmtasks.config.task_config import TaskConfig
    from mmtasks.core.sample import Sample
    from mmtasks.scoring.aggregation import TaskResult, TaskScoring

CORRECT = "correct"
#: breakdowns the aggregator reads (the task YAML defines them); the two long ones are dropped from results
FIGURE, PAIR, VISUAL = "figure", "question_pair", "visual_input"
METRICS = ("aAcc", "fAcc", "qAcc")


def _s(record: Mapping[str, Any], field: str) -> str:
    value = record.get(field)
    if value is None:
        raise DataError(f"missing {field}", field=field)
    return str(value)


@adapter("hallusionbench_key")
def hallusionbench_key(record: dict[str, Any]) -> dict[str, Any]:
    key = "_".join(_s(record, f) for f in ("category", "subcategory", "set_id", "figure_id", "question_id"))
    return {**record, "question_key": key}


def read_verdict(text: str) -> int:
    """evaluate_by_chatgpt: 0 ("incorrect"), 1 ("correct"), 2 (neither)."""
    lowered = text.lower()
    if "incorrect" in lowered:
        return 0
    if "correct" in lowered:
        return 1
    return 2


def is_correct(verdict: int, category: str, figure_id: str) -> int:
    """assign_correctness: verdict 1; or 1 or 2 for a VS question without its figure."""
    if category == "VS" and int(figure_id) == 0:
        return 1 if verdict in (1, 2) else 0
    return 1 if verdict == 1 else 0


@verdict_parser("hallusionbench_verdict")
def hallusionbench_verdict(text: str, context: Mapping[str, Any]) -> dict[str, float]:
    verdict = read_verdict(text)
    doc = context.get("doc")
    if not isinstance(doc, Mapping):  # the judge prompt's variables always carry it; a bare call may not
        raise DataError("hallusionbench_verdict needs the document (its category and figure_id) in its context")
    return {"verdict": float(verdict), CORRECT: float(is_correct(verdict, _s(doc, "category"), _s(doc, "figure_id")))}


def figures(rows: Iterable[tuple[str, str, str, bool]]) -> dict[str, float | None]:
    """``rows``: (question key's figure name, question pair name, category + figure_id marker, correct)
    -> aAcc, fAcc, qAcc (0-100; None without rows)."""
    rows = list(rows)
    if not rows:
        return dict.fromkeys(METRICS)
    by_figure: dict[str, list[bool]] = {}
    by_pair: dict[str, list[bool]] = {}
    for figure, pair, no_figure, ok in rows:
        if not no_figure:
            by_figure.setdefault(figure, []).append(ok)
        by_pair.setdefault(pair, []).append(ok)
    return {"aAcc": 100.0 * sum(ok for *_, ok in rows) / len(rows),
            "fAcc": 100.0 * sum(all(v) for v in by_figure.values()) / len(by_figure) if by_figure else None,
            "qAcc": 100.0 * sum(all(v) for v in by_pair.values()) / len(by_pair)}


def _rows(samples: Iterable["Sample"]) -> list[tuple[str, str, str, bool]]:
    rows = []
    for s in samples:
        value = s.metrics.get(CORRECT)
        if value is None:
            continue
        figure = s.breakdown.get(FIGURE, s.doc_id)
        # get_eval_fig leaves out VS figure 0 (the question asked without its figure)
        no_figure = figure.startswith("VS_") and figure.endswith("_0")
        rows.append((figure, s.breakdown.get(PAIR, s.doc_id), "1" if no_figure else "", value > 0))
    return rows


def _emits(config: "TaskConfig") -> list[str]:
    return [*METRICS, CORRECT]


def _result(task: "TaskScoring", samples: Sequence["Sample"], seed: int, *, image_split_only: bool) -> "TaskResult":
    samples = list(samples)
    if image_split_only:  # lmms-eval's documents: every figure below is over them alone
        samples = [s for s in samples if s.breakdown.get(VISUAL, "") != "0"]
    result = per_sample_mean(task, samples, seed)
    for name, value in figures(_rows(samples)).items():
        result.metrics[name] = value
        result.higher_is_better[name] = True
    for name in (FIGURE, PAIR):  # one row per figure or question: not a table to show
        result.breakdowns.pop(name, None)
    return result


@aggregator("hallusionbench_scores", emits=_emits)
def hallusionbench_scores(task: "TaskScoring", samples: Sequence["Sample"], seed: int) -> "TaskResult":
    return _result(task, samples, seed, image_split_only=False)


@aggregator("hallusionbench_scores_image_split", emits=_emits)
def hallusionbench_scores_image_split(task: "TaskScoring", samples: Sequence["Sample"], seed: int) -> "TaskResult":
    return _result(task, samples, seed, image_split_only=True)


def read_yes_no_vlmevalkit(reply: str) -> str | None:
    """YOrN_Extraction: "Yes", "No", or None (its "Unknown")."""
    found = vlmevalkit_yes_no(reply)
    return None if found is None else found.capitalize()


@parser("hallusionbench_yes_no_vlmevalkit")
def hallusionbench_yes_no_vlmevalkit(text: str) -> str | None:
    return read_yes_no_vlmevalkit(text)


@metric("hallusionbench_correct_vlmevalkit")
def hallusionbench_correct_vlmevalkit(parsed: Any, target: Any, doc: Mapping[str, Any]) -> float:
    """ImageYORNDataset.evaluate: ``answer == extracted`` (the data's "Yes"/"No"; Unknown is wrong), 0 or 100."""
    return 100.0 if parsed is not None and str(parsed) == str(target) else 0.0
