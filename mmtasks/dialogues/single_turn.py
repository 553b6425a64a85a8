"""Single turn (RealBench): one user message, parse the reply, re-ask while it cannot be parsed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mmtasks.dialogues.protocols import DialogueContext, protocol
from mmtasks.core.sample import Dialogue, Sample
from mmtasks.core.request import Request

if TYPE_CHECKING:
    from mmtasks.documents.dataset import Document
    from mmtasks.task import Task


@protocol("single_turn", supports_combined_images=True)
def single_turn(task: "Task", doc: "Document", ctx: DialogueContext) -> Dialogue:
    messages = task.initial_messages(doc)
    target = task.target(doc)
    sample = Sample(
        task=task.name, doc_id=doc.doc_id, doc_index=doc.index,
        prompt=[m.to_json() for m in messages], target=target,
        breakdown=task.breakdown_values(doc),
    )
    space = task.answer_space(doc)
    parsed = None
    for attempt in range(task.config.answer.retries + 1):
        request = Request(
            messages=messages, generation=task.config.generation, target="model", attempt=attempt,
            task=task.name, doc_id=doc.doc_id, position=attempt, meta={"answer_space": space},
        )
        (reply,) = yield [request]
        sample.responses.append(reply.text)
        if not reply.ok:
            sample.failures.append(reply.error or "request failed")
            break
        parsed = task.parser(reply.text or "")
        if parsed is not None:
            break
    sample.parsed = parsed
    if sample.failures:
        # A failed request is never scored as an answer.
        sample.metrics = {name: None for name in task.metric_fns}
    else:
        sample.unparsed = parsed is None
        sample.metrics = task.score(parsed, target, doc)
    return sample
