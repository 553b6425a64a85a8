"""The preflight: every mistake in the tasks and their data found before any model or judge is
built, all of them at once.

``mmtasks check --tasks ...`` runs it on its own, and every run runs it first. It

- loads every selected task (each name resolved, every setting checked: :class:`~mmtasks.task.Task`);
- reads every selected document through the loader the run uses, checking each record
  against its schema and every image from its header (exists, a regular file inside the data
  root, a header that decodes, within the pixel budget; no pixel is decoded);
- renders every breakdown and answer-space template of each document, and runs each
  document's dialogue through its protocol, as the run will, with the ``random`` baseline
  standing in for the model, the judge and the note taker (valid placeholder replies): so
  every prompt and judge template is rendered, every target is checked against its answer
  space and every protocol reads its own fields, by the same code the run uses - a new
  protocol, parser or template variable is covered without a line here.

Problems are collected, not raised one by one: the result is one
:class:`~mmtasks.errors.Problems` with a line per problem (``file:line, document 'id',
field 'f': message``), grouped and capped with a count.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mmtasks.config.task_registry import TaskRegistry
from mmtasks.core.request import GenerationConfig, Reply
from mmtasks.core.sample import Dialogue
from mmtasks.dialogues.protocols import DialogueContext
from mmtasks.documents.dataset import Scan, scan_documents
from mmtasks.documents.paths import data_root
from mmtasks.errors import ConfigError, MmtasksError, Problems
from mmtasks.models.base import ModelContext, ModelSpec
from mmtasks.models.random_model import RandomModel
from mmtasks.task import ImageMode, Task, n_source_images

Report = Callable[[MmtasksError], None]


@dataclass
class CheckedTasks:
    """What the preflight found to be ready: the tasks, their groups, and a count of each task's data."""

    tasks: list[Task]
    groups: dict[str, list[str]]
    scans: dict[str, Scan]
    #: how many documents were checked, and in how many seconds
    documents: int = 0
    seconds: float = 0.0
    problems: list[tuple[str | None, MmtasksError]] = field(default_factory=list)


def load_tasks(names: Sequence[str], include_paths: Sequence[Path] = (), *, image_mode: ImageMode = "separate",
               protocol_overrides: dict[str, Any] | None = None, generation: dict[str, Any] | None = None,
               report: Callable[[str | None, MmtasksError], None] | None = None) -> tuple[list[Task], dict[str, list[str]]]:
    """Resolve ``names`` (tasks and groups) and build each task (every name it uses resolved and
    its settings checked). With ``report``, a task that does not load is reported and left out
    (the others are still checked); without, its error is raised.

    ``generation``: run-level overrides of the model's generation settings (``--gen-kwargs``)."""
    registry = TaskRegistry.discover(include_paths)
    resolved = registry.resolve(names)
    tasks = []
    for name in resolved:
        try:
            config, path = registry.load(name)
            if generation:
                config = config.model_copy(update={"generation": override_generation(config.generation, generation)})
            # Building the Task resolves every name it uses and checks its settings: before any model loads.
            tasks.append(Task(config, path, image_mode=image_mode, protocol_overrides=dict(protocol_overrides or {}),
                              roots=(registry.root(name), *registry.dirs)))
        except MmtasksError as exc:
            if report is None:
                raise
            report(name, exc)
    groups = {g: members for g, members in registry.groups.items() if any(t in resolved for t in members)}
    return tasks, groups


def override_generation(base: GenerationConfig, overrides: dict[str, Any]) -> GenerationConfig:
    """``base`` with the ``--gen-kwargs`` settings; an unknown name gets a "did you mean"."""
    import difflib

    from pydantic import ValidationError

    known = list(GenerationConfig.model_fields)
    for key in overrides:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            raise ConfigError(f"unknown generation setting {key!r}", field="--gen-kwargs",
                              hint=f"did you mean {close[0]!r}?" if close else "settings: " + ", ".join(known))
    try:
        return GenerationConfig.model_validate({**base.model_dump(), **overrides})
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ConfigError(f"{err['loc'][0]}: {err['msg']}", field="--gen-kwargs") from None


def check_task(task: Task, root: Path | None, report: Report, *, limit: int | None = None,
               ctx: DialogueContext | None = None, stand_in: RandomModel | None = None) -> tuple[Scan, int]:
    """Check every document of ``task`` (the first ``limit``); problems go to ``report``.
    Returns the count of its data (as :func:`~mmtasks.documents.dataset.scan_documents` gives it)
    and the number of documents read."""
    ctx = ctx or DialogueContext(has_judge=task.config.judge is not None)
    stand_in = stand_in or _stand_in()
    # The dialogues run on a copy of the task without its metric functions: they score replies,
    # and the stand-in's replies are not worth scoring (nor worth loading a tokenizer for).
    unscored = copy.copy(task)
    unscored.metric_fns = {}
    count = records = max_images = 0
    found = 0

    def counted(problem: MmtasksError) -> None:
        nonlocal found
        found += 1
        report(problem)

    try:
        for doc in task.documents(root, limit, report=counted):
            count += 1
            max_images = max(max_images, n_source_images(doc))
            try:
                _drive(task.protocol.run(unscored, doc, ctx), stand_in)
            except MmtasksError as exc:
                counted(exc)
                # The dialogue stopped at its first problem: the templates every protocol renders
                # (breakdowns, the answer space) are rendered on their own for the others.
                seen = {exc.render()}
                for step in (task.breakdown_values, task.answer_space):
                    try:
                        step(doc)
                    except MmtasksError as more:
                        if more.render() not in seen:
                            seen.add(more.render())
                            counted(more)
        records = count
        if limit is not None and not found:
            return scan_documents(task.config, root, limit=limit, task_file=task.file, adapter=task.adapter), records
    except MmtasksError as exc:  # the source itself: no data file, no data directory, a dataset that does not load
        counted(exc)
    return Scan(count=count, total=count, max_images=max_images), records


def _stand_in() -> RandomModel:
    return RandomModel(ModelSpec(backend="random"), ModelContext(seed=0))


def _drive(dialogue: Dialogue, stand_in: RandomModel) -> None:
    """Run a dialogue to its end, every request (model, judge, note taker) answered by ``stand_in``."""
    try:
        requests = next(dialogue)
        while True:
            requests = dialogue.send([Reply(text=stand_in.answer(r)) for r in requests])
    except StopIteration:
        return


def preflight(names: Sequence[str], *, include_paths: Sequence[Path] = (), data_dir: str | Path | None = None,
              limit: int | None = None, image_mode: ImageMode = "separate", protocol_overrides: dict[str, Any] | None = None,
              generation: dict[str, Any] | None = None, notetaking: bool = False) -> CheckedTasks:
    """Load the tasks and check all their documents; raise :class:`Problems` naming every problem found."""
    started = time.perf_counter()
    problems: list[tuple[str | None, MmtasksError]] = []

    def add(name: str | None, exc: MmtasksError) -> None:
        if isinstance(exc, Problems):  # a task file with several problems
            problems.extend((name, p) for _, p in exc.problems)
        else:
            problems.append((name, exc))

    tasks, groups = load_tasks(names, include_paths, image_mode=image_mode, protocol_overrides=protocol_overrides,
                               generation=generation, report=add)
    root = data_root(data_dir)
    scans: dict[str, Scan] = {}
    documents = 0
    stand_in = _stand_in()
    for task in tasks:
        ctx = DialogueContext(has_judge=task.config.judge is not None, notetaking=notetaking)
        scans[task.name], n = check_task(task, root, lambda exc, name=task.name: add(name, exc),
                                         limit=limit, ctx=ctx, stand_in=stand_in)
        documents += n
    if problems:
        raise Problems(problems)
    return CheckedTasks(tasks=tasks, groups=groups, scans=scans, documents=documents, seconds=time.perf_counter() - started)
