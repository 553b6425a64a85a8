"""What a plugin imports: the decorators that register extensions, and the types they see.

A plugin is a Python file listed in a task's ``plugins:`` (see docs/authors/tasks.md,
"Plugins") or a module of an installed package named by an entry point in the
group ``mmtasks``. Both register with the same decorators::

    from mmtasks.plugin import metric, parser

    @parser("last_int")
    def last_int(text: str) -> int | None: ...

Each decorator registers in one of the registries of :mod:`mmtasks.registry` and
returns the decorated object unchanged. ``docs/authors/plugin-api.md`` is the reference: a protocol
is called as ``fn(state: DocumentState, ctx: DialogueContext)``, an aggregator as
``fn(task: TaskScoring, samples, seed) -> TaskResult``, a group aggregator (``@group_aggregator``)
as ``fn(group, members: {task: GroupMember}, seed) -> GroupScore``.
"""

from __future__ import annotations

from pathlib import Path

from mmtasks.core.conversation import Image, Message, Text
from mmtasks.core.request import GenerationConfig, Reply, Request
from mmtasks.core.sample import Dialogue, Sample
from mmtasks.dialogues.protocols import DialogueContext, ProtocolSpec, protocol
from mmtasks.dialogues.state import DocumentState
from mmtasks.registry import adapters, backends, metrics, task_folders, transforms
from mmtasks.scoring.aggregation import AggregatorSpec, TaskResult, TaskScoring, aggregator
from mmtasks.scoring.group_aggregation import GroupMember, GroupScore, group_aggregator
from mmtasks.scoring.metrics import corpus_metric, takes_references
from mmtasks.scoring.parsers import ParserArgs, parser
from mmtasks.scoring.verdicts import verdict_parser

# ``@parser("name")``: ``(text, doc record) -> value`` or ``(text) -> value`` (None: unparsed, which
# may re-ask); ``@parser("name", args=Model)``: ``(text, doc record, args)`` with ``answer.parser_args``
# validated by ``Model`` (a ParserArgs) at load. See mmtasks/scoring/parsers.py.
#: ``@metric("name")``: ``(parsed, target, doc record) -> float | None`` per sample
metric = metrics.register
# ``@takes_references("one" | "several")`` under ``@metric``: how many references the metric takes
# (a list target for a "one" metric is a check error). ``@corpus_metric("name")``:
# ``(answers, targets) -> float`` computed once over the task (like corpus_bleu and cider_d).
# ``@verdict_parser("name")``: ``(judge reply text, prompt variables) -> verdict fields`` or
# ``(text) -> fields`` (None: not a verdict); ``args=`` as for parsers (``judge.parser_args``).
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
    "AggregatorSpec", "Dialogue", "DialogueContext", "DocumentState", "GenerationConfig", "GroupMember", "GroupScore",
    "Image", "Message", "ParserArgs",
    "ProtocolSpec", "Reply", "Request", "Sample", "TaskResult", "TaskScoring", "Text",
    "adapter", "aggregator", "backend", "group_aggregator", "corpus_metric", "metric", "parser", "protocol", "takes_references", "task_folder",
    "transform", "verdict_parser",
]
