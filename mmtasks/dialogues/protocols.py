"""The protocol registry: task YAML names a protocol; each is a function
``(task, doc, ctx) -> Dialogue`` (a generator of request waves)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mmtasks.errors import ConfigError

if TYPE_CHECKING:
    from mmtasks.core.sample import Dialogue
    from mmtasks.documents.dataset import Document
    from mmtasks.task import Task


@dataclass(frozen=True)
class DialogueContext:
    """Run settings a protocol needs."""

    #: run the model only; leave judging to a later ``replay:`` run
    predict_only: bool = False
    #: a judge model is configured for this run
    has_judge: bool = False
    #: wrap the model with the note-taking strategy (MMRC)
    notetaking: bool = False


Protocol = Callable[["Task", "Document", DialogueContext], "Dialogue"]
_PROTOCOLS: dict[str, Protocol] = {}


def protocol(name: str) -> Callable[[Protocol], Protocol]:
    def deco(fn: Protocol) -> Protocol:
        _PROTOCOLS[name] = fn
        return fn

    return deco


def get_protocol(name: str) -> Protocol:
    from mmtasks.dialogues import single_turn  # noqa: F401  (registers)

    try:
        from mmtasks.dialogues import multi_turn, replay_probe  # noqa: F401
    except ImportError:
        pass
    if name not in _PROTOCOLS:
        raise ConfigError(f"unknown protocol {name!r}", field="protocol", hint=f"known: {', '.join(sorted(_PROTOCOLS))}")
    return _PROTOCOLS[name]
