"""Evaluation during training: a ``transformers.TrainerCallback`` that evaluates chosen tasks on the
trainer's model as it is in memory (no checkpoint saved and reloaded).

>>> from mmtasks.integrations import MMTasksCallback
>>> trainer.add_callback(MMTasksCallback(tasks="realbench", every_n_steps=500, on_save=True,
...                                      trainer=trainer, data_dir="data", limit=200))

Every ``every_n_steps`` optimizer steps, and at each checkpoint save with ``on_save``, it calls
:func:`mmtasks.evaluate` with ``model=`` the trainer's model and its processing class (or
``processor``). The metrics go through ``trainer.log``, so every tracker the trainer reports to
(``report_to``: W&B, MLflow, Trackio, TensorBoard ...) records them at the training step, under
``PREFIX/TASK/METRIC`` (with ``_stderr``), ``PREFIX/TASK/coverage``, ``PREFIX/groups/GROUP``.

On several processes (``torchrun``/``accelerate launch``) every process calls it at the same step;
the run takes the launcher's ranks and the trainer's process group (already initialised), each
process answers its share of the documents with its own replica, and the main process scores and
logs (mmtasks's data-parallel path, :mod:`mmtasks.distributed`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments

from mmtasks.api import EvaluationResult, evaluate


def logged_metrics(result: EvaluationResult, prefix: str) -> dict[str, float]:
    """What a training log gets from a run: each task's metrics (with stderr), its coverage
    percent, each group's average."""
    from mmtasks.trackers.records import metrics_of

    tasks = set(result.get("results", {}))
    out: dict[str, float] = {}
    for key, value in metrics_of(result).items():
        head, _, rest = key.partition("/")
        if head in tasks and "/" not in rest:
            out[f"{prefix}/{key}"] = value
        elif head in tasks and rest == "coverage/percent":
            out[f"{prefix}/{head}/coverage"] = value
        elif head == "groups" and key.endswith("/average"):
            out[f"{prefix}/{key.removesuffix('/average')}"] = value
    return out


class MMTasksCallback(TrainerCallback):
    """Evaluate ``tasks`` every ``every_n_steps`` steps and/or at each save (``on_save``).

    ``trainer``: the trainer whose ``log`` records the metrics (every ``report_to`` tracker);
    without one they are appended to ``state.log_history`` only. ``processor``: the model's
    processor when the trainer has no processing class. ``output_path``: a folder; each evaluation
    writes ``output_path/step-N`` (results.json, samples). ``options``: any other
    :func:`mmtasks.evaluate` option (``data_dir``, ``limit``, ``model_args``, ``include_paths`` ...).
    ``history`` keeps (step, metrics) of every evaluation of this process.
    """

    def __init__(self, tasks: str | Sequence[str], *, every_n_steps: int | None = None, on_save: bool = False,
                 trainer: Any = None, processor: Any = None, output_path: str | Path | None = None,
                 prefix: str = "mmtasks", **options: Any) -> None:
        from mmtasks.errors import ConfigError

        if every_n_steps is None and not on_save:
            raise ConfigError("say when to evaluate: every_n_steps=N and/or on_save=True", field="every_n_steps")
        if every_n_steps is not None and every_n_steps < 1:
            raise ConfigError(f"every_n_steps must be at least 1 (got {every_n_steps})", field="every_n_steps")
        self.tasks = tasks
        self.every_n_steps = every_n_steps
        self.evaluate_on_save = on_save
        self.trainer = trainer
        self.processor = processor
        self.output_path = Path(output_path) if output_path is not None else None
        self.prefix = prefix
        self.options = options
        self.history: list[tuple[int, dict[str, float]]] = []
        self._evaluated_at: int | None = None

    def on_step_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                    **kwargs: Any) -> None:
        if self.every_n_steps is not None and state.global_step % self.every_n_steps == 0:
            self._evaluate(state, kwargs.get("model"), kwargs.get("processing_class"))

    def on_save(self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any) -> None:
        if self.evaluate_on_save:
            self._evaluate(state, kwargs.get("model"), kwargs.get("processing_class"))

    def _evaluate(self, state: TrainerState, model: Any, processing_class: Any) -> None:
        step = state.global_step
        if self._evaluated_at == step:  # a save at a step just evaluated
            return
        self._evaluated_at = step
        out = self.output_path / f"step-{step}" if self.output_path is not None else None
        result = evaluate(self.tasks, model=model, processor=self.processor or processing_class, output_path=out,
                          **self.options)
        if not result.is_main:  # another process of a data-parallel run: the main one logs
            return
        metrics = logged_metrics(result, self.prefix)
        self.history.append((step, metrics))
        if self.trainer is not None:
            self.trainer.log(dict(metrics))  # on_log of every callback: each report_to tracker
        else:
            state.log_history.append({**metrics, "step": step})
