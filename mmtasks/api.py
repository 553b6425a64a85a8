"""The Python API: ``mmtasks.evaluate(...)`` runs an evaluation and returns its results.

>>> import mmtasks
>>> result = mmtasks.evaluate(tasks="realbench", model="random", data_dir="data/sample")
>>> result["results"]["realbench_ranking_easy"]["ranking_score"]      # the results.json layout
>>> result.samples["realbench_ranking_easy"][0].scores                  # per-document samples

The command line is a thin layer over :func:`run`: it builds the same
:class:`~mmtasks.config.run_config.RunConfig` from its flags and calls the same
function, so both validate options the same way and produce the same results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mmtasks.config.run_config import RunConfig
from mmtasks.core.sample import Sample


class EvaluationResult(dict):
    """The results dictionary (the layout of ``results.json``: ``results``, ``groups``,
    ``n-samples``, ``problems``, ``config``, ``run_stats``, ...), plus the run's samples.

    ``samples`` maps each task to its samples in document order: slim samples (``doc_id``,
    ``metrics``, ``failures``, ``unparsed``, breakdown labels; see ``Sample.slim``), read
    lazily from ``output_path/samples/<task>.jsonl`` when the run wrote one (that file holds
    the full samples: prompts, every reply, parsed answers, judge verdicts). ``problems`` lists, per task, the non-zero
    counts of failed requests, unparsed answers and judge failures. ``config`` is the
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
        return {task: {k: v for k, v in counts.items() if v}
                for task, counts in self.get("problems", {}).items() if any(counts.values())}

    @property
    def results_path(self) -> Path | None:
        out = self.run_config.output_path
        return None if out is None else out / "results.json"


def run(config: RunConfig) -> EvaluationResult:
    """Evaluate ``config`` (what the ``mmtasks run`` command calls)."""
    from mmtasks.runner import evaluate as run_evaluation
    from mmtasks.secrets import register_env_secrets

    register_env_secrets()
    outcome = run_evaluation(config)
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
    model: str,
    judge: str | None = None,
    data_dir: str | Path | None = None,
    output_path: str | Path | None = None,
    **options: Any,
) -> EvaluationResult:
    """Evaluate ``model`` on ``tasks`` and return the results (see :class:`EvaluationResult`).

    ``tasks``: task and group names (a list, or comma-separated text). ``model`` and
    ``judge``: model specs as on the command line (``hf:ORG/NAME``, ``openai:NAME``,
    ``random``, ``replay:PATH``, a preset). ``options``: any other :class:`RunConfig`
    field - ``model_args``/``judge_args``/``notetaker_args`` (a dict or ``"k=v,..."``),
    ``limit``, ``seed``, ``batch_size``, ``image_mode``, ``history``, ``probe``,
    ``predict_only``, ``use_cache``, ``cache_dir``, ``include_paths``, ``strategy``,
    ``notetaker``, ``max_live``, ``allow_failures``, ``progress`` (default False here),
    ``verbose``. A bad option raises :class:`~mmtasks.errors.ConfigError`; a run with
    failures returns normally (see ``.problems``): unlike the CLI there is no exit status.
    """
    for key in ("model_args", "judge_args", "notetaker_args"):
        if key in options:
            options[key] = parse_component_args(options[key], key)
    options.setdefault("progress", False)
    config = RunConfig.build(tasks=tasks, model=model, judge=judge, data_dir=data_dir,
                             output_path=output_path, **options)
    return run(config)
