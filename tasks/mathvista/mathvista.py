"""MathVista scoring: the authors' answer extraction rules, normalisation and comparison, the optional
LLM extractor, and the skills breakdown.

Loaded as a plugin file by the MathVista tasks (``plugins:``). Reimplemented from the authors' code,
github.com/lupantech/MathVista at commit ``53d5258`` (``evaluation/extract_answer.py``,
``evaluation/calculate_score.py``); ``tests/test_mathvista_reference.py`` runs their functions verbatim
on the same replies.

- ``mathvista_extract`` (parser): ``extract_answer``'s rules before its GPT call (official): an empty
  reply is the extraction ""; a multiple-choice reply that is one of the choices is that choice; an
  integer question's reply that ``int()`` reads, a float question's that ``float()`` reads; then their
  ``--quick_extract`` rule (``The answer is "x".``). Without the LLM extractor (ours, offline): a short
  answer read from the reply's end (see :func:`offline_extract`), else nothing (unparsed, scored wrong).
- ``mathvista_acc`` (metric): ``normalize_extracted_answer`` then ``safe_equal`` with the gold answer
  (official): a multiple-choice extraction "(B) ..." or "B" names that option, any other text the
  option nearest by Levenshtein distance; integers ``str(int(float(x)))``; floats rounded to the
  record's precision; lists ``str(x)``.
- ``mathvista_extract_llm`` (protocol): single turn, then, for a reply the official rules read
  nothing from, the judge asked with the authors' extraction prompt (``evaluation/prompts/ext_ans.py``
  ``demo_prompt``, then the query, the reply, "Extracted answer: ") as ``extract_answer`` asks GPT;
  its reply is the extraction.
- ``mathvista_skills`` (aggregator): the generic means and breakdowns, with ``skills`` counted per
  skill (a question in each of its skills, as ``get_acc_with_contion`` does).
- lmms-eval's and VLMEvalKit's readings (scoring variants): ``mathvista_extract_lmms_eval`` and
  ``mathvista_acc_lmms_eval`` (lmms-eval ``lmms_eval/tasks/mathvista``: the reply stripped, no quick
  rule, the precision passed to ``round`` as the dataset stores it, a float, and ``str`` equality);
  ``mathvista_prefetch_vlmevalkit`` (VLMEvalKit ``vlmeval/dataset/utils/mathvista.py`` ``post_check``
  with ``prefetch=True``: what it scores without its GPT call).
"""

from __future__ import annotations

import dataclasses
import math
import re
import string
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mmtasks.core.request import Request
from mmtasks.core.sample import Dialogue, Sample
from mmtasks.dialogues.judging import ask_judge, judge_request
from mmtasks.dialogues.protocols import DialogueContext, protocol
from mmtasks.dialogues.state import DocumentState
from mmtasks.plugin import metric, parser, verdict_parser
from mmtasks.scoring.aggregation import TaskResult, aggregator, breakdown_table, function_and_judge_metrics, per_sample_mean
from mmtasks.scoring.parsers import read_by
from mmtasks.scoring.variants import score_variants
from mmtasks.scoring.vlmevalkit_matching import infer_option, infer_text

if TYPE_CHECKING:
    from mmtasks.scoring.aggregation import TaskScoring

#: extract_answer.py's quick rule (``--quick_extract``)
_QUICK = re.compile(r'The answer is "(.*)"\.')
#: the breakdown whose label lists a question's skills, joined by SKILL_SEP
SKILLS = "skills"
SKILL_SEP = "|"


def _choices(record: Mapping[str, Any]) -> list[str]:
    return [str(c) for c in (record.get("choices") or [])]


def official_rules(response: str, record: Mapping[str, Any]) -> str | None:
    """``extract_answer``'s rules before the GPT call, in its order (None: GPT would be asked)."""
    if response == "":
        return ""
    if record.get("question_type") == "multi_choice" and response in _choices(record):
        return response
    answer_type = record.get("answer_type")
    if answer_type == "integer":
        try:
            return str(int(response))
        except ValueError:
            pass
    if answer_type == "float":
        try:
            return str(float(response))
        except ValueError:
            pass
    found = _QUICK.search(response)
    return found.group(1) if found else None


_ANSWER_CUE = re.compile(r"(?:(?:final answer|answer)\s*(?:is|:)|答案是|答案为|答案：)\s*", re.IGNORECASE)
_BRACKETED = re.compile(r"\(([A-Z])\)")
_NUMBER = re.compile(r"-?\d+(?:,\d{3})*(?:\.\d+)?|-?\.\d+")
_LIST = re.compile(r"\[[^\[\]]*\]")
_LETTER = re.compile(r"^\(?([A-Za-z])\)?(?:[.:)]|\s|$)")


def offline_extract(response: str, record: Mapping[str, Any]) -> str | None:
    """Ours (no LLM extractor): the text after the last "answer is" / "answer:" / "答案是" (else the
    whole reply), read by the question's type - multiple choice: a leading option letter ("B", "(B)",
    "B.") within the choices, or one choice's text, else the reply's last "(X)" among the choices'
    letters; integer and float: the last number (thousands commas dropped); list: the last ``[...]``.
    None when nothing fits (unparsed, scored wrong)."""
    cues = list(_ANSWER_CUE.finditer(response))
    tail = response[cues[-1].end():] if cues else response
    tail = tail.strip().strip("*$ \n").rstrip(".")
    if record.get("question_type") == "multi_choice":
        choices = _choices(record)
        letter = _LETTER.match(tail)
        if letter and ord(letter.group(1).upper()) - ord("A") < len(choices):
            return letter.group(1).upper()
        folded = tail.strip(string.punctuation + " ").lower()
        named = [c for c in choices if c.strip().lower() == folded]
        if len(named) == 1:
            return named[0]
        # the last "(X)" of the reply among the choices' letters
        bracketed = [b for b in _BRACKETED.findall(response) if ord(b) - ord("A") < len(choices)]
        return bracketed[-1] if bracketed else None
    if record.get("answer_type") == "list":
        lists = _LIST.findall(tail)
        return lists[-1] if lists else None
    numbers = _NUMBER.findall(tail)
    return numbers[-1].replace(",", "") if numbers else None


@parser("mathvista_extract", target="raw")
def mathvista_extract(text: str, record: Mapping[str, Any]) -> str | None:
    """The authors' rules, then ours offline (see the module's docstring)."""
    official = official_rules(text, record)
    return official if official is not None else offline_extract(text, record)


@parser("mathvista_extract_official", target="raw")
def mathvista_extract_official(text: str, record: Mapping[str, Any]) -> str | None:
    """The authors' rules alone (None: their GPT extractor is asked)."""
    return official_rules(text, record)


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions of one character), as ``Levenshtein.distance``."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def _precision(record: Mapping[str, Any]) -> Any:
    value = record.get("precision")
    return None if isinstance(value, float) and math.isnan(value) else value


def normalize(extraction: Any, record: Mapping[str, Any], *, lmms_eval: bool = False) -> str | None:
    """``normalize_extracted_answer`` (``ignore_empty_extractions`` off, their default); ``lmms_eval``:
    lmms-eval's copy, which passes the precision to ``round`` as it is (a float: a TypeError, None)."""
    choices = _choices(record)
    if record.get("question_type") == "multi_choice":
        extraction = extraction.strip() if isinstance(extraction, str) else str(extraction)
        letter = re.findall(r"\(([a-zA-Z])\)", extraction)
        if letter:
            extraction = letter[0].upper()
        letters = [chr(ord("A") + i) for i in range(len(choices))]
        if extraction in letters:
            return choices[letters.index(extraction)]
        distances = [levenshtein(extraction, c) for c in choices]
        return choices[distances.index(min(distances))]
    answer_type = record.get("answer_type")
    if answer_type == "integer":
        try:
            return str(int(float(extraction)))
        except (TypeError, ValueError, OverflowError):
            return None
    if answer_type == "float":
        precision = _precision(record)
        try:
            return str(round(float(extraction), precision if lmms_eval else int(precision)))
        except (TypeError, ValueError, OverflowError):
            return None
    if answer_type == "list":
        return str(extraction)
    return None  # their function leaves the name unbound here: an error; no such record in the data


@metric("mathvista_acc")
def mathvista_acc(parsed: str | None, target: Any, record: Mapping[str, Any]) -> float:
    """``normalize_extracted_answer`` then ``safe_equal`` (==) with the gold answer: 100 or 0."""
    if parsed is None:
        return 0.0
    return 100.0 if normalize(parsed, record) == target else 0.0


# --- lmms-eval and VLMEvalKit (scoring variants) ----------------------------------------------------

@parser("mathvista_extract_lmms_eval", target="raw")
def mathvista_extract_lmms_eval(text: str, record: Mapping[str, Any]) -> str | None:
    """lmms-eval's ``extract_answer`` before its GPT call (``quick_extract`` false, as its YAML sets
    it), on the reply stripped (``mathvista_process_results``): None where it asks GPT."""
    response = text.strip()
    if not response:
        return ""
    if record.get("question_type") == "multi_choice" and response in _choices(record):
        return response
    answer_type = record.get("answer_type")
    if answer_type == "integer":
        try:
            return str(int(response))
        except ValueError:
            pass
    if answer_type == "float":
        try:
            return str(float(response))
        except ValueError:
            pass
    return None


@metric("mathvista_acc_lmms_eval")
def mathvista_acc_lmms_eval(parsed: str | None, target: Any, record: Mapping[str, Any]) -> float:
    """lmms-eval's ``normalize_extracted_answer`` and ``safe_equal`` (``str(x).strip()`` equality)."""
    if parsed is None:
        return 0.0
    return 100.0 if str(normalize(parsed, record, lmms_eval=True)).strip() == str(target).strip() else 0.0


_VLMEVAL_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _vlmeval_options(record: Mapping[str, Any]) -> dict[str, str]:
    return {_VLMEVAL_LETTERS[i]: c for i, c in enumerate(_choices(record))}


@parser("mathvista_prefetch_vlmevalkit", target="raw")
def mathvista_prefetch_vlmevalkit(text: str, record: Mapping[str, Any]) -> str | None:
    """VLMEvalKit's ``post_check(line, prefetch=True)``, what it reads without its GPT call: for a
    multiple-choice question the letter ``can_infer`` reads (right or wrong; "Z" a refusal); for an
    integer or float question the reply's value when it equals the answer (and is not 0: a falsy
    prefetch asks GPT); None where VLMEvalKit asks GPT (every list question)."""
    try:
        if record.get("question_type") == "multi_choice":
            options = _vlmeval_options(record)
            return infer_option(text, options) or infer_text(text, options)
        answer_type = record.get("answer_type")
        if answer_type == "integer":
            value: float = int(text)
            gold: float = int(str(record.get("answer")))
        elif answer_type == "float":
            value, gold = float(text), float(str(record.get("answer")))
        else:
            return None
    except ValueError:
        return None
    return str(value) if value == gold and value else None


@metric("mathvista_acc_vlmevalkit_prefetch")
def mathvista_acc_vlmevalkit_prefetch(parsed: str | None, target: Any, record: Mapping[str, Any]) -> float:
    """VLMEvalKit's ``post_check(line, prefetch=False)`` on the prefetched reading: the letter equals
    the answer's letter (``answer_option``); a number was read only when right."""
    if parsed is None:
        return 0.0
    if record.get("question_type") == "multi_choice":
        options = _vlmeval_options(record)
        gold = [k for k, v in options.items() if v == target]
        read = infer_option(parsed, options) or infer_text(parsed, options)
        return 100.0 if gold and read == gold[0] else 0.0
    return 100.0


# --- the authors' LLM extraction ---------------------------------------------------------------------

@protocol("mathvista_extract_llm", uses_judge=True, supports_combined_images=True)
def mathvista_extract_llm(state: DocumentState, ctx: DialogueContext) -> Dialogue:
    """One question, one reply; a reply the official rules read nothing from goes to the judge (the
    authors' GPT-4 extractor) with their extraction prompt, whose reply, stripped, is the extraction.
    Without a judge (or with ``--predict-only``) the task's parser reads the reply (the official
    rules, then ours offline), as in ``mathvista_testmini``."""
    doc, config = state.doc, state.config
    gold = state.gold
    messages = state.messages
    sample = Sample(task=state.task, doc_id=doc.doc_id, doc_index=doc.index,
                    prompt=[m.to_json() for m in messages], target=gold.value, breakdown=state.breakdown)
    request = Request(messages=messages, generation=config.generation, target="model", task=state.task,
                      doc_id=doc.doc_id, position=0, meta={"answer_space": state.answer_space})
    (reply,) = yield [request]
    sample.add_reply(reply)
    if not reply.ok:
        sample.add_failure(reply.error or "request failed", reply.kind)
        sample.metrics = {name: None for name in state.metric_fns}
        return sample
    response = reply.text or ""
    asks = config.judge is not None and ctx.has_judge and not ctx.predict_only
    # with the extractor: the official rules alone before it; without: the task's parser (ours offline)
    parsed = official_rules(response, doc.record) if asks else state.parser(response, doc.record)
    if parsed is None and asks:
        assert config.judge is not None
        # extract_answer.py create_test_prompt: the demo prompt (judge.prompt_file), the query, the reply
        extract = judge_request(state, position=0, prediction=response)
        (verdict,) = yield from ask_judge([extract], _extraction, config.judge.retries)
        sample.judge.append(verdict.to_json())
        if verdict.ok:
            assert verdict.fields is not None
            parsed = verdict.fields["extraction"]
            sample.extra["extraction"] = parsed
        else:
            sample.judge_failures += 1
    sample.parsed = parsed
    sample.read_by = "judge" if sample.judge and parsed is not None else read_by(parsed)
    sample.unparsed = int(parsed is None and not sample.judge_failures)
    sample.metrics = dict(state.score(parsed, gold.scored))
    if sample.judge_failures:
        sample.metrics = {name: None for name in sample.metrics}
    score_variants(state.variants, sample, doc, parsed, gold.scored)
    return sample


def _extraction(text: str) -> dict[str, Any] | None:
    """The extractor's reply is the extraction (``model.get_response``, stripped by the client);
    an empty reply is none (their ``verify_extraction``: the extraction is asked again)."""
    extraction = text.strip()
    return {"extraction": extraction} if extraction else None


@verdict_parser("mathvista_extraction")
def mathvista_extraction(text: str, context: Mapping[str, Any]) -> dict[str, Any] | None:
    """The judge's reply as the extraction (see :func:`_extraction`); what ``mmtasks check`` reads."""
    return _extraction(text)


# --- the skills breakdown ----------------------------------------------------------------------------

@aggregator("mathvista_skills", emits=function_and_judge_metrics)
def mathvista_skills(task: "TaskScoring", samples: Sequence[Sample], seed: int) -> TaskResult:
    """``per_sample_mean``, with the ``skills`` breakdown (each question's skills joined by "|") counted
    per skill: a question is in every one of its skills (``calculate_score.py`` ``get_acc_with_contion``)."""
    result = per_sample_mean(task, samples, seed)
    if SKILLS in result.breakdowns:
        names = [m.name for m in task.config.metrics]
        split = [dataclasses.replace(s, breakdown={SKILLS: skill})
                 for s in samples for skill in (s.breakdown.get(SKILLS) or "").split(SKILL_SEP) if skill]
        result.breakdowns[SKILLS] = breakdown_table(split, names).get(SKILLS, {})
    return result
