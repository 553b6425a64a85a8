"""The optional LLM answer matcher (``answer.matcher``): when no rule of the task's parser reads
an option in a reply, an LLM is asked which option the reply chose, as the BLINK and MMIU
authors (gpt-3.5-turbo, gpt-4o-mini) and VLMEvalKit do.

It is used only when the run asks for it (``--matcher SPEC``; ``DialogueContext.has_matcher``),
after the re-asks of ``answer.retries``, and before a parser's random fallback counts: a guess
is replaced by the option the matcher reads, and stays when the matcher reads none. Its requests
(``target="matcher"``) go through the scheduler and the response cache like judge calls; its
reply is read by the task's own label rule among the document's options and the matcher's "none"
label (``none_label``, the authors' ``Z``): ``(B)`` or ``B`` is B, ``Z`` (or nothing readable)
leaves the reply unread.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mmtasks.core.conversation import Message, Text
from mmtasks.core.request import Reply, Request
from mmtasks.dialogues.judging import MAX_JUDGED_CHARS
from mmtasks.errors import DataError
from mmtasks.scoring.parsers import Matched, choose_label, choose_letter, is_letter

if TYPE_CHECKING:
    from mmtasks.dialogues.state import DocumentState
    from mmtasks.scoring.variants import BoundVariant


@dataclass
class MatcherCall:
    """What the matcher was asked and said, for ``Sample.extra["matcher"]``."""

    prompt: list[dict[str, Any]]
    reply: str | None = None
    error: str | None = None
    #: the option it read (None: it named none, or its request failed)
    read: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"prompt": self.prompt, "reply": self.reply, "error": self.error, "read": self.read}


def matcher_labels(state: "DocumentState") -> list[str]:
    """The labels the matcher may name for the document: ``answer.matcher.labels`` rendered (a
    JSON list of strings), else the options of the task's parser."""
    matcher = state.config.answer.matcher
    if matcher is None or matcher.labels is None:
        return state.answer_labels()
    rendered = state.render(matcher.labels, "answer.matcher.labels")
    try:
        labels = json.loads(rendered)
    except ValueError:
        labels = None
    if not isinstance(labels, list) or not labels or not all(isinstance(k, str) and k for k in labels):
        raise DataError(f"answer.matcher.labels must render a JSON list of labels, got {rendered[:200]!r}",
                        doc_id=state.doc.doc_id, field="answer.matcher.labels")
    return labels


def matcher_request(state: "DocumentState", prediction: str, *, position: int, variant: "BoundVariant | None" = None) -> Request:
    """The matcher call for one reply: the ``prompt_file`` text (verbatim), then ``prompt``
    rendered with ``question``, ``options`` and ``prediction`` (the reply); text only. ``variant``:
    a scoring variant whose own ``matcher_prompt`` replaces the task's prompt (the rest is the task's)."""
    matcher = state.config.answer.matcher
    if matcher is None:
        raise ValueError(f"task {state.task!r} has no answer matcher")
    own = variant.config.matcher_prompt if variant is not None else None
    if own is None:
        where, prefix, prompt = "answer.matcher", state.matcher_prefix, matcher.prompt
        question, options = (matcher.question, "answer.matcher.question"), (matcher.options, "answer.matcher.options")
    else:
        assert variant is not None
        where, prefix, prompt = f"variants.{variant.name}.matcher_prompt", variant.matcher_prefix, own.prompt
        question = (own.question, f"{where}.question") if own.question is not None else (matcher.question, "answer.matcher.question")
        options = (own.options, f"{where}.options") if own.options is not None else (matcher.options, "answer.matcher.options")
    variables = {
        "question": state.render(*question),
        "options": state.render(*options) if options[0] else "",
        "prediction": prediction,
    }
    text = prefix + (state.render(prompt, f"{where}.prompt", **variables) if prompt else "")
    messages: list[Message] = []
    if matcher.system:
        messages.append(Message.text("system", matcher.system))
    messages.append(Message("user", (Text(text),)))
    space = {"kind": "choice", "choices": [*matcher_labels(state), matcher.none_label]}
    return Request(messages=tuple(messages), generation=matcher.generation, target="matcher",
                   task=state.task, doc_id=state.doc.doc_id, position=position, meta={"answer_space": space})


def read_matcher_reply(text: str, labels: list[str], none_label: str) -> str | None:
    """The option a matcher's reply names among ``labels`` (the first one, by the choice rule:
    ``(B)``, ``B``, ``Your output: B``); None when it names ``none_label`` first, or nothing."""
    every = [*labels, none_label]
    found = choose_letter(text, every) if all(is_letter(k) for k in every) else choose_label(text, every)
    return None if found is None or found == none_label else found


def ask_matcher(state: "DocumentState", prediction: str, *, position: int,
                variant: "BoundVariant | None" = None) -> Generator[list[Request], list[Reply], tuple[Matched | None, MatcherCall]]:
    """Sub-dialogue (use with ``yield from``): ask the matcher once which option ``prediction``
    chose (in ``variant``'s own prompt when it has one); returns the option (a
    :class:`~mmtasks.scoring.parsers.Matched`) or None, and the record of the call. A reply too
    large for a prompt is not sent (:data:`MAX_JUDGED_CHARS`)."""
    matcher = state.config.answer.matcher
    assert matcher is not None
    if len(prediction) > MAX_JUDGED_CHARS:
        return None, MatcherCall(prompt=[], error=f"the reply ({len(prediction):,} characters) is too large for a "
                                                  f"matcher prompt (at most {MAX_JUDGED_CHARS:,}): not asked")
    request = matcher_request(state, prediction, position=position, variant=variant)
    call = MatcherCall(prompt=[m.to_json() for m in request.messages])
    (reply,) = yield [request]
    call.reply = reply.text
    if not reply.ok:
        call.error = reply.error or "matcher request failed"
        return None, call
    found = read_matcher_reply(reply.text or "", matcher_labels(state), matcher.none_label)
    call.read = found
    return (Matched(found) if found is not None else None), call
