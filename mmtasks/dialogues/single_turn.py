"""Single turn: one user message, parse the reply, re-ask while it cannot be parsed;
then, for a task with a ``judge`` (and a run with a judge model), judge the answer.

The answer is parsed with the task's parser (``answer.parser``) and scored by its
metric functions (``metrics[].function``). The judge (unless ``--predict-only``)
gets one call per answered document, rendered from ``judge.prompt`` with the
variables ``answer`` (the reply's answer, its reasoning left out), ``parsed`` (the parsed
answer), ``reference`` (the target) and ``reasoning`` (the reasoning split from the reply, ""
when none: a judge sees it only when its prompt names it), beside ``doc``; a reply that is not a verdict is
re-asked ``judge.retries`` times, then counted as a judge failure. The verdict's
fields are kept in ``extra["verdict"]``; those named in ``judge.metrics`` (every
numeric field when it names none), times ``judge.report_factor``, become the
sample's metrics beside the metric functions' - for the default aggregator to
average, or for a task's own aggregator to read.

With ``answer.matcher`` and a run that asks for it (``--matcher``), a reply no rule read
(unparsed, or a random guess) is shown to the LLM answer matcher
(:mod:`mmtasks.dialogues.matching`); ``extra["matcher"]`` records the call and
``extra["without_matcher"]`` the scores of the rule's reading alone. ``Sample.read_by`` says
how the answer was read: ``rule``, ``option_text``, ``matcher`` or ``random``.

The task's scoring variants that read replies again score the last reply too
(:func:`mmtasks.scoring.variants.score_variants`, into ``extra["variants"]``).
"""

from __future__ import annotations

from typing import Any

from mmtasks.core.request import Request
from mmtasks.core.sample import Dialogue, Sample
from mmtasks.dialogues.judging import ask_judge, judge_call, verdict_metrics
from mmtasks.dialogues.matching import ask_matcher
from mmtasks.dialogues.protocols import DialogueContext, protocol
from mmtasks.dialogues.state import DocumentState
from mmtasks.scoring.aggregation import add_corpus_pair
from mmtasks.scoring.parsers import Matched, is_guess, read_by
from mmtasks.scoring.variants import score_variants, variant_reading


@protocol("single_turn", uses_judge=True, supports_combined_images=True, corpus_metrics=True, fewshot=True)
def single_turn(state: DocumentState, ctx: DialogueContext) -> Dialogue:
    doc, config = state.doc, state.config
    gold = state.gold  # first: a target outside the answer space is found even when a prompt fails too
    target = gold.scored  # as the task's parser reads it (the rule check applies), unless the parser says raw
    messages = state.messages
    sample = Sample(
        task=state.task, doc_id=doc.doc_id, doc_index=doc.index,
        prompt=[m.to_json() for m in messages], target=gold.value,
        breakdown=state.breakdown,
    )
    if doc.demonstrations:  # the few-shot demonstrations shown before the question, by id
        sample.extra["fewshot"] = [d.doc_id for d in doc.demonstrations]
    space = state.answer_space
    parsed = None
    for attempt in range(config.answer.retries + 1):
        request = Request(
            messages=messages, generation=config.generation, target="model", attempt=attempt,
            task=state.task, doc_id=doc.doc_id, position=attempt, meta={"answer_space": space},
        )
        (reply,) = yield [request]
        sample.add_reply(reply)
        if not reply.ok:
            sample.add_failure(reply.error or "request failed", reply.kind)
            break
        parsed = state.parser(reply.text or "", doc.record)
        if parsed is not None:
            break
    sample.parsed = parsed
    judged = config.judge is not None
    if sample.failures:
        # A failed request is never scored as an answer, nor judged.
        sample.metrics = {name: None for name in state.metric_fns}
        return sample
    asked: Matched | None = None  # the matcher's reading of this reply, once asked
    called = False
    if (parsed is None or is_guess(parsed)) and ctx.has_matcher and config.answer.matcher is not None:
        # no rule read an option: the LLM answer matcher is asked (a guess stays when it reads none)
        matched, call = yield from ask_matcher(state, sample.responses[-1] or "", position=0)
        asked, called = matched, True
        sample.extra["matcher"] = call.to_json()
        # the rule's reading and its scores, for results.json's accuracy without the matcher
        sample.extra["without_matcher"] = {"read_by": read_by(parsed), "metrics": dict(state.score(parsed, target))}
        if matched is not None:
            parsed = sample.parsed = matched
    sample.read_by = read_by(parsed)
    sample.unparsed = int(parsed is None)
    sample.guessed = int(is_guess(parsed))
    sample.metrics = dict(state.score(parsed, target))
    readings: dict[str, Any] = {}
    own_calls: dict[str, dict[str, Any]] = {}
    if ctx.has_matcher and config.answer.matcher is not None:
        # a variant with matcher: true sends the replies its own parser reads nothing from (once per
        # reply; in its own prompt, when it has one, apart from the task's calls)
        for v in state.variants:
            if not v.config.matcher:
                continue
            reading = variant_reading(v, sample, doc, parsed)
            if reading is None and v.config.matcher_prompt is not None:
                reading, own = yield from ask_matcher(state, sample.responses[-1] or "", position=0, variant=v)
                own_calls[v.name] = own.to_json()
            elif reading is None:
                if not called:
                    asked, call = yield from ask_matcher(state, sample.responses[-1] or "", position=0)
                    called = True
                    sample.extra["matcher"] = call.to_json()
                reading = asked
            readings[v.name] = reading
    score_variants(state.variants, sample, doc, parsed, target, readings, own_calls)
    if state.corpus_metrics and not (parsed is None and config.answer.unparsed == "unscored"):
        add_corpus_pair(sample, parsed, target)
    if judged and ctx.has_judge and not ctx.predict_only:
        judge_request, parse = judge_call(state, position=0, answer=sample.responses[-1] or "", parsed=parsed,
                                          reference=gold.value, reasoning=sample.reasoning[-1] or "")
        assert config.judge is not None
        (verdict,) = yield from ask_judge([judge_request], parse, config.judge.retries)
        sample.judge.append(verdict.to_json())
        sample.extra["verdict"] = verdict.fields
        if verdict.ok:
            assert verdict.fields is not None
            sample.metrics.update(verdict_metrics(state, [verdict.fields]))
        else:
            sample.judge_failures += 1
    return sample
