"""MathVerse scoring: the authors' two-step GPT evaluation (extraction, then judgement) as an optional
judge, and an offline rule of ours.

Loaded as a plugin file by the MathVerse tasks (``plugins:``). The authors' code is
github.com/ZrrSkywalker/MathVerse at commit ``937b090`` (MIT): ``evaluation/extract_answer_s1.py``,
``evaluation/score_answer_s2.py`` and their prompts ``evaluation/prompts.py``;
``tests/test_mathverse_reference.py`` runs their prompt builders and post-processing verbatim.

- ``mathverse_vision_only`` (adapter): keeps ``answer`` as ``vision_only_answer`` on the records of the
  problem version "Vision Only" (null on the other four versions of ``testmini``), so that
  ``dataset.record_policy`` leaves the others out, counted.
- ``mathverse_rule`` (parser, ours): the answer read from the reply's end without a model - for a
  multiple-choice question a leading option letter after "answer is" / "answer:" (or the whole reply's
  letter), for a free-form one the text after the last "answer is" / "answer:" or in the last
  ``\\boxed{}``, else the last line; stripped of "$", spaces at the ends and a final period.
- ``mathverse_quick_match`` (metric): ``score_answer_s2.py``'s ``--quick_match`` rule: right when the
  extraction equals the answer (``inst['answer'] == inst['extraction']``).
- ``mathverse_two_step`` (protocol): the reply, then the judge asked twice as the authors ask GPT -
  step 1 with ``demo_prompt_extract`` on the reply's last 30 words (``--trunk_response 30``, the README's
  command), its reply less "Extracted Answer: " and stripped is the extraction; step 2 with
  ``demo_prompt_score`` formatted with the question, the answer and the extraction, its reply less
  "Judgement:" and stripped must be "0" or "1" (asked again otherwise). The judgement is the score.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from mmtasks.core.conversation import Message
from mmtasks.core.request import Request
from mmtasks.core.sample import Dialogue, Sample
from mmtasks.dialogues.judging import ask_judge, judge_request
from mmtasks.dialogues.protocols import DialogueContext, protocol
from mmtasks.dialogues.state import DocumentState
from mmtasks.errors import ConfigError
from mmtasks.plugin import metric, parser, verdict_parser
from mmtasks.registry import adapters

VISION_ONLY = "Vision Only"


@adapters.register("mathverse_vision_only")
def mathverse_vision_only(record: dict[str, Any]) -> dict[str, Any]:
    """``vision_only_answer``: the answer on a "Vision Only" record, null on the other versions."""
    keep = record.get("problem_version") == VISION_ONLY
    return {**record, "vision_only_answer": record.get("answer") if keep else None}


# --- offline (ours) ---------------------------------------------------------------------------------

_CUE = re.compile(r"(?:answer\s*(?:is|:)|answer\s+should\s+be)\s*", re.IGNORECASE)
_BOXED = re.compile(r"\\boxed\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}")
_LETTER = re.compile(r"^\(?([A-Ea-e])\)?(?=$|[\s.:,)])")


def _clean(text: str) -> str:
    return text.strip().strip("$").strip().rstrip(".").strip()


def rule_extract(response: str, record: Mapping[str, Any]) -> str | None:
    """Ours (no model): see the module's docstring. None for an empty reply."""
    text = response.strip()
    if not text:
        return None
    boxed = _BOXED.findall(text)
    cues = list(_CUE.finditer(text))
    if boxed:
        tail = boxed[-1]
    elif cues:
        tail = text[cues[-1].end():].split("\n")[0]
    else:
        tail = text.split("\n")[-1]
    tail = _clean(tail)
    if record.get("question_type") == "multi-choice":
        letter = _LETTER.match(tail)
        return letter.group(1).upper() if letter else None
    return tail or None


@parser("mathverse_rule", target="raw")
def mathverse_rule(text: str, record: Mapping[str, Any]) -> str | None:
    """Our offline reading (see :func:`rule_extract`)."""
    return rule_extract(text, record)


@metric("mathverse_quick_match")
def mathverse_quick_match(parsed: str | None, target: Any, record: Mapping[str, Any]) -> float:
    """``match_answer(quick_match=True)``: '1' if the answer equals the extraction."""
    return 100.0 if parsed is not None and target == parsed else 0.0


# --- the authors' two steps (the judge) --------------------------------------------------------------

class TwoStepArgs(BaseModel):
    """``protocol_args`` of ``mathverse_two_step``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    score_prompt_file: str
    """``demo_prompt_score`` as the authors format it (relative to the task file), up to its last example."""
    score_prompt: str
    """The rest of step 2's prompt (a template: ``question``, ``answer``, ``extraction``)."""
    trunk_response: int = 30
    """The reply's last N words go to step 1 (``--trunk_response``; 0 or less: the whole reply)."""
    question_field: str = "question"
    """The record field shown as [Question] (score_answer_s2.py: ``question``)."""


def trunk_response(response: str, trunk_length: int) -> str:
    """``extract_answer_s1.py`` ``trunk_response``."""
    if trunk_length <= 0:
        return response
    return " ".join(response.split(" ")[-trunk_length:])


def _extraction(text: str) -> dict[str, Any] | None:
    """Step 1's reply: "Extracted Answer: " dropped, stripped (``extract_answer_s1.py``); an empty
    reply is none (their ``get_chat_response`` asks again)."""
    extraction = text.replace("Extracted Answer: ", "").strip()
    return {"extraction": extraction} if text.strip() else None


def _judgement(text: str) -> dict[str, Any] | None:
    """Step 2's reply: "Judgement:" dropped, stripped, "0" or "1" (``score_answer_s2.py`` asks
    again otherwise)."""
    judgement = text.replace("Judgement:", "").strip()
    return {"judgement": int(judgement)} if judgement in ("0", "1") else None


@verdict_parser("mathverse_extraction")
def mathverse_extraction(text: str, context: Mapping[str, Any]) -> dict[str, Any] | None:
    """Step 1's reply as the extraction (what ``mmtasks check`` reads)."""
    return _extraction(text)


def _prompt_file(state: DocumentState, name: str) -> str:
    """The score prompt's file, beside the task file (read byte-exact, as ``judge.prompt_file`` is)."""
    folder = state.file.parent.resolve()
    path = (folder / name).resolve()
    if not path.is_relative_to(folder):
        raise ConfigError("the score prompt file must be inside the task's folder", file=state.file,
                          field="protocol_args.score_prompt_file")
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {name}: {exc.strerror}", file=state.file,
                          field="protocol_args.score_prompt_file") from None


@protocol("mathverse_two_step", args=TwoStepArgs, uses_judge=True, supports_combined_images=True)
def mathverse_two_step(state: DocumentState, ctx: DialogueContext) -> Dialogue:
    """One reply; with a judge (and not ``--predict-only``) the authors' two GPT steps score it;
    without one, the task's parser and metrics do (ours offline)."""
    args = state.args
    assert isinstance(args, TwoStepArgs)
    doc, config = state.doc, state.config
    gold = state.gold
    sample = Sample(task=state.task, doc_id=doc.doc_id, doc_index=doc.index,
                    prompt=[m.to_json() for m in state.messages], target=gold.value, breakdown=state.breakdown)
    request = Request(messages=state.messages, generation=config.generation, target="model", task=state.task,
                      doc_id=doc.doc_id, position=0, meta={"answer_space": state.answer_space})
    (reply,) = yield [request]
    sample.add_reply(reply)
    if not reply.ok:
        sample.add_failure(reply.error or "request failed", reply.kind)
        sample.metrics = {name: None for name in state.metric_fns}
        return sample
    response = reply.text or ""
    if config.judge is None or not ctx.has_judge or ctx.predict_only:
        parsed = state.parser(response, doc.record)
        sample.parsed, sample.unparsed = parsed, int(parsed is None)
        sample.read_by = "rule" if parsed is not None else None
        sample.metrics = dict(state.score(parsed, gold.scored))
        return sample
    # step 1: extract_answer_s1.py create_test_prompt (judge.prompt_file, then judge.prompt)
    step1 = judge_request(state, position=0, response=trunk_response(response, args.trunk_response))
    (extracted,) = yield from ask_judge([step1], _extraction, config.judge.retries)
    sample.judge.append(extracted.to_json())
    if not extracted.ok:
        sample.judge_failures += 1
        sample.metrics = {name: None for name in state.metric_fns}
        return sample
    assert extracted.fields is not None
    extraction = str(extracted.fields["extraction"])
    sample.parsed = extraction
    sample.read_by = "judge"
    # step 2: score_answer_s2.py create_test_prompt (demo_prompt_score.strip().format(...))
    question = str(doc.record.get(args.question_field) or "")
    text = _prompt_file(state, args.score_prompt_file) + state.render(
        args.score_prompt, "protocol_args.score_prompt", question=question, answer=str(gold.value), extraction=extraction)
    step2 = Request(messages=(Message.text("user", text),), generation=config.judge.generation, target="judge",
                    task=state.task, doc_id=doc.doc_id, position=1,
                    meta={"answer_space": {"kind": "choice", "choices": ["0", "1"]}})
    (judged,) = yield from ask_judge([step2], _judgement, config.judge.retries)
    sample.judge.append(judged.to_json())
    if not judged.ok:
        sample.judge_failures += 1
        sample.metrics = {name: None for name in state.metric_fns}
        return sample
    assert judged.fields is not None
    sample.extra["judgement"] = judged.fields["judgement"]
    sample.metrics = {name: 100.0 * judged.fields["judgement"] for name in state.metric_fns}
    return sample
