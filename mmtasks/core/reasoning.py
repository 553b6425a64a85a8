"""A thinking model's reasoning, split from its answer before any parser, metric or judge reads
the reply.

Two sources, joined when both are present:

- the reply's own reasoning field (``reasoning_content`` / ``reasoning`` of an OpenAI-compatible
  reply: vLLM's reasoning parsers, DeepSeek's API), which a backend puts in ``Reply.reasoning``;
- blocks between tags in the reply text, :data:`DEFAULT_TAGS` (``<think>``/``</think>``) unless the
  model or preset names others (``reasoning_tags``). A reply may start inside a block whose
  opening tag the chat template wrote (Qwen3 and DeepSeek-R1 templates end the prompt with
  ``<think>``): a closing tag with no opening tag before it closes such a block, and a backend
  that renders the template itself (``hf``, ``vllm``) marks the reply ``starts_in_reasoning`` when
  the prompt ends with the opening tag (``reasoning_starts_open=true`` says so for a server).

A reply whose reasoning never closed, or whose answer is empty after its reasoning (or empty at
the token limit), has no answer: it is a failed reply whose error starts with :data:`TRUNCATED`
(the ``truncated`` failure kind), counted in problems and coverage and never scored.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from mmtasks.core.request import FailureKind, Reply

#: how the error of a reply with no answer after its reasoning starts (the failure kind's name)
TRUNCATED = "truncated"
#: the tags a reasoning block is written in unless a model or preset names others
DEFAULT_TAGS = ("<think>", "</think>")
#: the finish reason of a reply stopped at ``max_new_tokens`` (OpenAI's, vLLM's and ours)
LENGTH = "length"


class ReasoningFormat(BaseModel):
    """How a model writes its reasoning (``reasoning_tags`` / ``reasoning_starts_open`` model args,
    or a preset's ``reasoning:`` block)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tags: tuple[str, str] | None = DEFAULT_TAGS
    """Opening and closing tag of a reasoning block; None: the reply text is never split (a
    reasoning field the server sends is still kept apart)."""
    starts_open: bool = False
    """Every reply starts inside a reasoning block (the chat template, on a server, wrote the
    opening tag): a reply without the closing tag is reasoning that never closed. Not applied to
    a reply that came with a reasoning field (the server split it already)."""

    @field_validator("tags", mode="before")
    @classmethod
    def _tags(cls, value: Any) -> Any:
        if value is None or value is False or (isinstance(value, str) and value.lower() in ("none", "off", "false")):
            return None
        if isinstance(value, (list, tuple)):
            if len(value) != 2 or not all(isinstance(t, str) and t.strip() for t in value):
                raise ValueError('expected two non-empty tags, e.g. ["<think>", "</think>"]')
            return tuple(value)
        raise ValueError('expected a list of two tags (["<think>", "</think>"]) or none')

    @model_validator(mode="after")
    def _open_needs_tags(self) -> "ReasoningFormat":
        if self.starts_open and self.tags is None:
            raise ValueError("reasoning_starts_open needs reasoning_tags (the closing tag ends the block)")
        return self


#: the model args read into a :class:`ReasoningFormat` (never passed to a backend)
REASONING_ARGS = {"reasoning_tags": "tags", "reasoning_starts_open": "starts_open"}


@dataclasses.dataclass(frozen=True)
class Split:
    """A reply text cut into its reasoning and its answer."""

    answer: str
    reasoning: str | None
    #: a reasoning block was opened and never closed
    unclosed: bool = False


def split_text(text: str, fmt: ReasoningFormat, starts_open: bool = False) -> Split:
    """Cut ``text`` into reasoning blocks and the answer around them (see the module's docstring);
    ``starts_open``: the text starts inside a block (its opening tag is in the prompt)."""
    if fmt.tags is None:
        return Split(answer=text, reasoning=None)
    open_tag, close_tag = fmt.tags
    first_close, first_open = text.find(close_tag), text.find(open_tag)
    if starts_open and not text.lstrip().startswith(open_tag):
        text = open_tag + text  # the template wrote the opening tag
    elif first_close >= 0 and (first_open < 0 or first_open > first_close):
        text = open_tag + text  # a closing tag with no opening one: the block began in the prompt
    # Linear on any reply, in C: every opening tag before the last closing tag closes (at the first
    # closing tag after it), so one split by the block pattern cuts that part, and what follows
    # the last closing tag holds at most one (unclosed) block. A reply of a million blocks used to
    # copy the rest of itself at each one; a lazy pattern over the whole reply would read to its
    # end again from every unclosed opening tag.
    last = text.rfind(close_tag)
    cut = last + len(close_tag) if last >= 0 else 0
    pieces = re.split(re.escape(open_tag) + "(.*?)" + re.escape(close_tag), text[:cut], flags=re.DOTALL) if cut else [""]
    answer = pieces[0::2]
    parts = list(map(str.strip, pieces[1::2]))
    tail = text[cut:]
    start = tail.find(open_tag)
    if start >= 0:
        answer.append(tail[:start])
        parts.append(tail[start + len(open_tag):].strip())
        return Split(answer="".join(answer).strip(), reasoning="\n\n".join(filter(None, parts)), unclosed=True)
    if not parts:
        return Split(answer=text, reasoning=None)
    answer.append(tail)
    return Split(answer="".join(answer).strip(), reasoning="\n\n".join(filter(None, parts)))


def split_reply(reply: Reply, fmt: ReasoningFormat | None, max_new_tokens: int | None = None) -> Reply:
    """The reply as parsers, metrics and judges see it: its answer in ``text``, its reasoning in
    ``reasoning``; a failed ``truncated`` reply when no answer is left (see the module's docstring).
    Failed replies and replies already split pass through."""
    if not reply.ok or reply.split:
        return reply
    fmt = fmt or ReasoningFormat()
    # a server that sent a reasoning field split the reply itself: its content starts in no block
    opened = reply.starts_in_reasoning or (fmt.starts_open and reply.reasoning is None)
    cut = split_text(reply.text or "", fmt, opened)
    reasoning = "\n\n".join(r for r in (reply.reasoning, cut.reasoning) if r) or None
    if cut.reasoning is None and reply.reasoning is None:
        answer = reply.text or ""
    else:
        answer = cut.answer
    at_limit = reply.finish_reason == LENGTH
    limit = f" (max_new_tokens={max_new_tokens})" if max_new_tokens else ""
    why = None
    if cut.unclosed:
        closing = fmt.tags[1] if fmt.tags else "the closing tag"
        why = f"the reasoning never closed (no {closing})" + (f"; the reply hit the token limit{limit}" if at_limit else "")
    elif reasoning is not None and not answer.strip():
        why = "the answer is empty after the reasoning" + (f"; the reply hit the token limit{limit}" if at_limit else "")
    elif at_limit and not answer.strip():
        why = f"the reply is empty at the token limit{limit}"
    if why is not None:
        return dataclasses.replace(reply, text=None, error=f"{TRUNCATED}: {why}", reasoning=reasoning, split=True,
                                   failure_kind=FailureKind.TRUNCATED)
    return dataclasses.replace(reply, text=answer, reasoning=reasoning, split=True)


def opens_reasoning(prompt: str, fmt: ReasoningFormat | None) -> bool:
    """Whether a rendered prompt ends inside a reasoning block: its last opening tag comes after its
    last closing tag (a chat template that starts the reply with ``<think>``). For the backends
    that render the template themselves (``hf``, ``vllm``)."""
    tags = (fmt or ReasoningFormat()).tags
    if tags is None:
        return False
    opened = prompt.rfind(tags[0])
    return opened >= 0 and opened > prompt.rfind(tags[1])


def is_truncated(error: str | None) -> bool:
    """Whether a failure's error is the ``truncated`` kind (a protocol may prefix ``turn 3: ``)."""
    return bool(error) and f"{TRUNCATED}:" in str(error)
