"""The three trackers, each through its own library (imported when the run starts it)."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from mmtasks.trackers.records import Table, flat_params

if TYPE_CHECKING:
    from mmtasks.trackers import LogArgs

#: MLflow's limits on a param's key and value (longer values are cut, marked)
_MLFLOW_KEY = 250
_MLFLOW_VALUE = 6000


class Tracker(ABC):
    """One tracker's run."""

    #: the library imported (``pip install 'mmtasks[<name>]'`` installs it)
    module: ClassVar[str]

    @abstractmethod
    def start(self, args: LogArgs, config: dict[str, Any], run_id: str | None) -> str:
        """Start a run (``run_id``: resume that one) with ``config``; returns its id."""

    @abstractmethod
    def update_config(self, config: dict[str, Any]) -> None:
        """Add ``config`` to the run's (values already recorded are kept)."""

    @abstractmethod
    def log(self, metrics: dict[str, float], step: int | None) -> None:
        """Log ``metrics`` (at ``step``; None: the tracker's next)."""

    @abstractmethod
    def table(self, table: Table, step: int | None) -> None:
        """Log one task's samples table (``samples/<task>``)."""

    @abstractmethod
    def artifact(self, folder: Path, name: str) -> None:
        """Log the files of ``folder`` as an artifact named ``name``."""

    @abstractmethod
    def finish(self, ok: bool) -> None:
        """End the run (failed when not ``ok``)."""


class WandbTracker(Tracker):
    module = "wandb"

    def start(self, args: LogArgs, config: dict[str, Any], run_id: str | None) -> str:
        import wandb

        self.wandb = wandb
        settings: dict[str, Any] = {"project": args.project, "config": config}
        for key in ("entity", "name", "group", "mode"):
            if getattr(args, key) is not None:
                settings[key] = getattr(args, key)
        if args.tags:
            settings["tags"] = args.tags
        if args.dir is not None:
            args.dir.mkdir(parents=True, exist_ok=True)
            settings["dir"] = str(args.dir)
        if run_id is not None:
            settings.update(id=run_id, resume="allow")
        self.run = wandb.init(**settings)
        return str(self.run.id)

    def update_config(self, config: dict[str, Any]) -> None:
        self.run.config.update(config, allow_val_change=True)

    def log(self, metrics: dict[str, float], step: int | None) -> None:
        self.run.log(metrics, step=step)
        self.run.summary.update(metrics)

    def table(self, table: Table, step: int | None) -> None:
        wandb = self.wandb
        rows = [[wandb.Image(cell) if i == 1 and cell is not None else cell for i, cell in enumerate(row)]
                for row in table.rows]
        self.run.log({f"samples/{table.task}": wandb.Table(columns=list(table.columns), data=rows)}, step=step)

    def artifact(self, folder: Path, name: str) -> None:
        artifact = self.wandb.Artifact(f"{name}-{self.run.id}", type=f"mmtasks-{name}")
        artifact.add_dir(str(folder))
        self.run.log_artifact(artifact)

    def finish(self, ok: bool) -> None:
        self.run.finish(exit_code=0 if ok else 1)


class MlflowTracker(Tracker):
    module = "mlflow"

    def start(self, args: LogArgs, config: dict[str, Any], run_id: str | None) -> str:
        from mlflow import MlflowClient

        self.client = MlflowClient(tracking_uri=args.tracking_uri)
        if run_id is not None:
            self.run_id = run_id
            self.client.update_run(run_id, status="RUNNING")
        else:
            name = args.experiment or args.project
            experiment = self.client.get_experiment_by_name(name)
            experiment_id = experiment.experiment_id if experiment is not None else self.client.create_experiment(name)
            tags = {f"mmtasks.tag.{t}": "true" for t in args.tags}
            self.run_id = self.client.create_run(experiment_id, run_name=args.name, tags=tags).info.run_id
        self.update_config(config)
        return self.run_id

    def update_config(self, config: dict[str, Any]) -> None:
        from mlflow.entities import Param

        have = set(self.client.get_run(self.run_id).data.params)  # params are write-once
        params = [Param(k[:_MLFLOW_KEY], v if len(v) <= _MLFLOW_VALUE else v[:_MLFLOW_VALUE - 6] + " [...]")
                  for k, v in flat_params(config).items() if k[:_MLFLOW_KEY] not in have]
        for start in range(0, len(params), 100):  # MLflow takes at most 100 params a batch
            self.client.log_batch(self.run_id, params=params[start:start + 100])

    def log(self, metrics: dict[str, float], step: int | None) -> None:
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        rows = [Metric(key, value, now, step or 0) for key, value in metrics.items()]
        for start in range(0, len(rows), 1000):  # MLflow takes at most 1000 metrics a batch
            self.client.log_batch(self.run_id, metrics=rows[start:start + 1000])

    def table(self, table: Table, step: int | None) -> None:
        columns: dict[str, list[Any]] = {name: [row[i] for row in table.rows] for i, name in enumerate(table.columns)}
        if any(image is None for image in columns["image"]):  # MLflow's image column takes images only
            columns["image"] = [image if image is not None else _blank() for image in columns["image"]]
        self.client.log_table(self.run_id, data=columns, artifact_file=f"samples/{table.task}.json")

    def artifact(self, folder: Path, name: str) -> None:
        self.client.log_artifacts(self.run_id, str(folder), name)

    def finish(self, ok: bool) -> None:
        self.client.set_terminated(self.run_id, "FINISHED" if ok else "FAILED")


def _blank() -> Any:
    """A 1x1 white image: the cell of a document with no image file (MLflow's image column takes images only)."""
    from PIL import Image

    return Image.new("RGB", (1, 1), "white")


class TrackioTracker(Tracker):
    module = "trackio"

    def start(self, args: LogArgs, config: dict[str, Any], run_id: str | None) -> str:
        import trackio

        self.trackio = trackio
        name = run_id or args.name
        self.run = trackio.init(project=args.project, name=name, group=args.group, config=config,
                                resume="allow" if run_id is not None else "never", auto_log_cpu=False,
                                auto_log_gpu=False)
        return str(self.run.name)

    def update_config(self, config: dict[str, Any]) -> None:
        # trackio keeps the config given at init; the end's additions (run_card) go in as their own log
        self.run.config.update({k: v for k, v in config.items() if k not in self.run.config})

    def log(self, metrics: dict[str, float], step: int | None) -> None:
        self.trackio.log(metrics, step=step)

    def table(self, table: Table, step: int | None) -> None:
        trackio = self.trackio
        rows = [[trackio.Image(cell) if i == 1 and cell is not None else cell for i, cell in enumerate(row)]
                for row in table.rows]
        trackio.log({f"samples/{table.task}": trackio.Table(columns=list(table.columns), data=rows,
                                                            allow_mixed_types=True)}, step=step)

    def artifact(self, folder: Path, name: str) -> None:
        self.trackio.log_artifact(folder, name=f"{name}-{self.run.name}", type=f"mmtasks-{name}")

    def finish(self, ok: bool) -> None:
        self.trackio.finish()


BACKENDS: dict[str, type[Tracker]] = {"wandb": WandbTracker, "mlflow": MlflowTracker, "trackio": TrackioTracker}
