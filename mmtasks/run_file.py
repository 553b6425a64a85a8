"""Run files: ``mmtasks run --config run.yaml`` (every run flag, by its option name), and a
results.json, whose recorded ``config`` is itself a run file (``mmtasks run --config
runs/x/results.json`` runs the same evaluation again).

A run file is YAML (or JSON) mapping option names to values: the :class:`RunConfig` field names
(``model_args``, ``gen_kwargs`` ...) or the flags' names (``model-args``); ``*_args`` take a
mapping or the command line's ``k=v,...`` text. Flags given on the command line win over the
file. An unknown option is one line naming the file and the option.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mmtasks.config.run_config import RunConfig
from mmtasks.errors import ConfigError

#: results.json config keys a run records beside RunConfig.public() (specs, displays, version, slices)
RECORDED_ONLY = {"model_spec", "judge_spec", "matcher_spec", "notetaker_spec", "mmtasks_version", "shard_of", "shard"}


def recorded_fields(config: dict[str, Any]) -> dict[str, Any]:
    """The :class:`RunConfig` fields a results.json's ``config`` records (its tasks included)."""
    given = {k: v for k, v in config.items() if k not in RECORDED_ONLY}
    given.update(given.pop("video", None) or {})
    if given.get("strategy") is None:
        given.pop("strategy", None)
    matcher = config.get("matcher_spec")
    if isinstance(matcher, dict):
        given["matcher"] = matcher["backend"] + (f":{matcher['name']}" if matcher.get("name") else "")
    if given.get("run_name") is None:
        given.pop("run_name", None)
    if not given.get("tasks") and isinstance(config.get("shard_of"), dict):
        given["tasks"] = config["shard_of"].get("task_names")
    return given


def read_run_file(path: Path) -> dict[str, Any]:
    """The options a run file (or a results.json) gives, as RunConfig field names."""
    from mmtasks.config.yaml_loader import parse_yaml_text

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the run file: {exc.strerror or exc}", file=path, field="--config") from None
    data = parse_yaml_text(text, file=path)  # safe YAML; JSON is YAML
    if not isinstance(data, dict):
        raise ConfigError("a run file is a mapping of option names to values", file=path, field="--config")
    if isinstance(data.get("config"), dict) and "results" in data:  # a results.json: its recorded config
        fields = recorded_fields(data["config"])
        if not fields.get("tasks"):
            fields["tasks"] = list(data.get("configs") or {})
        return fields
    return {str(k).replace("-", "_"): v for k, v in data.items()}


def with_run_file(path: Path, from_file: dict[str, Any], from_flags: dict[str, Any], defaults: dict[str, Any]) -> RunConfig:
    """The run: the flags given on the command line (those that differ from the defaults) over
    the file's options over the defaults. An error names the file."""
    from mmtasks.api import parse_component_args

    fields = dict(defaults)
    for key, value in from_file.items():
        if key.endswith("_args") and key != "log_args":
            value = parse_component_args(value, f"{key} in {path}")
        fields[key] = value
    fields.update({k: v for k, v in from_flags.items() if v != defaults.get(k)})
    try:
        return RunConfig.build(**fields)
    except ConfigError as exc:
        if exc.file is None:
            exc.file = str(path)
            exc.args = (exc.render(),)
        raise


__all__ = ["json", "read_run_file", "recorded_fields", "with_run_file"]
