"""Experiment trackers: ``--log-to wandb,mlflow,trackio`` with ``--log-args``.

Each tracker is driven through its own library (an optional extra: ``mmtasks[wandb]``,
``mmtasks[mlflow]``, ``mmtasks[trackio]``) and gets, from the run's main process:

- the run config (results.json's ``config`` at the start; its ``run_card`` at the end);
- every number of results.json, flat (:func:`mmtasks.trackers.records.metrics_of`): each task's
  metrics with their ``_stderr``, coverage, problems, samples counts, reply statistics, tokens
  where the backend reported them, each group's average, the run's request counts;
- a samples table per task (the first ``samples`` documents: id, first image as a thumbnail,
  prompt, response, parsed answer, target, metrics, failures);
- the run's view (``mmtasks view``) as an artifact, when the run has an output folder.

The tracker run's id is kept in the output folder (``.mmtasks-trackers.json``), so the same
command run again (a resume after an interruption) logs to the same tracker run. A missing
library or a bad ``--log-args`` is one line before any model is built.
"""

from __future__ import annotations

import importlib
import json
import logging
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mmtasks.errors import ConfigError
from mmtasks.trackers.backends import BACKENDS, Tracker
from mmtasks.trackers.records import config_of, metrics_of, table_of, token_totals

log = logging.getLogger("mmtasks")

#: the output folder's record of the tracker runs (name -> id), for a resumed run
TRACKERS_FILE = ".mmtasks-trackers.json"


class LogArgs(BaseModel):
    """``--log-args``: a JSON object or ``k=v,...``; each tracker reads the keys it has."""

    model_config = ConfigDict(extra="forbid")

    project: str = Field(default="mmtasks", min_length=1)
    """W&B and Trackio project; MLflow experiment unless ``experiment`` is given."""
    name: str | None = None
    """The tracker run's display name (default: the run's ``--run-name``, else the tracker's own)."""
    entity: str | None = None
    """W&B entity (team or user)."""
    group: str | None = None
    """W&B and Trackio run group."""
    tags: list[str] = Field(default_factory=list)
    mode: str | None = None
    """W&B mode: ``online``, ``offline`` (or ``$WANDB_MODE``)."""
    dir: Path | None = None
    """W&B's local folder."""
    tracking_uri: str | None = None
    """MLflow tracking URI (default: ``$MLFLOW_TRACKING_URI``, else MLflow's default)."""
    experiment: str | None = None
    """MLflow experiment (default: ``project``)."""
    samples: int = Field(default=100, ge=0)
    """Documents per task in the samples table (0: no table)."""
    view: bool = True
    """Log the run's view site as an artifact (runs with an output folder)."""


def parse_log_to(value: str | Sequence[str] | None) -> list[str]:
    names = [n.strip() for n in (value.split(",") if isinstance(value, str) else value or []) if n.strip()]
    for name in names:
        if name not in BACKENDS:
            raise ConfigError(f"unknown tracker {name!r}", field="--log-to", hint="one or more of: " + ", ".join(BACKENDS))
    return list(dict.fromkeys(names))


def parse_log_args(value: str | Mapping[str, Any] | None) -> LogArgs:
    """``--log-args``: a JSON object (``{"project": "p", "tags": ["a"]}``) or ``k=v,...``."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("{"):
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"not a JSON object: {exc.msg} (column {exc.colno})", field="--log-args") from None
        else:
            from mmtasks.models.base import parse_args_string

            value = parse_args_string(text)
    if value is not None and not isinstance(value, Mapping):
        raise ConfigError(f"expected a JSON object or k=v,... (got {type(value).__name__})", field="--log-args")
    try:
        return LogArgs.model_validate(dict(value or {}))
    except ValidationError as exc:
        err = exc.errors()[0]
        name = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            raise ConfigError(f"unknown key {name!r}", field="--log-args",
                              hint="keys: " + ", ".join(LogArgs.model_fields)) from None
        raise ConfigError(f"{name}: {err['msg']}", field="--log-args") from None


def check_installed(names: Iterable[str]) -> None:
    """Import each tracker's library now: a missing one is one line naming the extra."""
    for name in names:
        backend = BACKENDS[name]
        try:
            importlib.import_module(backend.module)
        except ImportError as exc:
            raise ConfigError(f"--log-to {name} needs the {backend.module} package ({exc})", field="--log-to",
                              hint=f"pip install 'mmtasks[{name}]'") from None


class Trackers:
    """The trackers of one run (its main process): started once, logged to, finished."""

    def __init__(self, names: Sequence[str], args: LogArgs, folder: Path | None, run_name: str | None = None) -> None:
        self.args = args if args.name or run_name is None else args.model_copy(update={"name": run_name})
        self.folder = folder
        self.trackers: dict[str, Tracker] = {name: BACKENDS[name]() for name in names}
        self.started = False

    def _ids(self) -> dict[str, str]:
        if self.folder is None:
            return {}
        try:
            data = json.loads((self.folder / TRACKERS_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(data, dict) else {}

    def start(self, config: Mapping[str, Any]) -> None:
        """Start (or, with an id kept in the output folder, resume) each tracker's run."""
        ids = self._ids()
        started: dict[str, Tracker] = {}
        for name, tracker in self.trackers.items():
            try:
                ids[name] = tracker.start(self.args, dict(config), ids.get(name))
                started[name] = tracker
            except Exception as exc:  # noqa: BLE001 - each library's own errors (no login, a bad URI): one line
                self.trackers = started  # those already started end, as failed
                self.finish(ok=False)
                raise ConfigError(f"--log-to {name}: the tracker did not start ({type(exc).__name__}: "
                                  f"{str(exc).splitlines()[0][:300] if str(exc) else ''})", field="--log-to",
                                  hint="check the tracker's login and --log-args (docs/users/trackers.md)") from None
        self.started = True
        if self.folder is not None:
            from mmtasks.results.writer import atomic_write_text

            atomic_write_text(self.folder / TRACKERS_FILE, json.dumps(ids, indent=1, sort_keys=True) + "\n")

    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        for tracker in self.trackers.values():
            tracker.log(dict(metrics), step)

    def log_run(self, results: Mapping[str, Any], samples: Mapping[str, Iterable[Mapping[str, Any]]],
                run_folder: Path | None, step: int | None = None) -> None:
        """Everything of a finished run: config, metrics, samples tables, the view."""
        per_task = {task: list(rows) for task, rows in samples.items()}
        tokens = {task: totals for task, rows in per_task.items() if (totals := token_totals(rows))}
        metrics = metrics_of(results, tokens)
        config = config_of(results)
        tables = [table_of(task, rows, self.args.samples) for task, rows in per_task.items()] if self.args.samples else []
        with tempfile.TemporaryDirectory(prefix="mmtasks-view-") as tmp:
            view = self._view(run_folder, Path(tmp) / "view") if self.args.view else None
            for name, tracker in self.trackers.items():
                try:
                    tracker.update_config(config)
                    tracker.log(metrics, step)
                    for table in tables:
                        tracker.table(table, step)
                    if view is not None:
                        tracker.artifact(view, "view")
                except Exception as exc:  # noqa: BLE001 - results.json is written: a tracker's failure is a warning
                    log.warning("tracker %s: logging the results failed (%s: %s); results.json has them",
                                name, type(exc).__name__, exc)

    def _view(self, run_folder: Path | None, out: Path) -> Path | None:
        if run_folder is None or not (run_folder / "samples").is_dir():
            return None
        from mmtasks.view.records import load_view_run
        from mmtasks.view.site import build_view

        build_view([load_view_run(run_folder)], out)
        return out

    def finish(self, ok: bool) -> None:
        for name, tracker in self.trackers.items():
            try:
                tracker.finish(ok)
            except Exception as exc:  # noqa: BLE001 - one tracker's failure to close must not hide the run's outcome
                log.warning("tracker %s did not finish cleanly: %s: %s", name, type(exc).__name__, exc)
