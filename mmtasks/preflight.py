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

import functools
import gc
import logging
import multiprocessing
import os
import random
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mmtasks.config.task_config import VideoConfig
from mmtasks.config.task_registry import TaskRegistry
from mmtasks.config.yaml_loader import did_you_mean
from mmtasks.core.request import SAMPLING_SETTINGS, GenerationConfig, Reply, Request
from mmtasks.core.sample import Dialogue, Sample
from mmtasks.dialogues.judging import UNPARSED_VERDICT
from mmtasks.dialogues.protocols import DialogueContext
from mmtasks.dialogues.matching import matcher_request
from mmtasks.documents.dataset import Exclusions, Media, Scan, scan_documents
from mmtasks.documents.paths import data_root
from mmtasks.errors import ConfigError, DataError, MmtasksError, Problems, TemplateError
from mmtasks.models.base import ModelContext, ModelSpec
from mmtasks.models.random_model import RandomModel
from mmtasks.task import ImageMode, Task, n_source_images

Report = Callable[[MmtasksError], None]
log = logging.getLogger(__name__)


@dataclass
class CheckedTasks:
    """What the preflight found to be ready: the tasks, their groups, and a count of each task's data."""

    tasks: list[Task]
    groups: dict[str, list[str]]
    scans: dict[str, Scan]
    #: how many documents were checked, and in how many seconds
    documents: int = 0
    seconds: float = 0.0


def load_tasks(names: Sequence[str], include_paths: Sequence[Path] = (), *, image_mode: ImageMode = "separate",
               protocol_overrides: dict[str, Any] | None = None, generation: dict[str, Any] | None = None,
               system_instruction: str | None = None, report: Callable[[str | None, MmtasksError], None] | None = None,
               video: dict[str, Any] | None = None, num_fewshot: int | None = None) -> tuple[list[Task], dict[str, list[str]]]:
    """Resolve ``names`` (tasks and groups) and build each task (every name it uses resolved and
    its settings checked). With ``report``, a task that does not load is reported (the others are
    still checked) and, when its file validates with the keys in error left out, built from that
    so that its data is checked too (``check`` reports the file's errors and the data's together);
    without, its error is raised.

    ``generation``: run-level overrides of the model's generation settings (``--gen-kwargs``),
    checked once (:func:`check_generation_overrides`) before any task is read. Where they turn
    sampling on for a greedy task, one line says so. ``video``: the frame rule replacing every video
    task's (``--num-frames``, ``--fps``, ``--max-frames``)."""
    if generation:
        check_generation_overrides(generation)
    registry = TaskRegistry.discover(include_paths)
    resolved = registry.resolve(names)
    for name in dict.fromkeys(n.strip() for n in names):
        note = registry.report_note(name)  # a model card's report: the rows mmtasks has not yet, left out
        if note is not None:
            log.warning(note)
    tasks = []
    switched: list[str] = []
    for name in resolved:
        try:
            config, path = registry.load(name)
        except MmtasksError as exc:
            if report is None:
                raise
            report(name, exc)
            # its data is checked all the same, read with the keys in error left out: the file's
            # errors and the data's are reported together (the run never starts with them)
            past = registry.load_past_errors(name)
            if past is None:
                continue
            config, path = past
            try:  # a task that does not build from what is left has no data to check
                tasks.append(Task(config, path, image_mode=image_mode, roots=(registry.root(name), *registry.dirs)))
            except MmtasksError:
                pass
            continue
        try:
            if generation:
                overridden, turned_on = override_generation(config.generation, generation)
                config = config.model_copy(update={"generation": overridden})
                if turned_on:
                    switched.append(name)
            if video and config.dataset.video is not None:
                config = config.model_copy(update={"dataset": config.dataset.model_copy(
                    update={"video": override_video(config.dataset.video, video)})})
            if num_fewshot is not None:
                if config.fewshot is None:
                    raise ConfigError(f"task {name!r} has no fewshot: block, so --num-fewshot has no demonstrations to draw",
                                      file=path, field="--num-fewshot", hint="give the task a fewshot: block, or run it without --num-fewshot")
                config = config.model_copy(update={"fewshot": config.fewshot.model_copy(update={"k": num_fewshot})})
            # Building the Task resolves every name it uses and checks its settings: before any model loads.
            tasks.append(Task(config, path, image_mode=image_mode, protocol_overrides=dict(protocol_overrides or {}),
                              roots=(registry.root(name), *registry.dirs), system_instruction=system_instruction))
        except MmtasksError as exc:
            if report is None:
                raise
            report(name, exc)
    if switched and generation:
        log.info("%s", sampling_note(generation, switched))
    groups = {g: members for g, members in registry.groups.items() if any(t in resolved for t in members)}
    _check_group_aggregators(tasks, groups, report)
    _check_variant_group_means(tasks, groups, report)
    return tasks, groups


def _check_group_aggregators(tasks: Sequence[Task], groups: dict[str, list[str]],
                             report: Callable[[str | None, MmtasksError], None] | None) -> None:
    """Every member of a group that a member names a group aggregator for must name the same one
    (``group_aggregators``): the group's figures come from one rule."""
    by_name = {t.name: t for t in tasks}
    for group, members in groups.items():
        named = {m: by_name[m].config.group_aggregators.get(group) for m in members if m in by_name}
        chosen = {n for n in named.values() if n is not None}
        if not chosen:
            continue
        odd = next((m for m, n in named.items() if n != sorted(chosen)[0]), None)
        if odd is not None:
            exc = ConfigError(f"the members of group {group!r} name different group aggregators "
                              f"({', '.join(f'{m}: {n}' for m, n in named.items())})", file=by_name[odd].file,
                              field=f"group_aggregators.{group}",
                              hint="every member names the same one, or none does")
            if report is None:
                raise exc
            report(odd, exc)


def _check_variant_group_means(tasks: Sequence[Task], groups: dict[str, list[str]],
                               report: Callable[[str | None, MmtasksError], None] | None) -> None:
    """The members of a group that declare the same scoring variant must declare the same
    ``group_mean`` for it: the group's figure for the variant is one rule."""
    by_name = {t.name: t for t in tasks}
    for group, members in groups.items():
        means: dict[str, dict[str, tuple[int, str]]] = {}  # variant -> member -> (index, group_mean)
        for m in members:
            if m in by_name:
                for i, v in enumerate(by_name[m].config.variants):
                    means.setdefault(v.name, {})[m] = (i, v.group_mean)
        for name, declared in means.items():
            first = next(iter(declared.values()))[1]
            odd = next((m for m, (_, mean) in declared.items() if mean != first), None)
            if odd is None:
                continue
            exc = ConfigError(f"the members of group {group!r} combine variant {name!r} differently "
                              f"({', '.join(f'{m}: {mean}' for m, (_, mean) in declared.items())})",
                              file=by_name[odd].file, field=f"variants[{declared[odd][0]}].group_mean",
                              hint="every member declares the same group_mean for it")
            if report is None:
                raise exc
            report(odd, exc)


def override_video(base: VideoConfig, override: dict[str, Any]) -> VideoConfig:
    """``base`` with the command line's frame rule: ``num_frames`` (uniform, the task's ``sampling``
    kept) or ``fps`` with ``max_frames`` (given, else the task's own)."""
    if "num_frames" in override and "fps" in override:
        raise ConfigError("give --num-frames or --fps, not both", field="--num-frames")
    if "num_frames" in override:
        if "max_frames" in override:
            raise ConfigError("--max-frames caps --fps; with --num-frames, that is the count", field="--max-frames")
        return base.model_copy(update={"num_frames": override["num_frames"], "fps": None, "max_frames": None})
    if "fps" in override:
        cap = override.get("max_frames", base.max_frames)
        if cap is None:
            raise ConfigError("--fps needs --max-frames (this task samples by count, so it has no cap of its own)",
                              field="--max-frames")
        return base.model_copy(update={"fps": override["fps"], "max_frames": cap, "num_frames": None})
    if base.fps is None:
        raise ConfigError("--max-frames caps --fps (or a task sampling by fps)", field="--max-frames")
    return base.model_copy(update={"max_frames": override["max_frames"]})


def check_generation_overrides(overrides: dict[str, Any]) -> None:
    """Every ``--gen-kwargs`` setting known and in its range (one line naming ``--gen-kwargs``):
    ``max_new_tokens=-5``, ``temperature=nan`` or ``top_p=inf`` never reach a model."""
    from pydantic import ValidationError

    known = list(GenerationConfig.model_fields)
    for key, value in overrides.items():
        if key not in known:
            raise ConfigError(f"unknown generation setting {key!r}", field="--gen-kwargs", hint=did_you_mean(key, known, "settings"))
        try:
            GenerationConfig.model_validate({key: value})
        except ValidationError as exc:
            err = exc.errors()[0]
            message = str(err["msg"]).removeprefix("Value error, ")
            raise ConfigError(f"{key}={value!r}: {message[0].lower()}{message[1:]}", field="--gen-kwargs") from None


def _samples(key: str, value: Any) -> bool:
    """Whether ``key=value`` asks for sampling (lm-eval's reading of a ``--gen_kwargs`` setting)."""
    if value is None:
        return False
    if key == "temperature":
        return value > 0
    if key == "top_p":
        return value < 1
    if key == "min_p":
        return value > 0
    return True  # top_k


def override_generation(base: GenerationConfig, overrides: dict[str, Any]) -> tuple[GenerationConfig, bool]:
    """``base`` with the ``--gen-kwargs`` settings, and whether they turned sampling on.

    A sampling setting (``temperature`` > 0, ``top_p`` < 1, ``top_k``, ``min_p`` > 0) given for
    a task that decodes greedily (``do_sample: false``, or temperature 0) turns sampling on, as
    lm-eval's ``--gen_kwargs`` do (its vLLM model drops ``do_sample`` and sends the temperature
    given), unless ``do_sample`` is given too; with no positive temperature, at temperature 1
    (the OpenAI API's default). The settings sent are the settings recorded."""
    from pydantic import ValidationError

    check_generation_overrides(overrides)
    merged = {**base.model_dump(), **overrides}
    turned_on = (base.sampling_mode() == "greedy" and "do_sample" not in overrides
                 and any(_samples(k, overrides[k]) for k in SAMPLING_SETTINGS if k in overrides))
    if turned_on:
        merged["do_sample"] = True
        if not (merged.get("temperature") or 0) > 0:
            merged["temperature"] = 1.0
    try:
        return GenerationConfig.model_validate(merged), turned_on
    except ValidationError as exc:
        err = exc.errors()[0]
        raise ConfigError(f"{err['loc'][0]}: {err['msg']}", field="--gen-kwargs") from None


def sampling_note(overrides: dict[str, Any], tasks: Sequence[str]) -> str:
    """The one line saying that ``--gen-kwargs`` turned sampling on for greedy tasks."""
    given = ",".join(f"{k}={v}" for k, v in overrides.items() if k in SAMPLING_SETTINGS)
    at = "" if (overrides.get("temperature") or 0) > 0 else " at temperature 1.0 (no temperature given)"
    shown = ", ".join(tasks[:5]) + (f" and {len(tasks) - 5} more" if len(tasks) > 5 else "")
    return (f"--gen-kwargs {given} turns sampling on{at} for {shown}, whose own generation is greedy "
            "(as lm-eval's --gen_kwargs do); add do_sample=false to keep greedy decoding")


def check_task(task: Task, root: Path | None, report: Report, *, limit: int | None = None,
               ctx: DialogueContext | None = None, stand_in: RandomModel | None = None) -> tuple[Scan, int]:
    """Check every document of ``task`` (the first ``limit``) in this process; problems go to
    ``report``. Returns the count of its data (as :func:`~mmtasks.documents.dataset.scan_documents`
    gives it) and the number of documents read."""
    ctx = ctx or DialogueContext(has_judge=task.config.judge is not None)
    found: list[MmtasksError] = []

    def counted(problem: MmtasksError) -> None:
        found.append(problem)
        report(problem)

    try:
        count, most, treated = _check_documents(task, root, limit, ctx, stand_in or _stand_in(), counted)
    except MmtasksError as exc:  # the source itself: no data file, no data directory, a dataset that does not load
        counted(exc)
        return Scan(count=0, total=0, max_images=0), 0
    return _scan(task, root, limit, count, most, bool(found), treated), count


def _scan(task: Task, root: Path | None, limit: int | None, count: int, most: Media, problems: bool,
          treated: dict[str, dict[str, int]] | None = None) -> Scan:
    """The task's count: ``count`` documents to evaluate, of ``total`` records in the data (those
    that its record policy excludes among them; ``treated``: treatment -> reason -> records);
    ``most``: the most images (a video's sampled frames among them) and videos of one document."""
    treated = treated or {}
    max_images, max_videos = most
    excluded = sum(treated.get("excluded", {}).values())
    if limit is not None and not problems:  # the records past the limit still count in the data's size
        scan = scan_documents(task.config, root, limit=limit, task_file=task.file, adapter=task.adapter)
        return Scan(count=scan.count - excluded, total=scan.total, max_images=max(scan.max_images, max_images),
                    treated=treated, max_videos=max_videos)
    return Scan(count=count, total=count + excluded, max_images=max_images, treated=treated, max_videos=max_videos)


def _check_documents(task: Task, root: Path | None, limit: int | None, ctx: DialogueContext, stand_in: RandomModel,
                     report: Report, only: Callable[[int], bool] | None = None) -> tuple[int, Media, dict[str, dict[str, int]]]:
    """The check of each document (of the share ``only`` accepts): (documents read, the most images
    (sampled frames among them) and videos in one, what the task's record policy did: treatment ->
    reason -> records)."""
    count = max_images = max_videos = 0
    excluded = Exclusions()
    treated: dict[str, dict[str, int]] = {}
    for doc in task.documents(root, limit, report=report, only=only, excluded=excluded):
        count += 1
        max_images = max(max_images, n_source_images(doc) + sum(len(clip.indices) for clip in doc.videos))
        max_videos = max(max_videos, len(doc.videos))
        # The dialogue runs without the task's metric functions: they score replies, and the
        # stand-in's replies are not worth scoring (nor worth loading a tokenizer for).
        state = task.state(doc, scored=False)
        try:
            task.cluster_of(doc)  # a declared cluster field the record lacks
            sample = _drive(task.protocol.run(state, ctx), stand_in, task)
            for treatment, reason in doc.treated.items():
                treated.setdefault(treatment, {})
                treated[treatment][reason] = treated[treatment].get(reason, 0) + 1
            _check_verdicts(task, doc.doc_id, sample)
            if task.config.answer.matcher is not None:  # its templates, rendered for every document
                matcher_request(state, "(placeholder reply)", position=0)
                for v in task.variants:  # and a variant's own matcher prompt
                    if v.config.matcher_prompt is not None:
                        matcher_request(state, "(placeholder reply)", position=0, variant=v)
        except MmtasksError as exc:
            report(exc)
            # The dialogue stopped at its first problem: the templates every protocol renders
            # (breakdowns, the answer space) are rendered on their own for the others.
            seen = {exc.render()}
            for step in (lambda: state.breakdown, lambda: state.answer_space):
                try:
                    step()
                except MmtasksError as more:
                    if more.render() not in seen:
                        seen.add(more.render())
                        report(more)
    if excluded.by_reason:
        treated["excluded"] = dict(excluded.by_reason)
    return count, Media(max_images, max_videos), treated


# -- several processes --------------------------------------------------------------------

#: the fewest records (all tasks together) for which the check runs in several processes
PARALLEL_FROM = 2000
_MAX_WORKERS = 8

#: what the forked processes check (set in the parent just before forking: nothing is pickled to them)
_JOB: dict[str, Any] = {}


#: the fewest CPUs on which the check forks by default: on 2 the forked copies' cost (pages copied
#: on write, each process's own caches) outweighed the second core (benchmarks/README.md, issue 20)
FORK_FROM_CPUS = 4


def default_workers() -> int:
    """Processes the check uses by default: one per CPU (at most 8) from :data:`FORK_FROM_CPUS` CPUs, else one."""
    cpus = os.cpu_count() or 1
    return min(cpus, _MAX_WORKERS) if cpus >= FORK_FROM_CPUS else 1


def _records(task: Task, root: Path | None, limit: int | None) -> int | None:
    """How many records a local JSONL task reads (lines, without parsing them); None for other sources."""
    ds = task.config.dataset
    if root is None or ds.local is None or not ds.local.file.endswith(".jsonl"):
        return None
    try:
        with (root / ds.local.dir / ds.local.file).open("rb") as fh:
            lines = sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))
    except OSError:
        return None  # reported, with its hint, by the loader
    return min(lines, limit) if limit is not None else lines


def _workers(tasks: Sequence[Task], root: Path | None, limit: int | None, workers: int | None) -> tuple[int, dict[str, int]]:
    """(processes, task -> shares) for the local JSONL tasks, when they hold at least
    :data:`PARALLEL_FROM` records, the platform forks, and this process runs no other thread (a
    fork copies only the calling thread). A task is cut into shares in proportion to its size
    (at least one): many tasks are checked one per process, one large task by all of them."""
    n = workers if workers is not None else default_workers()
    if n <= 1 or "fork" not in multiprocessing.get_all_start_methods() or threading.active_count() > 1:
        return 1, {}
    sizes = {task.name: size for task in tasks if (size := _records(task, root, limit)) is not None}
    total = sum(sizes.values())
    if total < PARALLEL_FROM:
        return 1, {}
    return n, {name: min(n, max(1, round(n * size / total))) for name, size in sizes.items()}


def _check_in_processes(tasks: Sequence[Task], root: Path | None, limit: int | None, notetaking: bool,
                        processes: int, shares: dict[str, int]) -> dict[str, tuple[int, Media, list[MmtasksError], dict[str, dict[str, int]]]]:
    """The tasks' documents checked in ``processes`` forked processes: a task cut into several
    shares is read whole by each, which checks the records whose index modulo the shares is its
    own. Returns task -> (documents, most images and videos in one, problems in record order, treatment -> reason -> records)."""
    jobs = [(t, k, shares[t.name]) for t in tasks if t.name in shares for k in range(shares[t.name])]
    _JOB.update(jobs=jobs, root=root, limit=limit, notetaking=notetaking)
    gc.freeze()  # the forked processes' collections then leave the parent's objects (and their pages) alone
    pool = multiprocessing.get_context("fork").Pool(processes, initializer=_quiet_worker)
    gc.unfreeze()
    try:
        results = pool.map(_check_share, range(len(jobs)), chunksize=1)
        pool.close()  # the workers end on their own (terminate() would signal them)
        pool.join()
    finally:
        pool.terminate()
        _JOB.clear()
    out: dict[str, tuple[int, Media, list[MmtasksError], dict[str, dict[str, int]]]] = {}
    for task in tasks:
        mine = [r for (t, _, _), r in zip(jobs, results) if t is task]
        if not mine:
            continue
        seen: set[str] = set()  # every share reads every line: a malformed line is reported by each
        problems = []
        for _, data in sorted((p for r in mine for p in r[2]), key=lambda p: p[0]):
            error = _restored(data)
            if error.render() not in seen:
                seen.add(error.render())
                problems.append(error)
        treated: dict[str, dict[str, int]] = {}
        for r in mine:
            for treatment, reasons in r[3].items():
                for reason, n in reasons.items():
                    treated.setdefault(treatment, {})
                    treated[treatment][reason] = treated[treatment].get(reason, 0) + n
        out[task.name] = (sum(r[0] for r in mine), Media(max(r[1][0] for r in mine), max(r[1][1] for r in mine)),
                          problems, treated)
    return out


def _quiet_worker() -> None:
    """A forked checker leaves signals to the parent: Ctrl-C reaches the whole process group and
    the parent stops the pool; SIGTERM ends a worker (the parent's handler would raise in it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _check_share(job: int) -> tuple[int, Media, list[tuple[int, tuple[Any, ...]]], dict[str, dict[str, int]]]:
    """In a forked process: one share of one task; problems come back as plain tuples, with
    their place in the data (line, else record) to put them in order."""
    task, k, shares = _JOB["jobs"][job]
    problems: list[tuple[int, tuple[Any, ...]]] = []
    position = 0

    def report(problem: MmtasksError) -> None:
        problems.append((problem.line if problem.line is not None else position, _portable(problem)))

    def only(index: int) -> bool:
        nonlocal position
        position = index + 1
        return shares == 1 or index % shares == k

    ctx = DialogueContext(has_judge=task.config.judge is not None, notetaking=_JOB["notetaking"])
    try:
        count, most, treated = _check_documents(task, _JOB["root"], _JOB["limit"], ctx, _stand_in(), report, only)
    except MmtasksError as exc:  # the source itself (every share finds it; reported once)
        report(exc)
        count, most = 0, Media(0, 0)
        treated = {}
    return count, most, problems, treated


def _portable(problem: MmtasksError) -> tuple[Any, ...]:
    return (type(problem).__name__, problem.message, problem.file, problem.doc_id, problem.field, problem.line, problem.hint)


def _restored(data: tuple[Any, ...]) -> MmtasksError:
    kind, message, file, doc_id, field_name, line, hint = data
    cls = {c.__name__: c for c in (ConfigError, DataError, TemplateError)}.get(kind, MmtasksError)
    return cls(message, file=file, doc_id=doc_id, field=field_name, line=line, hint=hint)


class _StandIn(RandomModel):
    """The ``random`` baseline answering every request with a valid answer of its space, from one
    generator for the whole preflight (seeding a generator per request, as a run does for
    reproducible draws, would cost more than the rest of a document's check)."""

    def __init__(self) -> None:
        super().__init__(ModelSpec(backend="random"), ModelContext(seed=0))
        self._shared = random.Random(0)

    def _rng(self, req: Request) -> random.Random:
        return self._shared


def _stand_in() -> RandomModel:
    return _StandIn()


def _drive(dialogue: Dialogue, stand_in: RandomModel, task: Task | None = None) -> Sample | None:
    """Run a dialogue to its end, every request (model, judge, note taker) answered by ``stand_in``;
    its sample."""
    try:
        requests = next(dialogue)
        while True:
            requests = dialogue.send([_answer(stand_in, r, task) for r in requests])
    except StopIteration as done:
        return done.value if isinstance(done.value, Sample) else None


def _check_verdicts(task: Task, doc_id: str, sample: Sample | None) -> None:
    """The judge's parser must read the placeholder verdicts the ``random`` judge drew from the
    judge's declared space (``judge.space``, else the parser's own): a judge that cannot parse its
    own declared shape would fail every call of a ``--judge random`` run, and says nothing of a
    real judge's replies either."""
    judge = task.config.judge
    if sample is None or judge is None:
        return
    for verdict in sample.judge:
        if verdict.get("fields") is None and verdict.get("error") == UNPARSED_VERDICT:
            replies = [r for r in verdict.get("replies", []) if isinstance(r, str)]
            shown = replies[-1].splitlines()[-1] if replies and replies[-1].strip() else ""
            raise ConfigError(f"judge parser {judge.parser!r} cannot read a verdict of the judge's declared space "
                              f"(the random judge answered {shown[:120]!r})", file=task.file, doc_id=doc_id or None,
                              field="judge.space",
                              hint="declare the verdict in judge.space ({kind: verdict, format: json, fields: "
                                   "{score: [1, 10]}}: fields, ranges, choices) or fix judge.parser_args")


def _answer(stand_in: RandomModel, request: Request, task: Task | None) -> Reply:
    try:
        return Reply(text=stand_in.answer(request))
    except (ValueError, TypeError, KeyError) as exc:  # a space no valid answer can be drawn from
        where = "judge.space" if request.target == "judge" else "answer.space"
        raise ConfigError(f"no valid answer can be drawn from this answer space: {exc}", file=task.file if task else None,
                          doc_id=request.doc_id or None, field=where) from None


def preflight(names: Sequence[str], *, include_paths: Sequence[Path] = (), data_dir: str | Path | None = None,
              limit: int | None = None, image_mode: ImageMode = "separate", protocol_overrides: dict[str, Any] | None = None,
              generation: dict[str, Any] | None = None, system_instruction: str | None = None,
              notetaking: bool = False, video: dict[str, Any] | None = None,
              workers: int | None = None, num_fewshot: int | None = None) -> CheckedTasks:
    """Load the tasks and check all their documents; raise :class:`Problems` naming every problem found.

    Large local data (:data:`PARALLEL_FROM` records or more) is checked by ``workers`` forked
    processes (default: :func:`default_workers`), with the same code; 1: in this process."""
    started = time.perf_counter()
    problems: list[tuple[str | None, MmtasksError]] = []

    def add(name: str | None, exc: MmtasksError) -> None:
        if isinstance(exc, Problems):  # a task file with several problems
            problems.extend((name, p) for _, p in exc.problems)
        else:
            problems.append((name, exc))

    tasks, groups = load_tasks(names, include_paths, image_mode=image_mode, protocol_overrides=protocol_overrides,
                               generation=generation, system_instruction=system_instruction, report=add, video=video,
                               num_fewshot=num_fewshot)
    root = data_root(data_dir)
    scans: dict[str, Scan] = {}
    documents = 0
    stand_in = _stand_in()
    processes, shares = _workers(tasks, root, limit, workers)
    checked = _check_in_processes(tasks, root, limit, notetaking, processes, shares) if processes > 1 else {}
    for task in tasks:
        if task.name in checked:
            n, most, found, treated = checked[task.name]
            for exc in found:
                add(task.name, exc)
            scans[task.name] = _scan(task, root, limit, n, most, bool(found), treated)
        else:
            ctx = DialogueContext(has_judge=task.config.judge is not None, notetaking=notetaking)
            scans[task.name], n = check_task(task, root, functools.partial(add, task.name),
                                             limit=limit, ctx=ctx, stand_in=stand_in)
        documents += n
    if problems:
        # each task's problems together, in the order found (a task file's own errors, then its data's)
        first = {name: k for k, (name, _) in reversed(list(enumerate(problems)))}
        raise Problems(sorted(problems, key=lambda p: first[p[0]]))
    return CheckedTasks(tasks=tasks, groups=groups, scans=scans, documents=documents, seconds=time.perf_counter() - started)
