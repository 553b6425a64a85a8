"""The plugin of the plugin-API page (docs/authors/plugin-api.md): a protocol that asks each
question, then asks once more whether the model is sure, and an aggregator that reports how often
the second answer differs from the first."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from mmtasks.plugin import (DialogueContext, Dialogue, DocumentState, Message, Request, Sample, TaskResult,
                            TaskScoring, aggregator, protocol)
from mmtasks.scoring.aggregation import per_sample_mean


class AskAgainArgs(BaseModel):
    """``protocol_args`` of an ask_again task (unknown keys are errors)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    follow_up: str = "Are you sure? Answer again."


@protocol("ask_again", args=AskAgainArgs)
def ask_again(state: DocumentState, ctx: DialogueContext) -> Dialogue:
    args = state.args
    assert isinstance(args, AskAgainArgs)
    doc, target = state.doc, state.gold.scored
    messages = list(state.messages)  # the system message, the question rendered by prompt.user
    sample = Sample(task=state.task, doc_id=doc.doc_id, doc_index=doc.index, target=state.target,
                    prompt=[m.to_json() for m in messages], breakdown=state.breakdown)
    turns: list[dict[str, Any]] = []
    for k in range(2):
        request = Request(messages=tuple(messages), generation=state.config.generation, target="model",
                          task=state.task, doc_id=doc.doc_id, position=k,
                          meta={"answer_space": state.answer_space})
        (reply,) = yield [request]  # one wave: every document's turn k goes out together
        sample.add_reply(reply)
        if not reply.ok:  # a failed request is counted, never scored as an answer
            sample.add_failure(f"turn {k + 1}: {reply.error or 'request failed'}", reply.kind)
            sample.metrics = {"acc": None, "first_acc": None}
            break
        parsed = state.parser(reply.text or "", doc.record)
        turns.append({"turn": k + 1, "response": reply.text, "parsed": parsed,
                      "metrics": state.score(parsed, target)})
        messages += [Message.text("assistant", reply.text or ""), Message.text("user", args.follow_up)]
    else:
        sample.parsed = turns[-1]["parsed"]
        sample.unparsed = int(sample.parsed is None)
        # .get: the preflight drives the protocol without metric functions (state.metric_fns is empty)
        sample.metrics = {"acc": turns[-1]["metrics"].get("acc"), "first_acc": turns[0]["metrics"].get("acc")}
    sample.extra["turns"] = turns
    return sample


@aggregator("first_vs_final", emits=lambda config: ["acc", "first_acc", "changed"])
def first_vs_final(task: TaskScoring, samples: Sequence[Sample], seed: int) -> TaskResult:
    """``acc`` and ``first_acc`` as ``per_sample_mean`` gives them; ``changed``: the percentage of
    the documents answered twice whose second reading differs from the first."""
    result = per_sample_mean(task, samples, seed)
    both = [s.extra["turns"] for s in samples if len(s.extra.get("turns", [])) == 2]
    changed = [100.0 if turns[0]["parsed"] != turns[1]["parsed"] else 0.0 for turns in both]
    result.metrics["changed"] = sum(changed) / len(changed) if changed else None
    result.higher_is_better["changed"] = False
    result.counts["answered_twice"] = len(both)
    return result
