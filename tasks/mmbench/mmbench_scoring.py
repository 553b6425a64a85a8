"""MMBench: the record, VLMEvalKit's exact matching of an option, and CircularEval.

Loaded as a plugin file by ``_base.yaml`` (``plugins:``). VLMEvalKit is MMBench's official evaluator
(github.com/open-compass/VLMEvalKit, commit ``e8e78f05``): ``vlmeval/dataset/image_mcq.py``
``ImageMCQDataset.evaluate_heuristic`` scores every MMBench dataset with ``mcq_circular_eval``
(``vlmeval/dataset/utils/multiple_choice.py``).

- ``mmbench_record`` (a record adapter): adds ``circular_group``, the record's ``index`` modulo
  1,000,000 (``mcq_circular_eval``: ``g_index = int(index % 1e6)``): the data hold each question
  once per circular shift of its options, the original at ``index`` < 1e6 and the k-th shift at
  ``index + k * 1e6``. The task clusters by it (``cluster: circular_group``). The Hub copy
  ``lmms-lab/MMBench`` writes ``index`` as a string in its ``en`` config: read as an integer.
- ``mmbench_option`` (a parser): ``can_infer`` of VLMEvalKit's ``vlmeval/utils/matching_util.py``
  at ``e8e78f05``, the generic :mod:`mmtasks.scoring.vlmevalkit_matching`: (1) a reply holding "Failed to obtain
  answer via API" reads nothing; one holding a refusal phrase reads "Z" (wrong); otherwise
  ``.()[],:;!*#{}`` become spaces and the reply is split into words: when exactly one option
  letter is a word, it is the answer if its first place is among the last four words; when no
  letter is a word but "Z" is, "Z"; else "answer is X" (any case, X one of A-D) names X when X is
  an option. (2) A reply at most twice as long as the option texts together names the option
  whose text (case-folded) it contains, when exactly one does.
- ``mmbench_option_lmms_eval`` (a parser, the scoring variant ``lmms_eval``): lmms-eval's
  ``MMBench_Evaluator.can_infer`` (github.com/EvolvingLMMs-Lab/lmms-eval ``75571cfe``,
  ``lmms_eval/tasks/mmbench/mmbench_evals.py``): the reply stripped and split on whitespace (no
  punctuation removed); the letters looked for are A-E whatever the options; one of them as a
  word is the answer, unless "A" is a word of a reply of more than three words; else the one
  letter written ``X.``, ``X,``, ``X:``, ``X)``, ``X).``, ``(X)``, ``(X).``, ``:X``, ``:X,``,
  ``:X.``, ``:X)`` or ``:X).`` (tried in that order, each when exactly one letter has it); else
  one option text contained in the reply (no length cap: the generic ``infer_text(cap=False)``).
- ``mmbench_circular`` (an aggregator): ``circular_acc``, the share of questions whose every
  circular copy is answered right (``eval_circular_group``: a copy read wrong, or unread when no
  LLM matcher is used, fails the question), over the questions whose original (``index`` < 1e6)
  is in the run, as ``mcq_circular_eval`` iterates ``data_main``; and per ``category`` and
  ``l2_category`` (the label of the original), as ``report_acc`` reports them. ``acc`` is the
  generic per-copy accuracy (VLMEvalKit's internal ``vanilla_all``). A question with a failed
  request among its copies is left out of ``circular_acc`` and counted 0 in ``circular_acc_all``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mmtasks.errors import DataError
from mmtasks.plugin import aggregator, parser
from mmtasks.registry import adapters
from mmtasks.scoring.aggregation import TaskResult, mean, mean_and_stderr, per_sample_mean
from mmtasks.scoring.parsers import OptionText
from mmtasks.scoring.vlmevalkit_matching import infer_text, vlmevalkit_letter

if TYPE_CHECKING:
    from mmtasks.config.task_config import TaskConfig
    from mmtasks.core.sample import Sample
    from mmtasks.scoring.aggregation import TaskScoring

LETTERS = "ABCD"
OFFSET = 1_000_000
CIRCULAR = "circular_acc"
PER_COPY = "acc"
#: a right answer's ``choice_acc`` (0-100)
FULL = 100.0


def _present(value: Any) -> bool:
    """An option cell that holds an option (VLMEvalKit: not NaN, which its pandas also reads the text "nan"
    as; the JSONL and parquet copies: not null, and lmms-lab/MMBench's "nan" strings are empty cells)."""
    return value is not None and not (isinstance(value, float) and value != value) and value != "nan"


def options_of(doc: Mapping[str, Any]) -> dict[str, str]:
    """The record's options: the columns A..D that hold one."""
    return {k: str(doc[k]) for k in LETTERS if _present(doc.get(k))}


@adapters.register("mmbench_record")
def mmbench_record(record: dict[str, Any]) -> dict[str, Any]:
    """``index`` as an integer and ``circular_group`` (``index`` modulo 1e6) added."""
    try:
        index = int(record["index"])
    except (KeyError, TypeError, ValueError):
        raise DataError(f"expected an integer index, got {record.get('index')!r}", field="index") from None
    return {**record, "index": index, "circular_group": str(index % OFFSET)}


@parser("mmbench_option")
def mmbench_option(text: str, doc: Mapping[str, Any]) -> str | None:
    """The option letter by VLMEvalKit's exact matching (see the module docstring); None: unparsed."""
    return vlmevalkit_letter(text, options_of(doc))


_LMMS_AFFIXES = (("", "."), ("", ","), ("", ":"), ("", ")"), ("", ")."), ("(", ")"), ("(", ")."), (":", ""),
                 (":", ","), (":", "."), (":", ")"), (":", ")."))


def infer_option_lmms_eval(answer: str) -> str | None:
    """lmms-eval's ``can_infer_option`` (letters A-E, words split on whitespace)."""
    if "Failed to obtain answer via API" in answer:
        return None
    letters = "ABCDE"
    words = answer.split()
    if sum(c in words for c in letters) == 1 and not ("A" in words and len(words) > 3):
        return next(c for c in letters if c in words)
    for prefix, suffix in _LMMS_AFFIXES:
        marked = [c for c in letters if prefix + c + suffix in words]
        if len(marked) == 1:
            return marked[0]
    return None


@parser("mmbench_option_lmms_eval")
def mmbench_option_lmms_eval(text: str, doc: Mapping[str, Any]) -> str | None:
    """The option letter as lmms-eval's MMBench evaluator reads it before asking GPT; None: unparsed."""
    text = text.strip()
    letter = infer_option_lmms_eval(text)
    if letter is not None:
        return letter
    found = infer_text(text, options_of(doc), cap=False)
    return OptionText(found) if found is not None else None


def _emits(config: "TaskConfig") -> list[str]:
    return [CIRCULAR, PER_COPY]


def _group_hits(samples: Sequence["Sample"]) -> dict[str, tuple[float | None, dict[str, str]]]:
    """circular group -> (100 every copy right, 0 one wrong, None one unscored; the original's labels),
    for the groups whose original is among the samples."""
    copies: dict[str, list[Sample]] = {}
    originals: dict[str, Sample] = {}
    for s in samples:
        group = s.cluster if s.cluster is not None else str(int(s.doc_id) % OFFSET)
        copies.setdefault(group, []).append(s)
        if s.doc_id == group:
            originals[group] = s
    out: dict[str, tuple[float | None, dict[str, str]]] = {}
    for group, original in originals.items():
        values = [s.metrics.get(PER_COPY) for s in copies[group]]
        if any(v is not None and v < FULL for v in values):
            hit: float | None = 0.0
        elif any(v is None for v in values):
            hit = None
        else:
            hit = FULL
        out[group] = (hit, dict(original.breakdown))
    return out


@aggregator("mmbench_circular", emits=_emits)
def mmbench_circular(task: "TaskScoring", samples: Sequence["Sample"], seed: int) -> TaskResult:
    """CircularEval: ``circular_acc`` over the questions, per-copy ``acc``, breakdowns of both."""
    samples = list(samples)
    result = per_sample_mean(task, samples, seed)
    groups = _group_hits(samples)
    scored = [hit for hit, _ in groups.values() if hit is not None]
    avg, err = mean_and_stderr(scored, seed)
    result.metrics[CIRCULAR] = avg
    result.metrics[f"{CIRCULAR}_stderr"] = err
    result.metrics[f"{CIRCULAR}_all"] = (sum(scored) / len(groups)) if groups else None
    result.higher_is_better[CIRCULAR] = True
    result.counts = {**result.counts, "questions": len(groups)}
    for name, rows in result.breakdowns.items():
        by_label: dict[str, list[float]] = {}
        for hit, labels in groups.values():
            if hit is not None and name in labels:
                by_label.setdefault(labels[name], []).append(hit)
        for label, row in rows.items():
            row[CIRCULAR] = mean(by_label.get(label, []))
    return result
