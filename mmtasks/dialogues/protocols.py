"""Protocols: how a task turns one document into a dialogue with the model.

A protocol is registered by name (``protocol:`` in the task YAML) as a
:class:`ProtocolSpec`: the function ``(state, ctx) -> Dialogue`` (a generator
of request waves), the pydantic model of its ``protocol_args`` (unknown keys are
errors), and what it can do (use a judge, run on combined images). ``state`` is
the document's :class:`~mmtasks.dialogues.state.DocumentState` (never the task),
``ctx`` the run's :class:`DialogueContext`. The task is checked against the spec
when it loads, before any model is loaded. Built-in and plugin protocols are
registered and called alike (``docs/authors/plugin-api.md``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from mmtasks import registry

from mmtasks.dialogues.state import DocumentState

if TYPE_CHECKING:
    from mmtasks.core.sample import Dialogue


@dataclass(frozen=True)
class DialogueContext:
    """Run settings a protocol needs."""

    #: run the model only; leave judging to a later ``replay:`` run
    predict_only: bool = False
    #: a judge model is configured for this run
    has_judge: bool = False
    #: wrap the model with the note-taking strategy (MMRC)
    notetaking: bool = False
    #: an answer matcher model is configured for this run (``--matcher``): tasks with an
    #: ``answer.matcher`` ask it about replies no rule read
    has_matcher: bool = False


class NoArgs(BaseModel):
    """``protocol_args`` of a protocol that takes none: any key is an error."""

    model_config = ConfigDict(extra="forbid", frozen=True)


#: ``(state, ctx) -> Dialogue``: a generator that yields waves of requests and returns the Sample
ProtocolFn = Callable[[DocumentState, DialogueContext], "Dialogue"]


@dataclass(frozen=True)
class ProtocolSpec:
    """A registered protocol."""

    name: str
    #: ``(state, ctx) -> Dialogue``; it reads its settings from ``state.args``
    run: ProtocolFn
    #: the schema of ``protocol_args`` (``extra="forbid"``); ``state.args`` is an instance
    args: type[BaseModel] = NoArgs
    #: whether the protocol calls the task's ``judge:`` (a judge block on a task whose
    #: protocol does not use one is an error at load)
    uses_judge: bool = False
    #: whether the protocol runs with ``--image-mode combined`` (all images stitched into one)
    supports_combined_images: bool = False
    #: the aggregator of a task that names none (``multi_turn``: ``per_turn_mean``, its unit is the turn)
    default_aggregator: str = "per_sample_mean"
    #: whether the protocol keeps each scored answer and its reference for metrics computed over
    #: the whole corpus (``metrics[].aggregation: corpus``); a task with one is refused at load otherwise
    corpus_metrics: bool = False
    #: whether the protocol starts from ``state.messages`` and so shows the task's
    #: ``fewshot:`` demonstrations (a task with one is refused at load otherwise)
    fewshot: bool = False


def protocol(name: str, *, args: type[BaseModel] = NoArgs, uses_judge: bool = False,
             supports_combined_images: bool = False, default_aggregator: str = "per_sample_mean",
             corpus_metrics: bool = False, fewshot: bool = False) -> Callable[[ProtocolFn], ProtocolFn]:
    """Register the decorated function as protocol ``name`` (a :class:`ProtocolSpec` in
    ``mmtasks.registry.protocols``); the function itself is returned unchanged."""
    if args.model_config.get("extra") != "forbid":
        raise TypeError(f"protocol {name!r}: its args model {args.__name__} must set extra='forbid'")

    def deco(fn: ProtocolFn) -> ProtocolFn:
        registry.protocols.register(name, ProtocolSpec(name=name, run=fn, args=args, uses_judge=uses_judge,
                                                       supports_combined_images=supports_combined_images,
                                                       default_aggregator=default_aggregator, corpus_metrics=corpus_metrics,
                                                       fewshot=fewshot))
        return fn

    return deco
