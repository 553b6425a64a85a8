"""CharXiv (val): the authors' questions, their GPT-4o grader and their statistics.

Loaded as a plugin file by the CharXiv tasks (``plugins:`` in ``_base.yaml``); the names it registers
are visible to the tasks that list it. Everything follows github.com/princeton-nlp/CharXiv ``src/``
(commit 7ebe88f); the prompt strings are ``src/constants.py``'s, verbatim, in ``charxiv_prompts.json``.

- ``descriptive_utils.py``: each chart has four descriptive questions, each a template of
  ``DESCRIPTIVE_RESP_INST`` (ids 1-19) after a prefix saying which subplot to look at
  (``descriptive_query_helper``). The grader prompt is ``DESCRIPTIVE_GRADING_PREFIX`` (the number of
  triplets, the overarching question of ``DESCRIPTIVE_GRADING_QMAP``, the JSON keys), the template's
  rubric (``get_rubric``) and the triplets ``T1: Response 1: ... Ground Truth 1: ...``; the grader
  answers JSON with ``extract_answer_T<i>`` and ``score_T<i>`` (0 or 1).
- ``reasoning_utils.py``: one reasoning question per chart, ``REASONING_RESP_INST`` of its answer type
  (1-4; for 4, the number of decimal places of the answer, ``get_number_instruction``); the grader
  prompt is ``REASONING_GRADING_PREFIX`` and ``REASONING_GRADING_INST`` of the answer type with the
  question, the ground truth and the response put in; the grader answers JSON with
  ``extracted_answer`` and ``score``.
- ``get_stats.py`` with ``score_utils.py``: the percentage of score 1 over every question (a score
  that is not 0 or 1 counts 0, as ``N_invalid``), overall and by category (descriptive: the question
  template's category, ``QNUM2QTYPE``; reasoning: the answer type), by source (reasoning), subject,
  year, number of subplots and template (descriptive), each ``round(100 * sum / n, 2)``.

Ours: the authors grade five descriptive responses of one template in one call
(``build_descriptive_grading_queries``, ``nq_per_query=5``), across charts; a judge here is asked per
document, so each response is graded alone (the same prompt with one triplet, ``NUM_TRIPLETS`` 1).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from mmtasks.core.conversation import Image, Message, Text
from mmtasks.core.request import Request
from mmtasks.core.sample import Dialogue, Sample
from mmtasks.dialogues.judging import MAX_JUDGED_CHARS, Unaskable, ask_judge, judge_request, too_large_for_the_judge
from mmtasks.dialogues.protocols import DialogueContext, protocol
from mmtasks.dialogues.state import DocumentState
from mmtasks.errors import ConfigError, DataError
from mmtasks.plugin import verdict_parser
from mmtasks.scoring.aggregation import TaskResult, aggregator, per_sample_mean

if TYPE_CHECKING:
    from mmtasks.config.task_config import TaskConfig
    from mmtasks.scoring.aggregation import TaskScoring

PROMPTS: dict[str, Any] = json.loads((Path(__file__).parent / "charxiv_prompts.json").read_text(encoding="utf-8"))
#: lmms-eval's strings where they differ from the authors' (its constant.py: "integer" for "interger")
LMMS_EVAL_PROMPTS: dict[str, Any] = json.loads((Path(__file__).parent / "lmms_eval_prompts.json").read_text(encoding="utf-8"))

#: score_utils.py
DOMAIN2ABBR = {"cs": "Computer Science", "econ": "Economics", "eess": "Electrical Engineering and Systems Science",
               "math": "Mathematics", "physics": "Physics", "q-bio": "Quantitative Biology",
               "q-fin": "Quantitative Finance", "stat": "Statistics"}
IDX2ANSTYPE = {1: "Text-in-Chart", 2: "Text-in-General", 3: "Number-in-Chart", 4: "Number-in-General"}
IDX2SRC = {1: "GPT-Sourced", 2: "GPT-Inspired", 3: "Completely Human"}
DESCRIPTIVE_CATEGORIES = ("Information Extraction", "Enumeration", "Pattern Recognition", "Counting", "Compositionality")
#: the metric each category is reported as
METRIC_OF = {
    "Information Extraction": "information_extraction", "Enumeration": "enumeration",
    "Pattern Recognition": "pattern_recognition", "Counting": "counting", "Compositionality": "compositionality",
    "Text-in-Chart": "text_in_chart", "Text-in-General": "text_in_general", "Number-in-Chart": "number_in_chart",
    "Number-in-General": "number_in_general",
}
OVERALL = "overall"


def qnum_to_qtype(qnum: int) -> str:
    """score_utils.py QNUM2QTYPE: a descriptive template's category."""
    for numbers, name in (((1, 2, 3, 4, 5, 6, 7), "Information Extraction"), ((8, 9, 13, 14, 15), "Enumeration"),
                          ((11, 16, 18), "Pattern Recognition"), ((10, 12, 19), "Counting"), ((17,), "Compositionality")):
        if qnum in numbers:
            return name
    raise ValueError(f"Invalid qnum: {qnum}")


def subplot_type(num_subplots: int) -> str:
    """score_utils.py NUMSUBPLOTS2SUBPLOTTYPE."""
    if num_subplots == 1:
        return "1 Subplot"
    if 2 <= num_subplots <= 4:
        return "2-4 Subplots"
    if num_subplots >= 5:
        return "5+ Subplots"
    raise ValueError(f"Invalid num_subplots: {num_subplots}")


def year_label(year: Any) -> str:
    """score_utils.py NUM2YEAR ('20' -> '2020'); a four-digit year is taken as it is."""
    text = str(year)
    return text if len(text) == 4 else "20" + text


# --- the model's questions --------------------------------------------------------------------------

def subplot_location(record: Mapping[str, Any]) -> list[int] | str:
    """The authors' ``subplot_loc``: a phrase, or [row, column] (row 0: a single plot). The Hub row
    holds the phrase in ``subplot_loc`` and the grid place in ``subplot_row``/``subplot_col``
    (lmms-eval's ``charxiv_descriptive_process_docs`` reads them so)."""
    loc = record.get("subplot_loc")
    if isinstance(loc, str):
        return loc
    if isinstance(loc, list):
        return loc
    row, col = record.get("subplot_row"), record.get("subplot_col")
    if not isinstance(row, int) or (row != 0 and not isinstance(col, int)):
        raise DataError("a chart needs subplot_loc (a phrase) or subplot_row and subplot_col", field="subplot_row")
    return [row, col if isinstance(col, int) else 0]  # row 0: a single plot, the column not read


def descriptive_question(qid: int, subplot_loc: list[int] | str) -> str:
    """descriptive_utils.py descriptive_query_helper."""
    template = PROMPTS["descriptive_resp_inst"][str(qid)]
    if qid in (18, 19):
        return template
    if isinstance(subplot_loc, list):
        prefix = "For the current plot, " if subplot_loc[0] == 0 else \
            f"For the subplot at row {subplot_loc[0]} and column {subplot_loc[1]}, "
    else:
        prefix = f"For {subplot_loc}, "
    return template.format(prefix)


def number_instruction(answer: str) -> str:
    """reasoning_utils.py get_number_instruction: an integer, or the answer's decimal places."""
    base = answer.split(".")
    if len(base) == 1:
        return "* Your final answer must be an exact integer."
    return f"* Your final answer must be a number with {len(base[1])} decimal places."


def reasoning_question(record: Mapping[str, Any]) -> str:
    """reasoning_utils.py build_reasoning_queries: the question in its answer type's instruction."""
    kind = record["reasoning_a_type"]
    template = PROMPTS["reasoning_resp_inst"][str(kind)]
    if kind in (1, 2, 3):
        return template.format(record["reasoning_q"])
    if kind == 4:
        return template.format(record["reasoning_q"], number_instruction(record["reasoning_a"]))
    raise DataError(f"reasoning_a_type must be 1-4, got {kind!r}", field="reasoning_a_type")


# --- the grader's prompts ---------------------------------------------------------------------------

def rubric(qid: int) -> str:
    """descriptive_utils.py get_rubric."""
    icl = PROMPTS["descriptive_grading_icl"]
    for numbers, name in (((1,), "title"), ((2, 3, 4, 5, 6, 7), "ocr"), ((8, 9, 10, 12, 14, 15, 17, 19), "quant"),
                          ((11,), "bool"), ((13,), "enum"), ((16,), "trend"), ((18,), "layout")):
        if qid in numbers:
            return icl[name]
    raise ValueError(f"Instruction for qid {qid} is not found.")


def descriptive_grading_query(qid: int, response: str, answer: str) -> str:
    """build_descriptive_grading_queries for a batch of one (response, answer)."""
    keys = str(["extract_answer_T1", "score_T1"])
    prefix = PROMPTS["descriptive_grading_prefix"].replace("<|NUM_TRIPLETS|>", "1") \
        .replace("<|OVERARCHING_QUESTION|>", PROMPTS["descriptive_grading_qmap"][str(qid)]) \
        .replace("<|JSON_KEYS|>", keys)
    return prefix + rubric(qid) + "T{}:\nResponse {}: {}\nGround Truth {}: {}\n\n".format(1, 1, response, 1, answer)


def reasoning_grading_query(record: Mapping[str, Any], response: str, *, lmms_eval: bool = False) -> str:
    """build_reasoning_grading_queries for one chart. ``lmms_eval``: lmms-eval's (its prefix, and the
    rubric of ``reasoning_q_source`` rather than of the answer type, as its
    ``charxiv_reasoning_process_results`` passes it)."""
    kind = record["reasoning_q_source"] if lmms_eval else record["reasoning_a_type"]
    inst = PROMPTS["reasoning_grading_inst"][str(kind)]
    prefix = LMMS_EVAL_PROMPTS["reasoning_grading_prefix"] if lmms_eval else PROMPTS["reasoning_grading_prefix"]
    return prefix + inst.replace("<|question|>", record["reasoning_q"]) \
        .replace("<|ground_truth|>", record["reasoning_a"]).replace("<|response|>", response)


def lmms_eval_reasoning_question(record: Mapping[str, Any]) -> str:
    """lmms-eval's charxiv_reasoning_doc_to_text_cot (the instruction of ``reasoning_q_source``),
    stripped as its doc_to_messages sends it."""
    kind = record["reasoning_q_source"]
    template = PROMPTS["reasoning_resp_inst"].get(str(kind))
    if template is None:
        raise DataError(f"reasoning_q_source must be 1-4, got {kind!r}", field="reasoning_q_source")
    args = (record["reasoning_q"], number_instruction(record["reasoning_a"])) if kind == 4 else (record["reasoning_q"],)
    return template.format(*args).strip()


# --- the grader's verdicts --------------------------------------------------------------------------

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def _json_object(text: str) -> dict[str, Any] | None:
    """The grader's reply as one JSON object (the authors ask for ``response_format`` json_object and
    ``json.loads`` the reply); a reply fenced as a code block is read inside the fence (ours)."""
    text = text.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth: no verdict
        return None
    return value if isinstance(value, dict) else None


def _valid(score: Any) -> bool:
    """get_stats.py: a score counts when it is ``in [0, 1]`` (so 1.0 and True do, "1" does not)."""
    return isinstance(score, (int, float)) and not (isinstance(score, float) and math.isnan(score)) and score in (0, 1)


def read_descriptive_verdict(text: str) -> dict[str, Any] | None:
    """descriptive_utils.py verify_grading_output for one triplet: ``extract_answer_T1`` and
    ``score_T1`` present and the score 0 or 1; None otherwise (the grader is asked again)."""
    content = _json_object(text)
    if content is None or "extract_answer_T1" not in content or "score_T1" not in content or not _valid(content["score_T1"]):
        return None
    return {"extracted_answer": content["extract_answer_T1"], "score": 1 if content["score_T1"] == 1 else 0}


def read_reasoning_verdict(text: str) -> dict[str, Any] | None:
    """reasoning_utils.py get_reasoning_result_gpt: ``content['extracted_answer']`` and
    ``content['score']`` (a reply without them is asked again); a score other than 0 or 1 is kept as
    the authors keep it and counts 0 in the statistics (``invalid``)."""
    content = _json_object(text)
    if content is None or "extracted_answer" not in content or "score" not in content:
        return None
    valid = _valid(content["score"])
    raw = content["score"]
    return {"extracted_answer": content["extracted_answer"], "score": (1 if content["score"] == 1 else 0) if valid else 0,
            "invalid": 0 if valid else 1,
            "raw_score": raw if isinstance(raw, (int, float)) and not isinstance(raw, bool) and raw == raw else int(raw is True)}


@verdict_parser("charxiv_descriptive_verdict")
def charxiv_descriptive_verdict(text: str, context: Mapping[str, Any]) -> dict[str, Any] | None:
    return read_descriptive_verdict(text)


@verdict_parser("charxiv_reasoning_verdict")
def charxiv_reasoning_verdict(text: str, context: Mapping[str, Any]) -> dict[str, Any] | None:
    return read_reasoning_verdict(text)


# --- the protocol -----------------------------------------------------------------------------------

class CharXivArgs(BaseModel):
    """``protocol_args`` of a CharXiv task."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: str
    """``descriptive`` (the chart's four questions, each asked alone) or ``reasoning`` (its one)."""
    flavor: str = "authors"
    """``authors``, or ``lmms_eval`` (reasoning only): lmms-eval's input and grader prompt (the
    instruction and rubric of ``reasoning_q_source``, the question stripped after the chart, its
    grading prefix, the response stripped)."""


@dataclass(frozen=True)
class Question:
    """One question of a chart: the template id (descriptive) or answer type (reasoning)."""

    index: int
    kind: int
    text: str
    answer: str


def questions(record: Mapping[str, Any], mode: str, flavor: str = "authors") -> list[Question]:
    if mode == "reasoning" and flavor == "lmms_eval":
        return [Question(0, int(record["reasoning_q_source"]), lmms_eval_reasoning_question(record), str(record["reasoning_a"]))]
    if mode == "reasoning":
        return [Question(0, int(record["reasoning_a_type"]), reasoning_question(record), str(record["reasoning_a"]))]
    loc = subplot_location(record)
    out = []
    for i in range(4):
        qid = record.get(f"descriptive_q{i + 1}")
        if not isinstance(qid, int) or str(qid) not in PROMPTS["descriptive_resp_inst"]:
            raise DataError(f"descriptive_q{i + 1} must be a template id 1-19, got {qid!r}", field=f"descriptive_q{i + 1}")
        out.append(Question(i, qid, descriptive_question(qid, loc), str(record[f"descriptive_a{i + 1}"])))
    return out


@protocol("charxiv", args=CharXivArgs, uses_judge=True)
def charxiv(state: DocumentState, ctx: DialogueContext) -> Dialogue:
    """Each question of the chart asked alone (the question's text, then the chart: the authors'
    ``generate_lib/gpt.py``), in one wave; each answer graded alone by the judge with the authors'
    grader prompt, in one wave. ``extra["questions"]`` keeps one record per question; the sample's
    ``overall`` is the percentage of its questions scored 1 (None when a request or a grading failed:
    the statistics count such a question 0, as ``get_stats.py`` counts an invalid score)."""
    args = state.args
    assert isinstance(args, CharXivArgs)
    if args.mode not in ("descriptive", "reasoning"):
        raise ConfigError(f"protocol_args.mode must be descriptive or reasoning, got {args.mode!r}",
                          file=state.file, field="protocol_args.mode")
    if args.flavor not in ("authors", "lmms_eval") or (args.flavor == "lmms_eval" and args.mode != "reasoning"):
        raise ConfigError(f"protocol_args.flavor must be authors, or lmms_eval with mode reasoning, got {args.flavor!r}",
                          file=state.file, field="protocol_args.flavor")
    lmms_eval = args.flavor == "lmms_eval"
    doc, config = state.doc, state.config
    record = doc.record
    asked = questions(record, args.mode, args.flavor)
    if not doc.images:
        raise DataError("the chart's image is missing", file=doc.source, doc_id=doc.doc_id, field="image")
    image: Image = doc.images[0]
    # the authors' gpt.py: the text, then the chart; lmms-eval's doc_to_messages: the chart first
    requests = [Request(messages=(Message("user", (image, Text(q.text)) if lmms_eval else (Text(q.text), image)),),
                        generation=config.generation,
                        target="model", task=state.task, doc_id=doc.doc_id, position=q.index,
                        meta={"answer_space": state.answer_space}) for q in asked]
    sample = Sample(task=state.task, doc_id=doc.doc_id, doc_index=doc.index,
                    prompt=[m.to_json() for r in requests for m in r.messages],
                    target=[q.answer for q in asked], breakdown=state.breakdown)
    replies = yield requests
    records: list[dict[str, Any]] = []
    for q, reply in zip(asked, replies, strict=True):
        sample.add_reply(reply)
        rec: dict[str, Any] = {"index": q.index, "kind": q.kind, "question": q.text, "reference": q.answer,
                               "response": reply.text, "status": "unjudged", "score": None}
        if not reply.ok:
            # the failure's own words first ("truncated: ...", "context_overflow: ..."): readers tell its kind by them
            sample.add_failure(f"{reply.error or 'request failed'} (question {q.index + 1})", reply.kind)
            rec["status"] = "request_failure"
        records.append(rec)
    judged = config.judge is not None and ctx.has_judge and not ctx.predict_only
    to_grade = [(q, rec) for q, rec in zip(asked, records, strict=True) if rec["status"] == "unjudged"]
    if judged and to_grade:
        read = read_descriptive_verdict if args.mode == "descriptive" else read_reasoning_verdict
        calls: list[Request | Unaskable] = []
        for q, rec in to_grade:
            response = rec["response"] or ""
            query = (descriptive_grading_query(q.kind, response, q.answer) if args.mode == "descriptive"
                     else reasoning_grading_query(record, response.strip() if lmms_eval else response, lmms_eval=lmms_eval))
            # a reply past any judge's context is not sent (a judge failure), as judge_call does
            calls.append(too_large_for_the_judge(len(response)) if len(response) > MAX_JUDGED_CHARS
                         else judge_request(state, position=q.index, grading_query=query))
        verdicts = yield from ask_judge(calls, read, config.judge.retries if config.judge else 0)
        for (q, rec), verdict in zip(to_grade, verdicts, strict=True):
            # the question it graded: the run viewer shows a grading under its question by this index
            sample.judge.append({"question": q.index, **verdict.to_json()})
            if verdict.ok:
                assert verdict.fields is not None
                rec.update(status="judged", score=verdict.fields["score"], extracted=verdict.fields["extracted_answer"],
                           invalid=verdict.fields.get("invalid", 0), raw_score=verdict.fields.get("raw_score"))
            else:
                rec.update(status="judge_failure", judge_error=verdict.error)
                sample.judge_failures += 1
    sample.extra["questions"] = records
    scores = [rec["score"] for rec in records]
    sample.metrics = {OVERALL: 100.0 * sum(scores) / len(scores) if all(s is not None for s in scores) else None}
    return sample


# --- the statistics ---------------------------------------------------------------------------------

def chart_labels(breakdown: Mapping[str, str]) -> dict[str, str]:
    """A chart's groups as get_stats.py names them, from the task's breakdown labels (the Hub's
    ``category``, ``year``, ``num_subplots`` and ``reasoning_q_source``)."""
    labels = {"subject": DOMAIN2ABBR.get(breakdown.get("subject", ""), breakdown.get("subject", "")),
              "year": year_label(breakdown.get("year", ""))}
    try:
        labels["subplots"] = subplot_type(int(breakdown.get("subplots", "")))
    except ValueError:
        labels["subplots"] = breakdown.get("subplots", "")
    source = breakdown.get("source", "")
    labels["source"] = IDX2SRC.get(int(source), source) if source.isdigit() else source
    return labels


def _pct(values: list[int]) -> float:
    """get_stats.py: round(100 * sum / n, 2); a group without scores is 0."""
    return round(100 * sum(values) / len(values), 2) if values else 0.0


def _emits_descriptive(config: "TaskConfig") -> list[str]:
    return [OVERALL, *(METRIC_OF[c] for c in DESCRIPTIVE_CATEGORIES)]


def _emits_reasoning(config: "TaskConfig") -> list[str]:
    return [OVERALL, *(METRIC_OF[c] for c in IDX2ANSTYPE.values())]


def _stats(task: "TaskScoring", samples: Sequence[Sample], seed: int, mode: str) -> TaskResult:
    """get_stats.py's figures from the question records: every question counts, one without a score
    of 0 or 1 (a failed request or grading, an invalid score) as 0."""
    result = per_sample_mean(task, samples, seed)  # the stderr over charts, coverage, problems
    groups: dict[str, dict[str, list[int]]] = {"category": {}, "source": {}, "subject": {}, "year": {},
                                                "subplots": {}, "question": {}}
    overall: list[int] = []
    n_invalid = 0
    for s in samples:
        labels = chart_labels(s.breakdown)
        for rec in s.extra.get("questions", []):
            score = rec.get("score")
            if score not in (0, 1) or rec.get("invalid"):
                n_invalid += 1
                score = 0
            overall.append(score)
            if mode == "descriptive":
                category = qnum_to_qtype(rec["kind"])
                groups["question"].setdefault(f"Q{rec['kind']}", []).append(score)
            else:
                category = IDX2ANSTYPE[rec["kind"]]
                groups["source"].setdefault(labels.get("source", ""), []).append(score)
            groups["category"].setdefault(category, []).append(score)
            for name in ("subject", "year", "subplots"):
                groups[name].setdefault(labels.get(name, ""), []).append(score)
    result.metrics[OVERALL] = _pct(overall) if overall else None
    result.higher_is_better[OVERALL] = True
    categories = DESCRIPTIVE_CATEGORIES if mode == "descriptive" else tuple(IDX2ANSTYPE.values())
    for category in categories:
        result.metrics[METRIC_OF[category]] = _pct(groups["category"].get(category, [])) if overall else None
        result.higher_is_better[METRIC_OF[category]] = True
    result.counts = {"questions": len(overall), "invalid": n_invalid}
    result.breakdowns = {
        name: {label: {OVERALL: _pct(values), "n": len(values)} for label, values in sorted(by_label.items())}
        for name, by_label in groups.items() if by_label
    }
    return result


@aggregator("charxiv_descriptive_stats", emits=_emits_descriptive)
def charxiv_descriptive_stats(task: "TaskScoring", samples: Sequence[Sample], seed: int) -> TaskResult:
    """get_stats.py get_descriptive_scores + get_stats (see :func:`_stats`)."""
    return _stats(task, samples, seed, "descriptive")


@aggregator("charxiv_reasoning_stats", emits=_emits_reasoning)
def charxiv_reasoning_stats(task: "TaskScoring", samples: Sequence[Sample], seed: int) -> TaskResult:
    """get_stats.py get_reasoning_scores + get_stats (see :func:`_stats`)."""
    return _stats(task, samples, seed, "reasoning")


def _emits_overall(config: "TaskConfig") -> list[str]:
    return [OVERALL]


@aggregator("charxiv_lmms_eval_mean", emits=_emits_overall)
def charxiv_lmms_eval_mean(task: "TaskScoring", samples: Sequence[Sample], seed: int) -> TaskResult:
    """lmms-eval's charxiv_reasoning_aggregate_results, times 100: the mean of the grader's scores as
    they are (a score of 2 counts 2), a failed grading's -1 (get_reasoning_result_gpt's dummy)
    included; a failed request counts 0 (ours: lmms-eval would grade the empty reply)."""
    result = per_sample_mean(task, samples, seed)
    scores: list[float] = []
    for s in samples:
        for rec in s.extra.get("questions", []):
            if rec.get("status") == "judged":
                scores.append(float(rec.get("raw_score", rec["score"])))
            else:
                scores.append(-1.0 if rec.get("status") == "judge_failure" else 0.0)
    result.metrics[OVERALL] = 100 * sum(scores) / len(scores) if scores else None
    result.higher_is_better[OVERALL] = True
    result.counts = {"questions": len(scores)}
    return result
