"""What a plugin imports: the decorators that register extensions, and the types they see.

A plugin is a Python file listed in a task's ``plugins:`` (see README "Adding a
benchmark") or a module of an installed package named by an entry point in the
group ``mmtasks``. Both register with the same decorators::

    from mmtasks.plugin import metric, parser

    @parser("last_int")
    def last_int(text: str) -> int | None: ...

Each decorator registers in one of the registries of :mod:`mmtasks.registry` and
returns the decorated object unchanged.
"""

from __future__ import annotations

from pathlib import Path

from mmtasks.core.request import Reply, Request
from mmtasks.core.sample import Dialogue, Sample
from mmtasks.dialogues.protocols import DialogueContext, ProtocolSpec, protocol
from mmtasks.registry import adapters, backends, metrics, parsers, task_folders, transforms, verdict_parsers
from mmtasks.scoring.aggregation import AggregatorSpec, TaskResult, aggregator

#: ``@parser("name")``: reply text -> the compared value (None: unparsed, which may re-ask)
parser = parsers.register
#: ``@metric("name")``: ``(parsed, target, doc record) -> float | None`` per sample
metric = metrics.register
#: ``@verdict_parser("name")``: judge reply text -> the verdict's fields (None: not a verdict)
verdict_parser = verdict_parsers.register
#: ``@transform("name")``: ``(doc, TransformConfig) -> Document``
transform = transforms.register
#: ``@adapter("name")``: a source record -> the record in the local format
adapter = adapters.register
#: ``@backend("name")``: a ChatModel subclass (or ``backends.register_lazy(name, "module:Class")``)
backend = backends.register


def task_folder(name: str, path: str | Path) -> None:
    """Contribute a folder of task YAML (an installed package's benchmarks): ``mmtasks tasks``
    lists them and ``--tasks`` finds them, as if the folder were passed with ``--include-path``."""
    task_folders.register(name, Path(path).resolve())


__all__ = [
    "AggregatorSpec", "Dialogue", "DialogueContext", "ProtocolSpec", "Reply", "Request", "Sample", "TaskResult",
    "adapter", "aggregator", "backend", "metric", "parser", "protocol", "task_folder", "transform", "verdict_parser",
]
