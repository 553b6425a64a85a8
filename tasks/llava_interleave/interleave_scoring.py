"""LLaVA-Interleave-Bench scoring, as lmms-eval scores it.

Loaded as a plugin file by the three task files (``plugins:``). Reimplemented from
github.com/EvolvingLMMs-Lab/lmms-eval ``lmms_eval/tasks/llava_interleave_bench/utils.py`` (commit
``75571cfe``) and the ``rouge`` package 1.0.1 it imports (PyPI ``rouge``, github.com/pltrdy/rouge):

- ``interleave_conversation`` (adapter): a multi-view record's prompt is its ``conversations``
  as ``doc_to_text_conversation`` makes it: the text itself, or ``json.dumps`` of a list;
  stored as ``prompt_text``. Other records get ``prompt_text`` = ``question``.
- ``interleave_answer`` (parser): multi-choice replies read by ``mcq_acc``'s ``process``: an
  "A. text" reply (A-E, any case) is its letter; otherwise newlines and tabs become spaces, the
  VQA punctuation rule removes or spaces out ``; / [ ] " { } ( ) = + \\ _ - > < @ ` , ? !``, up to
  32 periods not beside a digit are removed (``re.sub``'s third argument is ``re.UNICODE``, read as
  a count), quotes and brackets are stripped from the ends, the text is lower-cased, and its first
  standalone letter A-E (any case) is the answer, else the processed text. Open-ended replies are
  kept as they are. Never unparsed.
- ``interleave_score`` (metric): multi-choice: 100 when the processed reply equals the processed
  ``answer``; open-ended: 100 x ROUGE-L F of the reply (its first 512 characters) against the
  answer by ``rouge`` 1.0.1 (``Rouge().get_scores(pred, answer)[0]["rouge-l"]["f"]``), 0 for an
  empty reply. That ROUGE-L splits each text at every "." into sentences (each with its
  whitespace runs joined by single spaces; empty pieces dropped), counts words as a set (the
  package's default ``exclusive=True``): m and n are the numbers of distinct words of the answer
  and the reply, and the overlap is the number of distinct words in the union, over the answer's
  sentences, of the longest common subsequence of that sentence with each reply sentence (the
  subsequence rebuilt from the end, preferring to drop the answer's word on ties); F = 2PR/(P+R+1e-8).
  A reply that splits into no sentence ("...") scores 0 (ours: the package raises).
- ``interleave_overall`` (aggregator): ``overall_score``: the sub-tasks grouped into lmms-eval's 18
  categories; each category present scores the mean of its questions; ``acc`` is the mean of the
  categories (a sub-task of no category is left out, as there). ``acc_micro``: every question alike.

The authors' own script (the scoring variant ``authors`` of the tasks): github.com/LLaVA-VL/LLaVA-NeXT
``llava/eval/evaluate_interleave.py`` (commit ``df17966``), reimplemented here:

- ``interleave_reply`` (parser): the reply as it is (the script reads the raw reply).
- ``interleave_authors_score`` (metric): reply and gold answer both read by its ``Eval.process``
  (newlines and tabs to spaces, stripped, the same VQA punctuation rule, quotes and brackets
  stripped from the ends, lower-cased: no letter extraction). Multi-choice
  (``evaluate_multichoice``): a reply holding ":" becomes its ":"-separated part that is one letter
  a-h, if any; 100 when equal to the gold, else 0. Open-ended (``evaluate_rouge``): a gold answer
  empty once processed is left out (None); an empty reply scores 0; else 100 x ROUGE-L F (the
  ``rouge`` package's, as above) of the reply's first 512 characters: "The car is gone." against
  "the car is gone" scores 100 (75 without the processing).
- ``interleave_authors_overall`` (aggregator): each sub-task's ``dataset`` mean, each category the
  mean of its sub-tasks' means (the script's category blocks), ``acc`` the mean of the categories
  present (ours: the script prints the categories and no overall; lmms-eval's overall is this mean
  over categories). The script names 9 categories (the in-domain ones, the same sub-tasks as
  lmms-eval's); a sub-task of another of lmms-eval's categories is that category's only one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mmtasks.plugin import adapter, metric, parser
from mmtasks.scoring.aggregation import TaskResult, aggregator, mean_of_means, per_sample_mean, values_by_label

if TYPE_CHECKING:
    from mmtasks.config.task_config import TaskConfig
    from mmtasks.core.sample import Sample
    from mmtasks.scoring.aggregation import TaskScoring

CATEGORIES = {
    "Spot-the-Diff": ["Spot-the-Diff", "Birds-to-Words", "CLEVR-Change"],
    "Image-Edit": ["IEdit", "HQ-Edit", "MagicBrush"],
    "Visual-Story-Telling": ["AESOP", "FlintstonesSV", "PororoSV", "VIST"],
    "Visual-Cloze": ["COMICS_Dialogue", "RecipeQA_VisualCloze"],
    "Text-Rich-VQA": ["WebQA", "TQA", "OCR-VQA", "DocVQA"],
    "Multi-Image-VQA": ["MIT-States_StateCoherence", "MIT-States_PropertyCoherence", "VISION", "RecipeQA_ImageCoherence"],
    "Puzzle": ["RAVEN"], "NLVR2": ["NLVR2_Mantis"], "QBench": ["QBench"], "ScanQA": ["ScanQA"], "ALFRED": ["ALFRED"],
    "nuscenes": ["nuscenes"], "ScanNet_chat": ["ScanNet_chat"], "ScanNet_task": ["ScanNet_task"], "BLINK": ["BLINK"],
    "MathVerse": ["MathVerse"], "SciVerse": ["SciVerse"], "Mantis": ["Mantis"],
}
CATEGORY_OF = {sub: cat for cat, subs in CATEGORIES.items() for sub in subs}
MULTI_CHOICE, OPEN_ENDED = "multi-choice", "open-ended"
METRIC = "acc"
CATEGORY_BREAKDOWN = "category"

_PERIOD = re.compile(r"(?!<=\d)(\.)(?!\d)")
_COMMA_NUMBER = re.compile(r"(\d)(\,)(\d)")
_PUNCT = [";", r"/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-", ">", "<", "@", "`", ",", "?", "!"]
_OPTION = re.compile(r"^([A-E])\.\s*(.+)$", re.IGNORECASE)
_LETTER = re.compile(r"\b([A-E])\b", re.IGNORECASE)


@adapter("interleave_conversation")
def interleave_conversation(record: dict[str, Any]) -> dict[str, Any]:
    """``prompt_text``: the question, or for a multi-view record its conversations (see above)."""
    conversations = record.get("conversations")
    if conversations is not None:
        text = conversations if isinstance(conversations, str) else json.dumps(conversations)
    else:
        text = record.get("question")
    return {**record, "prompt_text": text}


def _punctuation(text: str) -> str:
    out = text
    for p in _PUNCT:
        if (p + " " in text or " " + p in text) or _COMMA_NUMBER.search(text) is not None:
            out = out.replace(p, "")
        else:
            out = out.replace(p, " ")
    return _PERIOD.sub("", out, 32)


def process(answer: str) -> str:
    """``mcq_acc``'s ``process`` of a reply or a gold answer."""
    match = _OPTION.match(answer.strip())
    if match:
        return match.group(1).upper()
    text = _punctuation(answer.replace("\n", " ").replace("\t", " ").strip())
    text = text.strip("'").strip('"').strip(")").strip("(").strip().lower()
    letter = _LETTER.search(text)
    return letter.group(1).upper() if letter else text


@parser("interleave_answer", target="raw")  # the gold as written: interleave_score reads it as lmms-eval does
def interleave_answer(text: str, doc: Mapping[str, Any]) -> str:
    return process(text) if doc.get("question_type") == MULTI_CHOICE else text


def _sentences(text: str) -> list[str]:
    return [" ".join(piece.split()) for piece in text.split(".") if len(piece) > 0]


def _words(sentences: Sequence[str]) -> list[str]:
    return [w for s in sentences for w in s.split(" ")]


def _lcs_words(x: list[str], y: list[str]) -> set[str]:
    """The words of the longest common subsequence of ``x`` and ``y``, rebuilt from the end."""
    table = [[0] * (len(y) + 1) for _ in range(len(x) + 1)]
    for i in range(1, len(x) + 1):
        for j in range(1, len(y) + 1):
            table[i][j] = table[i - 1][j - 1] + 1 if x[i - 1] == y[j - 1] else max(table[i - 1][j], table[i][j - 1])
    words, i, j = set(), len(x), len(y)
    while i > 0 and j > 0:
        if x[i - 1] == y[j - 1]:
            words.add(x[i - 1])
            i, j = i - 1, j - 1
        elif table[i - 1][j] > table[i][j - 1]:
            i -= 1
        else:
            j -= 1
    return words


def rouge_l_f(hypothesis: str, reference: str) -> float:
    """ROUGE-L F of ``rouge`` 1.0.1 (summary level, word sets; see the module docstring)."""
    hyp, ref = _sentences(hypothesis), _sentences(reference)
    if not hyp or not ref:
        return 0.0
    m, n = len(set(_words(ref))), len(set(_words(hyp)))
    union: set[str] = set()
    for ref_sentence in ref:
        for hyp_sentence in hyp:
            union |= _lcs_words(ref_sentence.split(" "), hyp_sentence.split(" "))
    r, p = len(union) / m, len(union) / n
    return 2.0 * ((p * r) / (p + r + 1e-8))


@metric("interleave_score")
def interleave_score(parsed: str | None, target: Any, doc: Mapping[str, Any]) -> float:
    """Multi-choice: 100 or 0; open-ended: 100 x ROUGE-L F (see the module docstring)."""
    prediction = "" if parsed is None else str(parsed)
    if doc.get("question_type") == MULTI_CHOICE:
        return 100.0 if prediction == process(str(target)) else 0.0
    if prediction == "":
        return 0.0
    return 100.0 * rouge_l_f(prediction[:512], str(target))


def _emits(config: "TaskConfig") -> list[str]:
    return [METRIC]


def overall(by_category: Mapping[str, Sequence[float]]) -> float | None:
    """The mean of the categories' mean scores (categories without questions left out, and
    the questions of a sub-task of no category, label "")."""
    return mean_of_means({c: v for c, v in by_category.items() if c})


@aggregator("interleave_overall", emits=_emits)
def interleave_overall(task: "TaskScoring", samples: Sequence["Sample"], seed: int) -> TaskResult:
    """The generic means and breakdowns, with ``acc`` lmms-eval's ``overall_score`` (x100) and
    the per-question mean as ``acc_micro``."""
    samples = list(samples)
    result = per_sample_mean(task, samples, seed)
    result.metrics[f"{METRIC}_micro"] = result.metrics.get(METRIC)
    result.metrics[METRIC] = overall(values_by_label(samples, METRIC, CATEGORY_BREAKDOWN))
    result.metrics[f"{METRIC}_stderr"] = None  # ours: no bootstrap of the category mean
    result.metrics[f"{METRIC}_all"] = None
    return result


# -- the authors' own script (the ``authors`` scoring variant) ---------------------------------

def authors_process(answer: str) -> str:
    """``Eval.process`` of ``evaluate_interleave.py``: no letter extraction."""
    text = _punctuation(answer.replace("\n", " ").replace("\t", " ").strip())
    return text.strip("'").strip('"').strip(")").strip("(").strip().lower()


@parser("interleave_reply", target="raw")  # both read by the metric, as the script reads them
def interleave_reply(text: str, doc: Mapping[str, Any]) -> str:
    return text


@metric("interleave_authors_score")
def interleave_authors_score(parsed: str | None, target: Any, doc: Mapping[str, Any]) -> float | None:
    """The authors' score of one reply (see the module docstring); None: a gold answer the script skips."""
    gold = authors_process(str(target))
    prediction = authors_process("" if parsed is None else str(parsed))
    if doc.get("question_type") == MULTI_CHOICE:
        if ":" in prediction:
            for part in (a.strip() for a in prediction.split(":")):
                if len(part) == 1 and part[-1] in "abcdefgh":
                    prediction = part
        return 100.0 if prediction == gold else 0.0
    if gold == "":
        return None
    if prediction == "":
        return 0.0
    return 100.0 * rouge_l_f(prediction[:512], gold)


def authors_overall(by_sub_task: Mapping[str, Sequence[float]]) -> float | None:
    """The mean over categories of the mean of their sub-tasks' means."""
    by_category: dict[str, list[float]] = {}
    for sub_task, values in by_sub_task.items():
        category = CATEGORY_OF.get(sub_task)
        if category is not None and values:
            by_category.setdefault(category, []).append(sum(values) / len(values))
    return mean_of_means(by_category)


@aggregator("interleave_authors_overall", emits=_emits)
def interleave_authors_overall(task: "TaskScoring", samples: Sequence["Sample"], seed: int) -> TaskResult:
    """The generic means and breakdowns, with ``acc`` the authors' script's category means (of
    sub-task means) averaged, and the per-question mean as ``acc_micro``."""
    samples = list(samples)
    result = per_sample_mean(task, samples, seed)
    result.metrics[f"{METRIC}_micro"] = result.metrics.get(METRIC)
    result.metrics[METRIC] = authors_overall(values_by_label(samples, METRIC, "sub_task"))
    result.metrics[f"{METRIC}_stderr"] = None
    result.metrics[f"{METRIC}_all"] = None
    return result
