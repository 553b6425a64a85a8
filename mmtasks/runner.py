"""One evaluation run: resolve tasks and models, schedule every dialogue, write
samples as they finish, aggregate, write results.json."""

from __future__ import annotations

import contextlib
import copy
import functools
import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mmtasks import distributed, rank_agreement
from mmtasks.cache.response_cache import ResponseCache, default_cache_dir
from mmtasks.config.run_config import RunConfig
from mmtasks.dialogues.protocols import DialogueContext
from mmtasks.core.sample import Dialogue, Sample
from mmtasks.documents.dataset import Document, Exclusions
from mmtasks.documents.paths import data_root
from mmtasks.errors import ConfigError, MmtasksError, ModelError, ModelNotFound, Problems
from mmtasks.models.base import ChatModel, ModelContext, ModelSpec, load_model, parse_model_spec, settings_problem
from mmtasks.models.in_memory import ModelFactory
from mmtasks.preflight import CheckedTasks, preflight
from mmtasks.progress import Progress
from mmtasks.ray_launcher import RayReplicas, RaySettings
from mmtasks.results.files import OutputError, SamplesFile, SamplesWriter, claim_output_folder, run_fingerprint
from mmtasks.models.prices import PriceTable, load_prices, unpriced_note
from mmtasks.results.costs import MaxCostReached, Priced, TokenLedger, cost_summary, priced, this_runs_share, token_totals
from mmtasks.results.results_json import build_results, write_results
from mmtasks.core.request import COMPONENT_FLAGS, GenerationConfig, Reply, Request, Target
from mmtasks.scheduling.first_failures import FirstFailures
from mmtasks.secrets import REDACTED, SECRET_QUERY_NAME, public_args, redact, safe_url
from mmtasks.scheduling.scheduler import Scheduler
from mmtasks.scheduling.stats import ReplyCounts
from mmtasks.scoring import rouge
from mmtasks.scoring.aggregation import TaskResult, aggregate
from mmtasks.scoring.group_aggregation import GroupMember, GroupScore, score_group
from mmtasks.scoring.matcher_results import WithoutMatcher, matcher_summary
from mmtasks.scoring.variants import variant_results
from mmtasks.scoring.repeats import draws_together, drawn, repeated, repeats_for, summarize
from mmtasks.task import Task

if TYPE_CHECKING:
    from mmtasks.trackers import Trackers

log = logging.getLogger("mmtasks")

BOOTSTRAP_SEED = 1234


@dataclass
class RunOutcome:
    results: dict[str, Any]
    #: per task, in document order: whole samples (replies, parsed answers, targets, judge
    #: verdicts, scores), read back lazily from the samples file when the run wrote one
    samples: dict[str, Sequence[Sample]] = field(default_factory=dict)
    #: False on the other ranks of a data parallel run: rank 0 holds the results
    is_main: bool = True


def _overrides(run: RunConfig) -> dict[str, Any]:
    return {k: v for k, v in {"history": run.history, "probe": run.probe, "truncate": run.truncate}.items() if v is not None}


def check(run: RunConfig, model_generation: dict[str, Any] | None = None) -> CheckedTasks:
    """The preflight of ``run`` (see :mod:`mmtasks.preflight`): raises one :class:`~mmtasks.errors.Problems`
    naming every problem of its tasks and data, before any model or judge is built.
    ``model_generation``: the model preset's generation settings, under ``--gen-kwargs``."""
    return preflight(run.tasks, include_paths=run.include_paths, data_dir=run.data_dir, limit=run.limit,
                     image_mode=run.image_mode, protocol_overrides=_overrides(run),
                     generation={**(model_generation or {}), **run.gen_kwargs}, video=run.video_override,
                     num_fewshot=run.num_fewshot, system_instruction=run.system_instruction,
                     notetaking=run.strategy == "notetaking")


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


def _official_judge(run: RunConfig, tasks: list[Task]) -> tuple[Task, str] | None:
    """The task whose official judge (``judge.default_model``) the run uses, with the spec; None
    when ``--judge`` chose the judge."""
    if run.judge is not None:
        return None
    for task in tasks:
        if task.config.judge is not None and task.config.judge.default_model:
            return task, task.config.judge.default_model
    return None


def retired_judge(official: tuple[Task, str], exc: ModelNotFound) -> ModelError:
    """One line for a task's official judge its provider no longer serves (a 404 naming it): the
    judge, where the task cites it (the file and line of ``judge.default_model``), and how to choose
    another."""
    task, spec = official
    file, line = task.file, None
    for candidate in [task.file, *sorted(task.file.parent.glob("*.yaml"))]:
        try:
            lines = candidate.read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        found = next((k for k, text in enumerate(lines, 1) if "default_model:" in text and spec in text), None)
        if found is not None:
            file, line = candidate, found
            break
    detail = exc.detail or "not found"
    return ModelError(
        f"task {task.name!r}'s official judge {spec} is no longer served (HTTP 404: {detail})",
        file=file, line=line, field="judge.default_model",
        hint="choose another judge with --judge SPEC, e.g. --judge openai:gpt-4o or --judge anthropic:claude-sonnet-4-5 "
             "(a judge other than the official one is recorded in results.json), or run --predict-only")


def _not_served_mid_run(exc: ModelNotFound, run: RunConfig, tasks: list[Task], models: Mapping[Target, ChatModel],
                        judged: tuple[ModelSpec, str | None] | None) -> MmtasksError:
    """A 404 naming a model after its readiness check passed: for the task's official judge, the
    same line as at the start (:func:`retired_judge`); for another component, the backend's line
    naming that component and its flag."""
    roles = [role for role, m in models.items() if m.spec.display == exc.model]
    role = "judge" if "judge" in roles else (roles[0] if roles else "model")
    if role == "judge":
        official = _official_judge(run, tasks)
        if official is not None:
            return retired_judge(official, exc)
    return for_component(exc, role, models[role].spec.display if role in models else None,
                         judged[1] if role == "judge" and judged is not None else None)


def _matcher_spec(run: RunConfig, tasks: list[Task]) -> tuple[ModelSpec, str | None] | None:
    """The answer matcher (``--matcher``) and, for ``--matcher default``, the task whose default it
    is; None when the run asks for none, predicts only, or no task has an ``answer.matcher``."""
    matched = [t for t in tasks if t.config.answer.matcher is not None]
    if run.matcher is not None and not matched:  # a flag that would do nothing is not accepted silently
        raise ConfigError("no task of this run has an answer matcher (answer.matcher)", field="--matcher",
                          hint="BLINK's and MMIU's tasks have their authors'; or drop --matcher")
    if run.matcher is None or run.predict_only:
        return None
    spec, origin = run.matcher, None
    if spec == "default":
        defaults = {t.name: t.config.answer.matcher.default_model for t in matched
                    if t.config.answer.matcher is not None and t.config.answer.matcher.default_model}
        if not defaults:
            raise ConfigError(f"task {matched[0].name!r} names no default matcher model", field="--matcher",
                              hint="pass --matcher SPEC")
        first = next(iter(defaults))
        spec, origin = defaults[first], f"the default matcher of task {first!r}"
    try:
        return parse_model_spec(spec, run.matcher_args), origin
    except MmtasksError as exc:
        raise for_component(exc, "matcher", spec, origin) from None


def batched(run: RunConfig, role: str) -> bool:
    """Whether ``role``'s requests go through the batch API (``--batch``, ``--judge-batch``)."""
    return run.batch if role in ("model", "notetaker") else run.judge_batch if role in ("judge", "matcher") else False


def batch_factory(run: RunConfig, role: str, spec: ModelSpec) -> ModelFactory:
    """The factory of ``role``'s batch model; a backend without one is one line, before any model."""
    flag = "--batch" if role in ("model", "notetaker") else "--judge-batch"
    if spec.backend not in ("openai", "anthropic", "gemini"):
        raise ConfigError(f"{flag}: the {role} {spec.display} has no batch mode (OpenAI's Batch API, Anthropic's "
                          "Message Batches and the Gemini API's Batch Mode only)", field=flag,
                          hint=f"drop {flag}, or use an openai:, anthropic: or gemini: {role}")
    state_dir = (run.cache_dir or default_cache_dir()) / "batches"
    if spec.backend == "gemini":
        from mmtasks.models.gemini_batch import GeminiBatchModel

        return lambda spec, context: GeminiBatchModel(spec, context, state_dir=state_dir, poll_s=run.batch_poll_s)
    if spec.backend == "anthropic":
        from mmtasks.models.anthropic_batch import AnthropicBatchModel

        return lambda spec, context: AnthropicBatchModel(spec, context, state_dir=state_dir, poll_s=run.batch_poll_s)
    from mmtasks.models.openai_batch import OpenAIBatchModel

    return lambda spec, context: OpenAIBatchModel(spec, context, state_dir=state_dir, poll_s=run.batch_poll_s)


def _load_component(role: str, spec: ModelSpec, context: ModelContext, ranks: distributed.Ranks,
                    origin: str | None = None, factory: ModelFactory | None = None,
                    ray: RaySettings | None = None) -> ChatModel:
    """Load and check one model (``factory``: build it from an object in memory instead; ``ray``:
    as replicas on a Ray cluster, :mod:`mmtasks.ray_launcher`); its errors name the component
    (``--judge-args`` ...)."""
    try:
        if ray is not None and factory is None:
            from mmtasks.ray_launcher import ray_replicas

            return ray_replicas(spec, context, ray)  # each replica checked itself when it loaded
        model = factory(spec, context) if factory is not None else load_model(distributed.place(spec, ranks), context)
    except MmtasksError as exc:
        raise for_component(exc, role, spec.display, origin) from None
    try:
        model.check_ready()
    except MmtasksError as exc:
        model.close()
        raise for_component(exc, role, spec.display, origin) from None
    return model


def evaluate(run: RunConfig, model_factory: ModelFactory | None = None) -> RunOutcome:
    """Run ``run``; under torchrun/accelerate launch (or a Trainer on several processes), this
    rank's share of it (see :mod:`mmtasks.distributed`). ``model_factory``: the model is an object
    in memory (:mod:`mmtasks.models.in_memory`), built by it rather than loaded."""
    started = time.perf_counter()
    ranks = distributed.ranks_from_env()
    distributed.quiet_unless_main(ranks)
    silence = rank_agreement.silence_timeout(run.rank_timeout) if ranks.active else rank_agreement.DEFAULT_SILENCE_S
    with distributed.process_group(ranks, silence) as liaison:
        return _evaluate(run, ranks, started, model_factory, liaison)


def _digest(run: RunConfig, tasks: list[Task], root: Path | None,
            specs: dict[str, ModelSpec | None]) -> rank_agreement.RunDigest:
    """What this process is about to evaluate (:class:`~mmtasks.rank_agreement.RunDigest`): read
    before any model is built, compared across the ranks of a data parallel run and recorded by
    a ``--shard`` slice for ``mmtasks merge``."""
    from mmtasks import __version__

    def records(task: Task) -> Iterator[tuple[str, dict[str, Any]]]:
        for doc in task.documents(root, run.limit, excluded=Exclusions()):
            yield doc.doc_id, doc.record

    models = {role: (spec.identity(), spec.name if spec.backend in _LOCAL_WEIGHTS else None)
              for role, spec in specs.items() if spec is not None}
    return rank_agreement.build_digest(__version__, {t.name: t.config.model_dump_json() for t in tasks},
                                       {t.name: records(t) for t in tasks}, models)


def _slice_ids(tasks: list[Task], ids: dict[str, list[str]], index: int, count: int) -> dict[str, list[str]]:
    """Per task, the document ids of slice ``index`` of ``count`` (document k of the run, counted
    across tasks in order, is slice ``k % count``'s)."""
    out: dict[str, list[str]] = {}
    k = 0
    for task in tasks:
        out[task.name] = []
        for doc_id in ids[task.name]:
            if k % count == index:
                out[task.name].append(doc_id)
            k += 1
    return out


def shard_record(digest: rank_agreement.RunDigest, run: RunConfig) -> dict[str, Any]:
    """What a ``--shard`` slice records (results.json ``config.shard_of``) for ``mmtasks merge`` to
    check that slices belong together: the digest's hashes (not the id lists), where the data was."""
    return {
        "version": digest.version, "tasks": digest.tasks, "task_names": list(run.tasks),
        "documents": {t: {"count": len(d.ids), "hash": rank_agreement.documents_hash(d)} for t, d in digest.documents.items()},
        "models": digest.models, "weights": {role: rank_agreement.files_hash(files) for role, files in digest.weights.items()},
        "data_dir": str(run.data_dir) if run.data_dir is not None else None,
        "include_paths": [str(p) for p in run.include_paths],
    }


#: backends whose model name may be a local folder of weights (fingerprinted across ranks)
_LOCAL_WEIGHTS = {"hf", "vllm"}


def _evaluate(run: RunConfig, ranks: distributed.Ranks, started: float,
              model_factory: ModelFactory | None = None, liaison: rank_agreement.Liaison | None = None) -> RunOutcome:
    model_spec = parse_model_spec(run.model, run.model_args)
    # Every task, document, template, image and target is checked before any model is built.
    checked = check(run, model_spec.generation)
    tasks, groups, scans = checked.tasks, checked.groups, checked.scans
    # under --verbose only, at every speed: a line shown when the check took 1 s or more made the
    # output (and the one-line error after it) depend on how fast the machine was
    log.debug("preflight: %d documents of %d tasks checked in %.1f s, no problems",
              checked.documents, len(tasks), checked.seconds)
    root = data_root(run.data_dir)
    # a combined image mode tiles each request's images into one
    max_images = 1 if run.image_mode == "combined" else max((s.max_images for s in scans.values()), default=1)
    max_videos = max((s.max_videos for s in scans.values()), default=0)
    context = ModelContext(seed=run.seed, batch_size=run.batch_size, max_images_per_request=max(1, max_images),
                           max_videos_per_request=max_videos, verbose=run.verbose)

    judged = _judge_spec(run, tasks)
    judge_spec = judged[0] if judged is not None else None
    matching = _matcher_spec(run, tasks)
    matcher_spec = matching[0] if matching is not None else None
    notetaker_spec = None
    if run.strategy == "notetaking" and run.notetaker:
        try:
            notetaker_spec = parse_model_spec(run.notetaker, run.notetaker_args)
        except MmtasksError as exc:
            raise for_component(exc, "notetaker", run.notetaker) from None
    check_settings(tasks, model_spec, judge_spec, {**model_spec.generation, **run.gen_kwargs})
    check_drawn_together(run, tasks)
    expected = None
    shard_of: dict[str, Any] | None = None
    if liaison is not None or run.slice is not None:
        # every rank agrees on what it evaluates (a difference stops every rank); a slice records it for merge
        digest = _digest(run, tasks, root, {"model": model_spec, "judge": judge_spec, "matcher": matcher_spec,
                                            "notetaker": notetaker_spec})
        if liaison is not None:
            rank_agreement.agree(liaison, digest)
        expected = {task: docs.ids for task, docs in digest.documents.items()}
        if run.slice is not None:
            index, count = run.slice
            expected = {task: ids for task, ids in _slice_ids(tasks, expected, index, count).items()}
            shard_of = shard_record(digest, run)
    if run.max_cost is not None:
        check_priced({"model": model_spec, "judge": judge_spec, "matcher": matcher_spec, "notetaker": notetaker_spec})
    if run.batch:  # a backend without a batch mode: one line, before any model
        batch_factory(run, "model", model_spec)
    for role, spec in (("judge", judge_spec), ("matcher", matcher_spec)):
        if run.judge_batch and spec is not None:
            batch_factory(run, role, spec)
    ray_settings = _ray_settings(run, ranks, model_factory)  # Ray missing or its cluster unreachable: one line, now
    trackers = _trackers(run) if ranks.is_main else None  # a missing library or bad --log-args: one line, now
    models: dict[Target, ChatModel] = {}
    with contextlib.ExitStack() as stack:
        if run.output_path is not None and ranks.is_main:
            # The output folder is claimed before any model is loaded: in use or another run's is one line.
            _check_not_replaying_into(run.output_path, [s for s in (model_spec, judge_spec) if s is not None])
            identity = _identity(run, tasks, model_spec, judge_spec)
            stack.enter_context(claim_output_folder(
                run.output_path, run_fingerprint(identity),
                {"model": model_spec.display, "tasks": ",".join(t.name for t in tasks)}, overwrite=run.overwrite,
                settings=recorded_settings(identity)))
        if run.use_cache:
            ResponseCache(run.cache_dir or default_cache_dir()).close()  # a corrupt or unwritable cache: one line, before any model
        if trackers is not None:
            trackers.start({"config": run.public(), "tasks": [t.name for t in tasks]})
            stack.push(lambda kind, exc, tb: trackers.finish(ok=kind is None))
        stack.callback(_close_models, models)
        if judged is not None:
            judge_spec, origin = judged
            # The judge is checked before any model time is spent.
            try:
                models["judge"] = _load_component("judge", judge_spec, context, ranks, origin,
                                                  factory=batch_factory(run, "judge", judge_spec) if run.judge_batch else None)
            except ModelNotFound as exc:
                official = _official_judge(run, tasks)
                if official is None:
                    raise
                raise retired_judge(official, exc) from None
            if origin:
                log.info("judge: %s (%s; choose the judge with --judge)", judge_spec.display, origin)
        if matching is not None:
            models["matcher"] = _load_component("matcher", matching[0], context, ranks, matching[1],
                                                factory=batch_factory(run, "matcher", matching[0]) if run.judge_batch else None)
            if matching[1]:
                log.info("matcher: %s (%s)", matching[0].display, matching[1])
        models["model"] = _load_component("model", model_spec, context, ranks, factory=model_factory or (
            batch_factory(run, "model", model_spec) if run.batch else None), ray=ray_settings)
        if run.strategy == "notetaking":
            if notetaker_spec is not None:
                models["notetaker"] = _load_component("notetaker", notetaker_spec, context, ranks)
            else:
                models["notetaker"] = models["model"]
        check_limits(tasks, models, overridden="max_new_tokens" in {**model_spec.generation, **run.gen_kwargs})
        try:
            outcome = _run(run, tasks, groups, root, scans, models, model_spec, judge_spec, ranks, started, matcher_spec,
                           liaison, expected, shard_of)
        except ModelNotFound as exc:  # a model retired while the run went on (its replies so far are cached)
            raise _not_served_mid_run(exc, run, tasks, models, judged) from None
        if trackers is not None and outcome.is_main:
            trackers.log_run(outcome.results, {task: (s.to_json() for s in rows) for task, rows in outcome.samples.items()},
                             run.output_path)
        return outcome


def _ray_settings(run: RunConfig, ranks: distributed.Ranks, factory: ModelFactory | None) -> RaySettings | None:
    """``--launcher ray``'s settings; None for a run in this process alone."""
    if run.launcher != "ray":
        return None
    if ranks.active:
        raise ConfigError("--launcher ray runs in one process that places the replicas; do not start it with "
                          "torchrun/accelerate launch", field="--launcher")
    if factory is not None:
        raise ConfigError("--launcher ray loads the model in each replica; a model in memory cannot be replicated",
                          field="--launcher")
    if run.batch:
        raise ConfigError("--batch sends the model's requests through its provider's batch API: no replicas to place",
                          field="--launcher", hint="drop --launcher ray or --batch")
    from mmtasks.ray_launcher import check_settings

    settings = RaySettings(address=run.ray_address, replicas=run.ray_replicas)
    check_settings(settings)
    return settings


def _trackers(run: RunConfig) -> Trackers | None:
    """The run's experiment trackers (``--log-to``), their libraries imported; None without any."""
    if not run.log_to:
        return None
    from mmtasks.trackers import Trackers, check_installed, parse_log_args, parse_log_to

    names = parse_log_to(run.log_to)
    args = parse_log_args(run.log_args)
    check_installed(names)
    return Trackers(names, args, run.output_path, run.run_name)


def check_priced(specs: dict[str, ModelSpec | None]) -> None:
    """``--max-cost`` needs a price for every component that will send requests (one without would
    spend uncounted): one line naming the first, before any model is built."""
    table = load_prices()
    for role, spec in specs.items():
        if spec is not None and table.find(spec.backend, spec.name) is None:
            raise ConfigError(f"{role}: {unpriced_note(spec.backend, spec.name)}", field="--max-cost",
                              hint="--max-cost counts the cost of every request: run without it, or add the "
                                   "model's price to models/prices.yaml")


def check_settings(tasks: list[Task], model_spec: ModelSpec, judge_spec: ModelSpec | None,
                   overrides: dict[str, Any]) -> None:
    """Every optional generation setting a task asks of the model (or judge) is one its backend
    takes: one it cannot take is refused here, before it loads, naming the backend and where the
    setting was given (``--gen-kwargs``, the task's ``generation``), never silently dropped."""
    problems: list[tuple[str | None, MmtasksError]] = []
    for task in tasks:
        asked = [(model_spec, task.config.generation, "generation")]
        if judge_spec is not None and task.config.judge is not None:
            asked.append((judge_spec, task.config.judge.generation, "judge.generation"))
        for spec, generation, where in asked:
            problem = settings_problem(spec.backend, generation)
            if problem is None:
                continue
            from_run = where == "generation" and any(k in overrides for k in (*generation.optional_settings(), "temperature", "top_p", "seed", "do_sample"))
            problems.append((task.name, ConfigError(
                f"task {task.name!r}: {problem}", file=None if from_run else task.file,
                field="--gen-kwargs" if from_run else where,
                hint="drop the setting, or use a backend that takes it")))
    if problems:
        raise Problems(problems)


def sent_generation(tasks: Sequence[Task], models: dict[Target, ChatModel]) -> dict[str, dict[str, Any]]:
    """Per task, the generation settings the model's (and the judge's, matcher's, note taker's) requests carry, as each
    backend puts them on the requests it builds (:meth:`ChatModel.sent_settings`: its own names,
    after the sampling rule; None for a backend that sends none): results.json's ``generation``."""
    out: dict[str, dict[str, Any]] = {}
    for task in tasks:
        sent: dict[str, Any] = {}
        if "model" in models:
            sent["model"] = models["model"].sent_settings(task.config.generation)
        if "judge" in models and task.config.judge is not None:
            sent["judge"] = models["judge"].sent_settings(task.config.judge.generation)
        if "matcher" in models and task.config.answer.matcher is not None:
            sent["matcher"] = models["matcher"].sent_settings(task.config.answer.matcher.generation)
        notes = getattr(getattr(task, "args", None), "notes", None)  # the note taker's settings (protocol_args.notes)
        note_generation = getattr(notes, "generation", None)
        if "notetaker" in models and isinstance(note_generation, GenerationConfig):
            sent["notetaker"] = models["notetaker"].sent_settings(note_generation)
        out[task.name] = sent
    return out


def check_drawn_together(run: RunConfig, tasks: list[Task]) -> None:
    """A generation ``n`` (replies drawn per call, run as that many repeats) agrees with
    ``--repeats`` and is not sent through a batch API (whose records keep one reply)."""
    for task in tasks:
        n = task.config.generation.n
        if n is None or n == 1 or not draws_together(task.scoring):
            continue
        if run.repeats > 1 and run.repeats != n:
            raise ConfigError(f"--repeats {run.repeats} and n={n} (task {task.name!r}) ask for different numbers of "
                              "replies per document", field="--repeats",
                              hint=f"n={n} runs each document {n} times by itself: drop --repeats, or give --repeats {n}")
        if run.batch:
            raise ConfigError(f"n={n} (task {task.name!r}) draws several replies per call, which --batch does not "
                              "send", field="--gen-kwargs", hint=f"use --repeats {n} with --batch (each repeat its own request)")


def check_limits(tasks: list[Task], models: dict[Target, ChatModel], overridden: bool = False) -> None:
    """Every task's ``max_new_tokens`` against the context of the model (and judge) that will
    answer, where the backend knows it before the first request (vLLM's ``/v1/models``): a
    request that asks for as many new tokens as the whole context would be refused, every one."""
    problems: list[tuple[str | None, MmtasksError]] = []
    for task in tasks:
        asked: list[tuple[Target, GenerationConfig, str]] = [
            ("model", task.config.generation, "--gen-kwargs" if overridden else "generation.max_new_tokens")]
        if task.config.judge is not None:
            asked.append(("judge", task.config.judge.generation, "judge.generation.max_new_tokens"))
        for target, generation, where in asked:
            model = models.get(target)
            limit = model.max_model_len if model is not None else None
            if model is None or limit is None or generation.max_new_tokens < limit:
                continue
            flag = COMPONENT_FLAGS[target][0]
            fix = (f"pass --gen-kwargs max_new_tokens=N with N well under {limit} (recorded; not the benchmark's "
                   f"official protocol), or serve the model with a longer context (vllm serve --max-model-len)"
                   if target == "model" else
                   f"serve the judge with a longer context (vllm serve --max-model-len), or choose another with {flag}")
            problems.append((task.name, ConfigError(
                f"task {task.name!r} asks for up to {generation.max_new_tokens} new tokens, but {target} "
                f"{model.spec.display} serves at most {limit} tokens in all, prompt included (max_model_len)",
                file=None if where == "--gen-kwargs" else task.file, field=where, hint=fix)))
    if problems:
        raise Problems(problems, stage="before the first request")


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


def recorded_settings(value: Any, key: str = "") -> Any:
    """The run's identity as the output folder records it (to say which settings differ when
    the folder is reused), with nothing that may hold a secret: values under a key named like
    a credential (``api_key``, ``token`` ...) or holding header values are ``***``, URLs lose
    their user info and query, registered secrets are redacted. It is written before any
    backend has registered its own secrets, so it cannot rely on redaction alone."""
    if isinstance(value, dict):
        return {k: recorded_settings(v, str(k)) for k, v in public_args(value).items()}
    if isinstance(value, list):
        return [recorded_settings(v, key) for v in value]
    if key and SECRET_QUERY_NAME.search(key) and not key.endswith("_env") and isinstance(value, str):
        return REDACTED  # numbers are never keys (max_new_tokens stays readable)
    if isinstance(value, str):
        return safe_url(value) if "://" in value else redact(value)
    return value


def _treated(task: Task, doc: Document, dialogue: Dialogue) -> Dialogue:
    """``dialogue`` whose sample records what the task's record policy did to the record
    (:meth:`Task.treated`) and the document's cluster (:meth:`Task.cluster_of`), for every
    protocol alike."""
    sample = yield from dialogue
    sample.cluster = task.cluster_of(doc)
    return task.treated(sample, doc)


def _group_scores(tasks: list[Task], groups: dict[str, list[str]], scored: dict[str, Sequence[Sample]],
                  results: dict[str, TaskResult]) -> dict[str, tuple[str, GroupScore]]:
    """Per group whose members name a group aggregator (``group_aggregators``) and whose every
    member ran: the aggregator's name and figures, from every member's samples together."""
    by_name = {t.name: t for t in tasks}
    out: dict[str, tuple[str, GroupScore]] = {}
    for group, members in groups.items():
        spec = next((by_name[m].group_aggregators[group] for m in members
                     if m in by_name and group in by_name[m].group_aggregators), None)
        if spec is None or any(m not in results for m in members):
            continue  # a rule across tasks needs every one of them
        given = {m: GroupMember(task=by_name[m].scoring, samples=scored[m], result=results[m]) for m in members}
        out[group] = (spec.name, score_group(spec, group, given, BOOTSTRAP_SEED))
    return out


def _run(run: RunConfig, tasks: list[Task], groups: dict[str, list[str]], root: Path | None, scans: dict, models: dict[Target, ChatModel], model_spec: ModelSpec, judge_spec: ModelSpec | None, ranks: distributed.Ranks, started: float,
         matcher_spec: ModelSpec | None = None, liaison: rank_agreement.Liaison | None = None,
         expected: dict[str, list[str]] | None = None, shard_of: dict[str, Any] | None = None) -> RunOutcome:
    cache = ResponseCache(run.cache_dir or default_cache_dir()) if run.use_cache else None
    writer = SamplesWriter(run.output_path / "samples") if run.output_path and ranks.is_main else None
    ctx = DialogueContext(predict_only=run.predict_only, has_judge="judge" in models, notetaking=run.strategy == "notetaking",
                          has_matcher="matcher" in models)
    total = sum(s.count for s in scans.values())
    sliced = run.slice
    if sliced is not None:
        total = len(range(sliced[0], total, sliced[1]))
    progress = Progress(total=ranks.shard_size(total), enabled=run.progress and ranks.is_main)
    # Full samples are streamed to disk and aggregated from there; without an output
    # folder they are kept in memory (the Python API's .samples). A data parallel run keeps
    # full samples in memory: rank 0 writes every rank's samples after the gather.
    keep_full = ranks.active
    by_task: dict[str, list[Sample]] = {t.name: [] for t in tasks}

    #: per task, the records its record policy left out (every rank reads every record: rank 0 counts all)
    exclusions = {t.name: Exclusions() for t in tasks}

    # one store of decoded video frames for the run: tasks asking about the same videos
    # (videomme, videomme_subtitles) decode each once
    from mmtasks.documents.video import FrameStore

    # (each video's SHA-256 kept in the response cache's memos: a rerun reads no video to hash it)
    frames = FrameStore(hashes=cache.memo("video-sha256") if cache is not None else None)

    def dialogues() -> Iterator[Dialogue]:
        docs: Iterator[tuple[Task, Document]] = ((task, doc) for task in tasks
                for doc in task.documents(root, run.limit, excluded=exclusions[task.name], frames=frames))
        if sliced is not None:  # --shard I/N: document k of the run is slice k % N's
            docs = (item for k, item in enumerate(docs) if k % sliced[1] == sliced[0])
        for task, doc in distributed.shard(docs, ranks):
            for repeat in range(repeats_for(task.scoring, run.repeats)):
                dialogue = task.protocol.run(task.state(doc), ctx)
                if task.config.generation.n is not None:  # n replies per call: the repeats' first requests drawn at once
                    dialogue = drawn(dialogue, repeat, run.seed, draws_together(task.scoring))
                elif repeat:
                    dialogue = repeated(dialogue, repeat, run.seed)
                yield _treated(task, doc, dialogue)

    def finished(sample: Sample) -> None:
        progress.advance(sample)
        if writer is not None:
            writer.write(sample)

    # the first requests to a model all failing the same way stop the run (one line naming the cause);
    # a document's failure (a context overflow, a refusal the probe without documents does not share) does not
    watch = FirstFailures(names={target: m.spec.display for target, m in models.items()},
                          probe=lambda request: models[request.target].generate_all([request])[0])

    counts = ReplyCounts()  # finish reasons and reasoning lengths, per task
    table = load_prices()
    prices: dict[str, Priced] = {target: priced(m.spec, table, batch=batched(run, target)) for target, m in models.items()}
    ledger = TokenLedger(table, prices)  # tokens and cost, per task and component

    def replied(request: Request, reply: Reply) -> None:
        progress.reply(request, reply)
        counts(request, reply)
        ledger(request, reply)
        watch(request, reply)
        if run.max_cost is not None and ledger.spent >= run.max_cost:
            raise MaxCostReached(
                f"stopped at --max-cost {run.max_cost:g} before sending more requests: the replies this run "
                f"received cost {table.currency} {ledger.spent:.6f} by models/prices.yaml",
                hint="the replies received are in the response cache: the same command (with a higher "
                     "--max-cost) resumes without paying for them again" if cache is not None else
                     "--no-cache: the replies received were not kept")

    # a batch API takes whole waves: every dialogue's turn k in one batch (the barrier-free engine would
    # hand a batch model whatever was queued when it was idle, down to one request)
    scheduler = Scheduler(models=models, cache=cache, max_live=run.max_live, on_finish=finished, on_reply=replied,
                          barrier_free=False if run.batch or run.judge_batch else None)
    if cache is not None:
        rouge.remember_segments(cache.memo("segments"))
    try:
        for sample in scheduler.run(dialogues()):
            if keep_full:
                by_task[sample.task].append(sample)
            elif writer is None:
                by_task[sample.task].append(sample)  # whole: the Python API's .samples are all a run gives
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
             "failed": scheduler.stats.failed, "replies": counts.to_json(), "tokens": ledger.to_json()}
    # a pool of endpoints (openai: base_url=[...]): what each endpoint answered, failed and passed on
    endpoints = {target: m.endpoint_counts for target, m in models.items() if hasattr(m, "endpoint_counts")}
    if endpoints:
        stats["endpoints"] = endpoints
        if ranks.is_main:
            for target, per in endpoints.items():
                log.info("%s endpoints: %s", target, "; ".join(
                    f"{url} {c['replies']} replies, {c['failed']} failed, {c['moved_away']} moved to others"
                    for url, c in per.items()))
    replicas = models.get("model")
    if isinstance(replicas, RayReplicas):  # per replica: requests answered, and put back when it died
        stats["ray"] = {"answered": {str(i): n for i, n in enumerate(replicas.answered)},
                        "requeued": {str(i): n for i, n in enumerate(replicas.requeued)}}
    gathered = distributed.gather(by_task, stats, ranks, liaison)
    if gathered is None:
        return RunOutcome(results={}, is_main=False)
    by_task, stats = gathered
    if expected is not None and keep_full:  # every document of the run scored exactly once (per repeat), before anything is written
        rank_agreement.check_scored_once(expected, {t: ((s.doc_id, s.repeat) for s in rows) for t, rows in by_task.items()},
                                         {t.name: repeats_for(t.scoring, run.repeats) for t in tasks})
    return finish_run(run, tasks, groups, root, {n: s.total for n, s in scans.items()}, exclusions, by_task, stats,
                      writer, keep_full, model_spec, judge_spec, matcher_spec, sent_generation(tasks, models),
                      models["model"].revision() if "model" in models else None, started, shard_of)


def component_prices(run: RunConfig, model_spec: ModelSpec, judge_spec: ModelSpec | None,
                     matcher_spec: ModelSpec | None, table: PriceTable) -> dict[str, Priced]:
    """Each component's price (:mod:`mmtasks.results.costs`), for results.json's ``cost``."""
    specs: dict[str, ModelSpec | None] = {"model": model_spec, "judge": judge_spec, "matcher": matcher_spec}
    if run.strategy == "notetaking":
        specs["notetaker"] = parse_model_spec(run.notetaker, run.notetaker_args) if run.notetaker else model_spec
    return {role: priced(spec, table, batch=batched(run, role)) for role, spec in specs.items() if spec is not None}


def finish_run(run: RunConfig, tasks: list[Task], groups: dict[str, list[str]], root: Path | None,
               n_original: dict[str, int], exclusions: dict[str, Exclusions], by_task: dict[str, list[Sample]],
               stats: dict[str, Any], writer: SamplesWriter | None, keep_full: bool, model_spec: ModelSpec,
               judge_spec: ModelSpec | None, matcher_spec: ModelSpec | None, generation: dict[str, dict[str, Any]],
               revision: Any, started: float, shard_of: dict[str, Any] | None = None) -> RunOutcome:
    """Score every task's samples (``by_task``, all of them with ``keep_full``; else in the
    writer's files), write the samples files and results.json: the end of a run, and of
    ``mmtasks merge``."""
    results: dict[str, TaskResult] = {}
    scored: dict[str, Sequence[Sample]] = {}
    #: task -> results.json's repeats record (tasks run more than once)
    repeat_summaries: dict[str, dict[str, Any]] = {}
    #: what the Python API gives as .samples: whole samples, read lazily from the file when there is one
    given: dict[str, Sequence[Sample]] = {}
    for task in tasks:
        if writer is not None and keep_full:
            scored[task.name] = samples = sorted(by_task[task.name], key=lambda s: s.doc_index)
            writer.finish(task.name, samples)
            given[task.name] = samples
        elif writer is not None:
            path = writer.finish(task.name)
            scored[task.name], given[task.name] = SamplesFile(path), SamplesFile(path, full=True)
        else:
            scored[task.name] = given[task.name] = sorted(by_task[task.name], key=lambda s: s.doc_index)
        # The bootstrap seed is fixed (not --seed) so that rescoring reproduces stderr exactly.
        results[task.name] = aggregate(task.scoring, task.aggregator, scored[task.name], BOOTSTRAP_SEED,
                                       excluded=exclusions[task.name].by_reason)
        spread = summarize(task.scoring, scored[task.name], repeats_for(task.scoring, run.repeats),
                           functools.partial(aggregate, task.scoring, task.aggregator, seed=BOOTSTRAP_SEED))
        if spread is not None:
            repeat_summaries[task.name] = spread
            # documents evaluated, not samples: each ran K times (the other counts cover every repeat)
            results[task.name].n_samples = len({s.doc_id for s in scored[task.name]})
    config = {"tasks": list(run.tasks), **run.public()}  # the tasks as asked: a results.json is a run file
    if run.run_name is not None:  # recorded, but not in the resume identity (_identity): a rename is the same run
        config["run_name"] = run.run_name
    config["model_spec"] = model_spec.model_dump()
    if judge_spec is not None:
        config["judge"] = judge_spec.display
        config["judge_spec"] = judge_spec.model_dump()
    matched: dict[str, dict[str, Any]] = {}
    if matcher_spec is not None:
        config["matcher"] = matcher_spec.display
        config["matcher_spec"] = matcher_spec.model_dump()
        for task in tasks:
            if task.config.answer.matcher is not None:
                without = aggregate(task.scoring, task.aggregator, WithoutMatcher(scored[task.name]), BOOTSTRAP_SEED)
                matched[task.name] = matcher_summary(scored[task.name], without.metrics)
    group_scores = _group_scores(tasks, groups, scored, results)
    # each task's scoring variants: the same samples scored their way (no request sent)
    variants = {task.name: variant_results(task.scoring, task.variants, scored[task.name], BOOTSTRAP_SEED, excluded=exclusions[task.name].by_reason)
                for task in tasks if task.variants}
    # wall-clock seconds from the start of evaluate() (task and model loading included) to the
    # scores (lm-eval's total_evaluation_time_seconds); shown under the results table
    stats["total_evaluation_time_s"] = round(time.perf_counter() - started, 3)
    replies = stats.pop("replies", {})
    spent = stats.pop("tokens", {})
    table = load_prices()
    prices = component_prices(run, model_spec, judge_spec, matcher_spec, table)
    if shard_of is not None:  # a slice's reply counts and tokens, added up by mmtasks merge
        config["shard_of"] = {**shard_of, "replies": replies, "tokens": spent}
    tokens, cost = token_totals(spent), cost_summary(spent, prices, table)
    stats.update(this_runs_share(tokens, cost))
    from mmtasks.results.run_card import build_card

    card = build_card({t.name: t.config for t in tasks}, root,
                      {t.name: (s.doc_id for s in scored[t.name]) for t in tasks},
                      revision)
    data = build_results(run_card=card, tasks={t.name: t for t in tasks}, results=results,
                         n_original=n_original, groups=groups,
                         run_config=config, stats=stats, matcher=matched, replies=replies,
                         generation=generation, repeats=repeat_summaries, variants=variants,
                         group_scores=group_scores, tokens=tokens, cost=cost)
    if run.output_path is not None:
        write_results(run.output_path / "results.json", data)
    return RunOutcome(results=data, samples=given)
