"""``mmtasks tasks`` and ``mmtasks models``."""

from __future__ import annotations

import argparse

from mmtasks.config.task_registry import TaskRegistry
from mmtasks.models.base import backend_names
from mmtasks.models.presets import load_presets


def list_tasks(args: argparse.Namespace) -> int:
    reg = TaskRegistry.discover(args.include_path)
    print("Tasks:")
    for name in reg.task_names:
        print(f"  {name}")
    print("Groups:")
    for group, members in reg.groups.items():
        print(f"  {group}: {', '.join(members)}")
    for path, message in reg.broken_files.items():
        print(f"warning: skipped {message}")
    return 0


def list_models(args: argparse.Namespace) -> int:
    print("Backends: " + ", ".join(backend_names()))
    print("Presets:")
    for name, preset in load_presets().items():
        print(f"  {name:24s} {preset.backend}:{preset.weights}  {preset.description}")
    return 0
