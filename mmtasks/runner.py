"""One evaluation run: resolve tasks and models, schedule every dialogue, write
samples as they finish, aggregate, write results.json."""

from __future__ import annotations

import contextlib
import copy
import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mmtasks import distributed
from mmtasks.cache.response_cache import ResponseCache, default_cache_dir
from mmtasks.config.run_config import RunConfig
from mmtasks.config.task_registry import TaskRegistry
from mmtasks.dialogues.protocols import DialogueContext
from mmtasks.core.sample import Dialogue, Sample
from mmtasks.documents.dataset import scan_documents
from mmtasks.documents.paths import data_root
from mmtasks.errors import ConfigError, MmtasksError
from mmtasks.models.base import ChatModel, ModelContext, ModelSpec, load_model, parse_model_spec
from mmtasks.progress import Progress
from mmtasks.results.files import OutputError, SamplesFile, SamplesWriter, claim_output_folder, run_fingerprint
from mmtasks.results.results_json import build_results, write_results
from mmtasks.core.request import Target
from mmtasks.scheduling.scheduler import Scheduler
from mmtasks.scoring import rouge
from mmtasks.scoring.aggregation import TaskResult, aggregate
from mmtasks.task import Task

log = logging.getLogger("mmtasks")

BOOTSTRAP_SEED = 1234


@dataclass
class RunOutcome:
    results: dict[str, Any]
    #: per task, in document order: slim samples (scores, failures, breakdown labels; see
    #: Sample.slim), read back from the samples file when the run wrote one
    samples: dict[str, Sequence[Sample]] = field(default_factory=dict)
    #: False on the other ranks of a data parallel run: rank 0 holds the results
    is_main: bool = True


def prepare_tasks(run: RunConfig) -> tuple[list[Task], dict[str, list[str]]]:
    registry = TaskRegistry.discover(run.include_paths)
    names = registry.resolve(run.tasks)
    overrides = {k: v for k, v in {"history": run.history, "probe": run.probe, "truncate": run.truncate}.items() if v is not None}
    tasks = []
    for name in names:
        # Building the Task resolves every name it uses and checks its settings: before any model loads.
        config, path = registry.load(name)
        tasks.append(Task(config, path, image_mode=run.image_mode, protocol_overrides=overrides,
                          roots=(registry.root(name), *registry.dirs)))
    groups = {g: members for g, members in registry.groups.items() if any(t in names for t in members)}
    return tasks, groups


#: the command-line flags naming each component's spec and args (errors name the one at fault)
COMPONENT_FLAGS: dict[str, tuple[str, str]] = {
    "model": ("--model", "--model-args"),
    "judge": ("--judge", "--judge-args"),
    "notetaker": ("--notetaker", "--notetaker-args"),
}
LOCAL_JUDGE_HINT = "e.g. a local OpenAI-compatible server: --judge openai:NAME --judge-args base_url=http://127.0.0.1:8000/v1"


def for_component(exc: MmtasksError, role: str, spec: str | None = None, origin: str | None = None) -> MmtasksError:
    """``exc`` (raised by a backend, which only knows ``--model``/``--model-args``) relabelled
    for the judge or note taker: its field names that component's flag, its message names the
    component, its spec and where the spec came from (a task's default judge)."""
    if role == "model":
        return exc
    spec_flag, args_flag = COMPONENT_FLAGS[role]
    out = copy.copy(exc)
    out.field = args_flag if exc.field and exc.field.endswith("-args") else spec_flag
    who = f"{role} {spec}" if spec else role
    if origin:
        who += f" ({origin})"
    out.message = f"{who}: {exc.message}"
    if role == "judge":
        extra = f"choose the judge with --judge SPEC, {LOCAL_JUDGE_HINT}" if origin else None
        if extra:
            out.hint = f"{exc.hint}; {extra}" if exc.hint else extra
    out.args = (out.render(),)
    return out


def _judge_spec(run: RunConfig, tasks: list[Task]) -> tuple[ModelSpec, str | None] | None:
    """The judge and, when it is a task's default rather than --judge, where it came from."""
    judged = [t for t in tasks if t.config.judge is not None]
    if not judged or run.predict_only:
        return None
    origin = None
    spec = run.judge
    if spec is None:
        defaults = {t.name: t.config.judge.default_model for t in judged if t.config.judge and t.config.judge.default_model}
        if defaults:
            first = next(iter(defaults))
            spec, origin = defaults[first], f"the default judge of task {first!r}"
            others = sorted({f"{m} ({t})" for t, m in defaults.items() if m != spec})
            if others:  # one judge serves the run (said once it loaded: an error stays one line)
                origin += "; tasks whose own default differs: " + ", ".join(others)
    if spec is None:
        raise ConfigError(f"task {judged[0].name!r} needs a judge model", field="--judge",
                          hint=f"pass --judge SPEC ({LOCAL_JUDGE_HINT}) or --predict-only")
    try:
        return parse_model_spec(spec, run.judge_args), origin
    except MmtasksError as exc:
        raise for_component(exc, "judge", spec, origin) from None


def _load_component(role: str, spec: ModelSpec, context: ModelContext, ranks: distributed.Ranks,
                    origin: str | None = None) -> ChatModel:
    """Load and check one model; its errors name the component (``--judge-args`` ...)."""
    try:
        model = load_model(distributed.place(spec, ranks), context)
    except MmtasksError as exc:
        raise for_component(exc, role, spec.display, origin) from None
    try:
        model.check_ready()
    except MmtasksError as exc:
        model.close()
        raise for_component(exc, role, spec.display, origin) from None
    return model


def evaluate(run: RunConfig) -> RunOutcome:
    """Run ``run``; under torchrun/accelerate launch, this rank's share of it (see :mod:`mmtasks.distributed`)."""
    started = time.perf_counter()
    ranks = distributed.ranks_from_env()
    distributed.quiet_unless_main(ranks)
    with distributed.process_group(ranks):
        return _evaluate(run, ranks, started)


def _evaluate(run: RunConfig, ranks: distributed.Ranks, started: float) -> RunOutcome:
    tasks, groups = prepare_tasks(run)
    root = data_root(run.data_dir)
    # Check data before any model is loaded: a missing file costs nothing.
    scans = {t.name: scan_documents(t.config, root, limit=run.limit, task_file=t.file, adapter=t.adapter) for t in tasks}
    max_images = max((s.max_images for s in scans.values()), default=1)
    context = ModelContext(seed=run.seed, batch_size=run.batch_size, max_images_per_request=max(1, max_images), verbose=run.verbose)

    model_spec = parse_model_spec(run.model, run.model_args)
    judged = _judge_spec(run, tasks)
    judge_spec = judged[0] if judged is not None else None
    notetaker_spec = None
    if run.strategy == "notetaking" and run.notetaker:
        try:
            notetaker_spec = parse_model_spec(run.notetaker, run.notetaker_args)
        except MmtasksError as exc:
            raise for_component(exc, "notetaker", run.notetaker) from None
    models: dict[Target, ChatModel] = {}
    with contextlib.ExitStack() as stack:
        if run.output_path is not None and ranks.is_main:
            # The output folder is claimed before any model is loaded: in use or another run's is one line.
            _check_not_replaying_into(run.output_path, [s for s in (model_spec, judge_spec) if s is not None])
            stack.enter_context(claim_output_folder(
                run.output_path, run_fingerprint(_identity(run, tasks, model_spec, judge_spec)),
                {"model": model_spec.display, "tasks": ",".join(t.name for t in tasks)}, overwrite=run.overwrite))
        if run.use_cache:
            ResponseCache(run.cache_dir or default_cache_dir()).close()  # a corrupt or unwritable cache: one line, before any model
        stack.callback(_close_models, models)
        if judged is not None:
            judge_spec, origin = judged
            # The judge is checked before any model time is spent.
            models["judge"] = _load_component("judge", judge_spec, context, ranks, origin)
            if origin:
                log.info("judge: %s (%s; choose the judge with --judge)", judge_spec.display, origin)
        models["model"] = _load_component("model", model_spec, context, ranks)
        if run.strategy == "notetaking":
            if notetaker_spec is not None:
                models["notetaker"] = _load_component("notetaker", notetaker_spec, context, ranks)
            else:
                models["notetaker"] = models["model"]
        return _run(run, tasks, groups, root, scans, models, model_spec, judge_spec, ranks, started)


def _check_not_replaying_into(output: Path, specs: list[ModelSpec]) -> None:
    """``replay:OUT`` into ``--output-path OUT`` would replace the samples it reads."""
    for spec in specs:
        if spec.backend == "replay" and Path(spec.name).expanduser().resolve().is_relative_to(output.resolve()):
            raise OutputError(f"replay:{spec.name} reads the samples that this run would write", field="--output-path",
                              hint="write the rescored run to another folder")


def _close_models(models: dict[Target, ChatModel]) -> None:
    for m in {id(m): m for m in models.values()}.values():
        m.close()


def _identity(run: RunConfig, tasks: list[Task], model_spec: ModelSpec, judge_spec: ModelSpec | None) -> dict[str, Any]:
    """What makes two commands the same run (a resume may reuse the folder): tasks, model, judge, settings."""
    return {"tasks": [t.name for t in tasks], "config": run.public(), "model_spec": model_spec.model_dump(),
            "judge_spec": judge_spec.model_dump() if judge_spec is not None else None}


def _run(run: RunConfig, tasks: list[Task], groups: dict[str, list[str]], root: Path | None, scans: dict, models: dict[Target, ChatModel], model_spec: ModelSpec, judge_spec: ModelSpec | None, ranks: distributed.Ranks, started: float) -> RunOutcome:
    cache = ResponseCache(run.cache_dir or default_cache_dir()) if run.use_cache else None
    writer = SamplesWriter(run.output_path / "samples") if run.output_path and ranks.is_main else None
    ctx = DialogueContext(predict_only=run.predict_only, has_judge="judge" in models, notetaking=run.strategy == "notetaking")
    total = sum(s.count for s in scans.values())
    progress = Progress(total=ranks.shard_size(total), enabled=run.progress and ranks.is_main)
    # Full samples are streamed to disk and aggregated from there; without an output
    # folder only their slim score records are kept. A data parallel run keeps full
    # samples in memory: rank 0 writes every rank's samples after the gather.
    keep_full = ranks.active
    by_task: dict[str, list[Sample]] = {t.name: [] for t in tasks}

    def dialogues() -> Iterator[Dialogue]:
        docs = ((task, doc) for task in tasks for doc in task.documents(root, run.limit))
        for task, doc in distributed.shard(docs, ranks):
            yield task.protocol.run(task, doc, ctx)

    def finished(sample: Sample) -> None:
        progress.advance(sample)
        if writer is not None:
            writer.write(sample)

    scheduler = Scheduler(models=models, cache=cache, max_live=run.max_live, on_finish=finished, on_reply=progress.reply)
    if cache is not None:
        rouge.remember_segments(cache.memo("segments"))
    try:
        for sample in scheduler.run(dialogues()):
            if keep_full:
                by_task[sample.task].append(sample)
            elif writer is None:
                by_task[sample.task].append(sample.slim())
    finally:
        progress.close()
        if writer is not None:
            writer.close()
        if cache is not None:
            rouge.remember_segments(None)
            cache.close()

    cached = sum(scheduler.stats.cached.values())
    if cached and ranks.is_main:
        answered = cached + sum(scheduler.stats.sent.values())
        log.info("%d of %d replies came from the response cache (a resumed or repeated run; "
                 "--no-cache sends everything again)", cached, answered)
    stats = {"waves": scheduler.stats.waves, "sent": scheduler.stats.sent, "cached": scheduler.stats.cached,
             "failed": scheduler.stats.failed}
    gathered = distributed.gather(by_task, stats, ranks)
    if gathered is None:
        return RunOutcome(results={}, is_main=False)
    by_task, stats = gathered
    results: dict[str, TaskResult] = {}
    scored: dict[str, Sequence[Sample]] = {}
    for task in tasks:
        if writer is not None and keep_full:
            scored[task.name] = samples = sorted(by_task[task.name], key=lambda s: s.doc_index)
            writer.finish(task.name, samples)
        elif writer is not None:
            scored[task.name] = SamplesFile(writer.finish(task.name))
        else:
            scored[task.name] = sorted(by_task[task.name], key=lambda s: s.doc_index)
        # The bootstrap seed is fixed (not --seed) so that rescoring reproduces stderr exactly.
        results[task.name] = aggregate(task, task.aggregator, scored[task.name], BOOTSTRAP_SEED)
    config = run.public()
    if run.run_name is not None:  # recorded, but not in the resume identity (_identity): a rename is the same run
        config["run_name"] = run.run_name
    config["model_spec"] = model_spec.model_dump()
    if judge_spec is not None:
        config["judge"] = judge_spec.display
        config["judge_spec"] = judge_spec.model_dump()
    # wall-clock seconds from the start of evaluate() (task and model loading included) to the
    # scores (lm-eval's total_evaluation_time_seconds); shown under the results table
    stats["total_evaluation_time_s"] = round(time.perf_counter() - started, 3)
    data = build_results(tasks={t.name: t for t in tasks}, results=results,
                         n_original={n: s.total for n, s in scans.items()}, groups=groups,
                         run_config=config, stats=stats)
    if run.output_path is not None:
        write_results(run.output_path / "results.json", data)
    return RunOutcome(results=data, samples=scored)
