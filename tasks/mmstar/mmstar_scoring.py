"""MMStar: the options of the Hub record, the authors' answer rule and the peers' readings.

Loaded as a plugin file by ``mmstar.yaml`` (``plugins:``).

- ``mmstar_record`` (a record adapter): the Hub dataset ``Lin-Chen/MMStar`` writes each question's
  options inside ``question``: "...?\\nOptions: A: x, B: y, C: z, D: w" (1,154 of the 1,500 in the
  authors' released replies) or, for the questions taken from MathVista, "\\nChoices:\\n(A) x\\n(B) y"
  one a line (338; 7 more write the "(A) x" lines without "Choices:"). The adapter adds the
  options as ``A``..``D`` fields (VLMEvalKit's TSV columns), splitting at ", B: ", ", C: " ... in
  letter order only (an option's own commas stay); ``question`` is left as it is. A question in
  neither form gets no option fields.
- ``mmstar_authors`` (a parser, the headline): ``MMStar_eval`` of the authors' evaluation code
  (github.com/MMStar-Benchmark/MMStar ``eval/vlmeval/evaluate/mmstar.py`` at ``88f243a``),
  reimplemented from its description: the reply lower-cased, stripped, newlines as spaces; its first
  character is the answer, or the second after "(", or the eighth after "option ", or the
  fifteenth after "the answer is ". A reply none of them reads is wrong. Read as the upper-cased
  character, compared with the gold letter.
- ``mmstar_vlmevalkit`` (a parser, the scoring variant ``vlmevalkit``): ``can_infer`` of VLMEvalKit
  (``vlmeval/utils/matching_util.py`` at ``e8e78f05``), which scores ``MMStar`` with
  ``mcq_vanilla_eval`` (exact matching: a reply it cannot read is wrong); the generic
  :mod:`mmtasks.scoring.vlmevalkit_matching`.
- ``mmstar_lmms_eval`` (a parser, the scoring variant ``lmms_eval``): lmms-eval's
  ``extract_mcq_answer`` (``lmms_eval/tasks/_task_utils/mcq_extract.py`` at ``75571cfe``) with the
  choices A-D: candidates "(X)", "X.", "X:", "X)", "X " (each at its last place), an answer phrase
  followed by a letter, the reply starting or ending with a standalone letter, and, only when none
  of these, any occurrence of a letter; the highest-ranked format wins, then the later place (the
  generic :mod:`mmtasks.scoring.lmms_eval_mcq`).
- ``mmstar_l2_mean`` (an aggregator, the variant ``lmms_eval``): lmms-eval's
  ``mmstar_aggregate_results``: ``acc`` the mean of the 18 ``l2_category`` means, each ``category``
  row the mean of its own ``l2_category`` means; the question mean kept as ``acc_micro``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mmtasks.plugin import aggregator, parser
from mmtasks.registry import adapters
from mmtasks.scoring.aggregation import TaskResult, mean, mean_of_means, per_sample_mean, values_by_label
from mmtasks.scoring.bootstrap import bootstrap_mean_of_means_stderr
from mmtasks.scoring.lmms_eval_mcq import lmms_eval_mcq_letter
from mmtasks.scoring.vlmevalkit_matching import vlmevalkit_letter

if TYPE_CHECKING:
    from mmtasks.config.task_config import TaskConfig
    from mmtasks.core.sample import Sample
    from mmtasks.scoring.aggregation import TaskScoring

LETTERS = "ABCD"
_OPTIONS = "\nOptions:"
_CHOICES = "\nChoices:"


def split_options(question: str) -> dict[str, str]:
    """The options written at the end of ``question``, by letter: "\nOptions: A: x, B: y, ..." (most
    questions), or "\nChoices:\n(A) x\n(B) y" one a line (those taken from MathVista)."""
    at = question.rfind(_OPTIONS)
    if at < 0:
        return _choice_lines(question)
    tail = question[at + len(_OPTIONS):]
    first = re.match(r"\s*A:\s?", tail)
    if first is None:
        return {}
    options: dict[str, str] = {}
    start, letter = first.end(), "A"
    while True:
        following = chr(ord(letter) + 1)
        nxt = re.compile(rf",\s*{following}:\s?").search(tail, start) if following in LETTERS else None
        options[letter] = tail[start:nxt.start() if nxt else len(tail)].strip()
        if nxt is None:
            return options
        start, letter = nxt.end(), following


def _choice_lines(question: str) -> dict[str, str]:
    """"(A) x" lines after the last "\nChoices:", or, without that header, from the last "\n(A) " on."""
    at = question.rfind(_CHOICES)
    if at >= 0:
        tail = question[at + len(_CHOICES):]
    elif "\n(A) " in question:
        tail = question[question.rfind("\n(A) "):]
    else:
        return {}
    options: dict[str, str] = {}
    for line in tail.split("\n"):
        match = re.match(r"\(([A-D])\)\s?(.*)$", line)
        expected = LETTERS[len(options)] if len(options) < len(LETTERS) else None
        if match and match.group(1) == expected:
            options[match.group(1)] = match.group(2).strip()
        elif options and line.strip():  # a continuation of the option before
            last = LETTERS[len(options) - 1]
            options[last] = f"{options[last]}\n{line.strip()}"
    return options


@adapters.register("mmstar_record")
def mmstar_record(record: dict[str, Any]) -> dict[str, Any]:
    """The record with its options as ``A``..``D`` (from ``question``), unless it has them already."""
    if any(record.get(k) is not None for k in LETTERS):
        return record
    return {**record, **split_options(str(record.get("question", "")))}


def options_of(doc: Mapping[str, Any]) -> dict[str, str]:
    return {k: str(doc[k]) for k in LETTERS if doc.get(k) is not None}


@parser("mmstar_authors")
def mmstar_authors(text: str, doc: Mapping[str, Any]) -> str | None:
    """The letter the authors' ``MMStar_eval`` compares with the answer (see the module docstring)."""
    predict = text.lower().strip().replace("\n", " ")
    if not predict:
        return None
    if predict[0] == "(":
        char = predict[1:2]
    elif predict.startswith("option "):
        char = predict[7:8]
    elif predict.startswith("the answer is "):
        char = predict[14:15]
    else:
        char = predict[0]
    return char.upper() if char and char.upper() in LETTERS else None


@parser("mmstar_vlmevalkit")
def mmstar_vlmevalkit(text: str, doc: Mapping[str, Any]) -> str | None:
    """VLMEvalKit's ``can_infer`` among the record's options; None: unparsed (wrong)."""
    return vlmevalkit_letter(text, options_of(doc))


@parser("mmstar_lmms_eval")
def mmstar_lmms_eval(text: str, doc: Mapping[str, Any]) -> str | None:
    """The letter lmms-eval's ``extract_mcq_answer`` reads (choices A-D); None: unparsed (wrong)."""
    return lmms_eval_mcq_letter(text, LETTERS)


def _emits(config: "TaskConfig") -> list[str]:
    return [m.name for m in config.metrics if m.function]


@aggregator("mmstar_l2_mean", emits=_emits)
def mmstar_l2_mean(task: "TaskScoring", samples: Sequence["Sample"], seed: int) -> TaskResult:
    """lmms-eval's figures: the mean of the ``l2_category`` means, and each ``category`` row the mean
    of its own; ``_all`` the same with unscored questions as 0, ``_stderr`` a bootstrap resampling the
    questions within each axis (ours), ``_micro`` the question mean."""
    samples = list(samples)
    result = per_sample_mean(task, samples, seed)
    parent = {s.breakdown.get("l2_category", ""): s.breakdown.get("category", "") for s in samples}
    for metric in (m.name for m in task.config.metrics):
        by_l2 = values_by_label(samples, metric, "l2_category")
        result.metrics[f"{metric}_micro"] = result.metrics.get(metric)
        result.metrics[metric] = mean_of_means(by_l2)
        result.metrics[f"{metric}_all"] = mean_of_means(values_by_label(samples, metric, "l2_category", unscored=0.0))
        result.metrics[f"{metric}_stderr"] = bootstrap_mean_of_means_stderr(by_l2, seed)
        for label, row in result.breakdowns.get("category", {}).items():
            row[metric] = mean([sum(v) / len(v) for l2, v in by_l2.items() if parent.get(l2) == label and v])
    return result
