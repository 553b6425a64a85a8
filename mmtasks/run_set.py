"""``mmtasks run-set SET.yaml``: many models (or checkpoints) x many tasks, with retries, resume
and one leaderboard.

The manifest (safe YAML)::

    output: runs/set1            # relative to the manifest's folder
    tasks: [realbench, mmdu]     # every model runs these (a list or comma-separated)
    options: {data_dir: ~/data, judge: openai:gpt-4o, limit: 100}   # run options for every model
    retries: 2                   # attempts after the first, per model and invocation
    backoff_s: 30                # wait before retry k: backoff_s * 2**(k-1)
    models:
      - name: qwen2-vl-7b        # the run folder OUTPUT/<name>
        model: qwen2-vl-7b
      - name: ckpt-1000
        model: hf:/ckpts/step-1000
        model_args: {dtype: bfloat16}
        options: {batch_size: 4} # this model's own run options, over the set's

Each model is one ordinary run of every task into ``OUTPUT/<name>`` (resumable, through the
response cache, like any run). The set's state is ``OUTPUT/run-set.json``, written after every
attempt: a set started again (after a kill, or to retry what failed) skips the models done and
runs the others, every retry and rerun taking the replies already received from the cache.
After every attempt the status table is printed; at the end the leaderboard of every model
done is built into ``OUTPUT/leaderboard`` and the failures are summarised (exit 1 if any).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mmtasks.errors import ConfigError, MmtasksError, printable

STATE_FILE = "run-set.json"


class SetModel(BaseModel):
    """One model of the set."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
    model: str
    model_args: dict[str, Any] | str = Field(default_factory=dict)
    options: dict[str, Any] = Field(default_factory=dict)


class RunSet(BaseModel):
    """A run-set manifest (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    output: Path
    tasks: list[str] | str
    models: list[SetModel] = Field(min_length=1)
    options: dict[str, Any] = Field(default_factory=dict)
    retries: int = Field(default=2, ge=0, le=20)
    backoff_s: float = Field(default=30.0, ge=0, le=3600)


class ModelState(BaseModel):
    """What the set knows of one model (``run-set.json``)."""

    status: str = "pending"  # pending, done, failed
    attempts: int = 0
    error: str | None = None
    tasks: dict[str, str] = Field(default_factory=dict)


def load_manifest(path: Path) -> RunSet:
    from mmtasks.config.yaml_loader import read_yaml, validate

    data = read_yaml(path)
    manifest = validate(RunSet, data, file=path)
    if len({m.name for m in manifest.models}) != len(manifest.models):
        raise ConfigError("two models have the same name", file=path, field="models")
    if not manifest.output.is_absolute():
        manifest = manifest.model_copy(update={"output": path.parent / manifest.output})
    return manifest


def _options(options: dict[str, Any], where: str) -> dict[str, Any]:
    from mmtasks.api import parse_component_args

    out: dict[str, Any] = {}
    for key, value in options.items():
        name = str(key).replace("-", "_")
        out[name] = parse_component_args(value, f"{where}.{key}") if name.endswith("_args") and name != "log_args" else value
    return out


def _read_state(folder: Path, names: list[str]) -> dict[str, ModelState]:
    path = folder / STATE_FILE
    states: dict[str, ModelState] = {}
    if path.is_file():
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            states = {k: ModelState.model_validate(v) for k, v in raw.get("models", {}).items()}
        except (ValueError, ValidationError) as exc:
            raise ConfigError(f"the set's state cannot be read: {exc}", file=path,
                              hint="delete it to start the set over (the cache keeps every reply)") from None
    return {name: states.get(name, ModelState()) for name in names}


def _write_state(folder: Path, states: dict[str, ModelState]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{STATE_FILE}.tmp"
    tmp.write_text(json.dumps({"models": {k: v.model_dump() for k, v in states.items()}}, indent=1), encoding="utf-8")
    os.replace(tmp, folder / STATE_FILE)


def status_table(states: dict[str, ModelState]) -> str:
    rows = [("model", "status", "attempts", "tasks / error")]
    for name, state in states.items():
        detail = state.error if state.status == "failed" and state.error else ", ".join(f"{t} {s}" for t, s in state.tasks.items())
        rows.append((name, state.status, str(state.attempts), printable(detail or "")[:160]))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    return "\n".join(f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:>{widths[2]}}  {r[3]}".rstrip() for r in rows)


def _task_status(results: dict[str, Any]) -> dict[str, str]:
    out = {}
    for task, counts in results.get("n-samples", {}).items():
        failed = sum(v for k, v in (results.get("problems", {}).get(task) or {}).items() if isinstance(v, int))
        out[task] = f"{counts.get('effective', 0)} docs" + (f", {failed} failures" if failed else "")
    return out


def run_set(path: Path, sleep: Any = time.sleep) -> int:
    from mmtasks.api import run
    from mmtasks.config.run_config import RunConfig

    manifest = load_manifest(path)
    out = manifest.output
    names = [m.name for m in manifest.models]
    states = _read_state(out, names)
    common = _options(manifest.options, "options")
    for entry in manifest.models:
        state = states[entry.name]
        folder = out / entry.name
        if state.status == "done" and (folder / "results.json").is_file():
            continue
        fields = {**common, **_options(entry.options, f"models.{entry.name}.options"), "tasks": manifest.tasks,
                  "model": entry.model, "model_args": _options({"model_args": entry.model_args}, entry.name)["model_args"],
                  "output_path": folder}
        fields.setdefault("progress", False)
        fields.setdefault("run_name", entry.name)  # the set's name for the model: its row on the leaderboard
        for attempt in range(manifest.retries + 1):
            if attempt:
                sleep(manifest.backoff_s * 2 ** (attempt - 1))
            state.attempts += 1
            try:
                config = RunConfig.build(**fields)
                result = run(config)
            except MmtasksError as exc:
                state.status, state.error = "failed", exc.render()
                print(printable(f"run-set: {entry.name}: attempt {state.attempts} failed: {exc.render()}"), flush=True)
            else:
                state.status, state.error, state.tasks = "done", None, _task_status(result)
            _write_state(out, states)
            print(status_table(states), flush=True)
            if state.status == "done":
                break
    done = [out / n for n in names if states[n].status == "done"]
    if done:
        from mmtasks.leaderboard.cli import _build

        include = [Path(p) for p in common.get("include_paths", [])]
        try:
            _build(argparse.Namespace(runs=done, out=out / "leaderboard", no_paper=False, include_path=include))
        except MmtasksError as exc:
            print(printable(f"run-set: no leaderboard: {exc.render()}"))
    failed = {n: s for n, s in states.items() if s.status != "done"}
    if failed:
        print(f"run-set: {len(failed)} of {len(names)} model(s) failed:")
        for name, state in failed.items():
            print(printable(f"  {name} ({state.attempts} attempt(s)): {state.error}"))
        print("run the same command again to retry them (replies already received come from the cache)")
        return 1
    print(f"run-set: all {len(names)} model(s) done; leaderboard: {out / 'leaderboard' / 'index.html'}")
    return 0


def add_run_set_parser(sub: Any) -> Any:
    p = sub.add_parser("run-set", help="run many models x tasks from a manifest, with retries, resume and one leaderboard",
                       description="Run every model of SET.yaml on its tasks (one run folder per model), retrying a "
                                   "failed model with backoff, printing a status table, resuming after a kill (the "
                                   "set's state is OUTPUT/run-set.json), then build one leaderboard and summarise the "
                                   "failures (docs/running-at-scale.md).")
    p.add_argument("manifest", type=Path, metavar="SET.yaml", help="the set: output, tasks, options, retries, models")
    return p


def run_set_command(args: argparse.Namespace) -> int:
    return run_set(args.manifest)
