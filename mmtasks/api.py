"""The Python API: ``mmtasks.evaluate(...)`` runs an evaluation and returns its results.

>>> import mmtasks
>>> result = mmtasks.evaluate(tasks="realbench_ranking_easy", model="random", data_dir="data/sample", use_cache=False)
>>> round(result["results"]["realbench_ranking_easy"]["acc"], 2)       # the results.json layout
22.22
>>> sample = result.samples["realbench_ranking_easy"][0]                # per task, in document order
>>> sample.doc_id, sample.responses, sample.parsed, sample.target, sample.metrics
('rank-e-001', ['D'], 'D', 'B', {'acc': 0.0})
>>> result.problems                                                     # non-zero failure counts per task
{}

Judged tasks carry the judge's verdicts (here the chance-level ``random`` judge):

>>> judged = mmtasks.evaluate(tasks="llava_bench_wild", model="random", judge="random", data_dir="data/sample",
...                           limit=1, use_cache=False)
>>> judged.samples["llava_bench_wild"][0].judge[0]["fields"]
{'reference_score': 7.0, 'model_score': 6.0}

A misspelled option gets a "did you mean" (``include_path`` is accepted for ``include_paths``):

>>> mmtasks.evaluate(tasks="realbench_ranking_easy", model="random", limt=5)
Traceback (most recent call last):
mmtasks.errors.ConfigError: field 'limt': unknown option 'limt' (did you mean 'limit'?)

These examples run as tests (``tests/runner/test_api.py``), from the repository root.

The command line is a thin layer over :func:`run`: it builds the same
:class:`~mmtasks.config.run_config.RunConfig` from its flags and calls the same
function, so both validate options the same way and produce the same results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mmtasks.config.run_config import RunConfig
from mmtasks.core.sample import Sample

if TYPE_CHECKING:
    from mmtasks.models.in_memory import ModelFactory


class EvaluationResult(dict):
    """The results dictionary (the layout of ``results.json``: ``results``, ``groups``,
    ``n-samples``, ``problems``, ``config``, ``run_stats``, ...), plus the run's samples.

    ``samples`` maps each task to its samples in document order, as the samples files hold
    them: ``doc_id``, ``prompt``, every reply (``responses``), the parsed answer (``parsed``),
    ``target``, ``metrics``, ``failures``, ``unparsed``, ``judge`` (the judge's verdicts and
    replies), breakdown labels and the protocol's ``extra`` (turns, probes); read lazily, one
    line at a time, from ``output_path/samples/<task>.jsonl`` when the run wrote one, kept in
    memory otherwise. ``problems`` lists, per task, the non-zero
    counts of failed requests, unparsed answers and judge failures (not the records a task's
    record policy treats: those are in ``self["problems"]`` and ``self["coverage"]``). ``config`` is the
    :class:`RunConfig` that was run. On the non-zero ranks of a data parallel run the
    dictionary is empty and ``is_main`` is False.
    """

    def __init__(self, results: Mapping[str, Any], samples: Mapping[str, Sequence[Sample]],
                 run: RunConfig, is_main: bool = True) -> None:
        super().__init__(results)
        self.samples: dict[str, Sequence[Sample]] = dict(samples)
        self.run_config = run
        self.is_main = is_main

    @property
    def problems(self) -> dict[str, dict[str, int]]:
        if not self.is_main:
            return {}
        from mmtasks.results.schema import RECORD_TREATMENTS

        # the record policy's counts are the dataset's own records, treated as the task declares:
        # in results.json and the table, but not failures of the run
        failures = {task: {k: v for k, v in counts.items() if v and k not in RECORD_TREATMENTS}
                    for task, counts in self.get("problems", {}).items()}
        return {task: counts for task, counts in failures.items() if counts}

    @property
    def results_path(self) -> Path | None:
        out = self.run_config.output_path
        return None if out is None else out / "results.json"


def run(config: RunConfig, model_factory: ModelFactory | None = None) -> EvaluationResult:
    """Evaluate ``config`` (what the ``mmtasks run`` command calls); ``model_factory``: the model is
    an object in memory (:func:`evaluate` with ``model=`` an object)."""
    from mmtasks.runner import evaluate as run_evaluation
    from mmtasks.secrets import register_env_secrets

    register_env_secrets()
    outcome = run_evaluation(config, model_factory)
    return EvaluationResult(outcome.results, outcome.samples, config, is_main=outcome.is_main)


def parse_component_args(value: Any, field: str) -> dict[str, Any]:
    """``model_args``, ``judge_args``, ``notetaker_args``: a dict, or the command line's
    ``k=v,...`` text; a malformed item is a :class:`ConfigError` naming ``field``."""
    if value is None:
        return {}
    if not isinstance(value, str):
        return value
    from mmtasks.errors import ConfigError
    from mmtasks.models.base import parse_args_string

    try:
        return parse_args_string(value)
    except ConfigError as exc:
        raise ConfigError(exc.message.replace("model argument", "argument"), field=field, hint=exc.hint) from None


def evaluate(
    tasks: str | Sequence[str],
    model: str | Any,
    judge: str | None = None,
    data_dir: str | Path | None = None,
    output_path: str | Path | None = None,
    processor: Any = None,
    **options: Any,
) -> EvaluationResult:
    """Evaluate ``model`` on ``tasks`` and return the results (see :class:`EvaluationResult`).

    ``tasks``: task and group names (a list, or comma-separated text). ``model`` and
    ``judge``: model specs as on the command line (``hf:ORG/NAME``, ``openai:NAME``,
    ``random``, ``replay:PATH``, a preset). ``options``: any other :class:`RunConfig`
    field - ``model_args``/``judge_args``/``notetaker_args`` (a dict or ``"k=v,..."``),
    ``limit``, ``seed``, ``batch_size``, ``image_mode``, ``history``, ``probe``,
    ``predict_only``, ``gen_kwargs``, ``system_instruction``, ``use_cache``, ``cache_dir``, ``include_paths`` (or
    ``include_path``: one folder or a list, as the CLI's ``--include-path``), ``strategy``,
    ``notetaker``, ``matcher``/``matcher_args`` (the LLM answer matcher), ``max_live``, ``allow_failures``, ``progress`` (default False here),
    ``verbose``. A bad option raises :class:`~mmtasks.errors.ConfigError`; a run with
    failures returns normally (see ``.problems``): unlike the CLI there is no exit status.

    ``model`` may also be a model in memory, evaluated as it is with no reload: a transformers
    model with its ``processor`` (or tokenizer), or a vLLM ``LLM`` (:mod:`mmtasks.models.in_memory`;
    the Trainer callback, :mod:`mmtasks.integrations.trainer`, passes its model this way). Its
    weights may change between calls, so the response cache is off for it (``use_cache=True`` is
    refused); ``model_args`` still apply (``batch_size``, ``max_images`` ...).
    """
    factory = None
    if not isinstance(model, str):
        from mmtasks.errors import ConfigError
        from mmtasks.models.in_memory import in_memory

        if options.get("use_cache"):
            raise ConfigError("a model in memory is evaluated without the response cache (its weights change; a cached "
                              "reply would be another model's)", field="use_cache")
        options["use_cache"] = False
        wrapped = in_memory(model, processor)
        model, factory = wrapped.spec, wrapped.factory
    elif processor is not None:
        from mmtasks.errors import ConfigError

        raise ConfigError("processor is for a model in memory (model=a transformers model)", field="processor")
    for key in ("model_args", "judge_args", "notetaker_args", "matcher_args"):
        if key in options:
            options[key] = parse_component_args(options[key], key)
    if isinstance(options.get("log_args"), str):
        from mmtasks.trackers import parse_log_args

        options["log_args"] = parse_log_args(options["log_args"]).model_dump(mode="json", exclude_defaults=True)
    options.setdefault("progress", False)
    config = RunConfig.build(tasks=tasks, model=model, judge=judge, data_dir=data_dir,
                             output_path=output_path, **options)
    return run(config, factory)
