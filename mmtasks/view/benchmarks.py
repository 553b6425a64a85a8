"""Which benchmark each task of a run belongs to, for the viewer's task list (grouped by benchmark).

A benchmark is its folder: a task whose YAML the task registry knows (the built-in ``tasks/``,
installed packages' folders, ``--include-path``) belongs to the folder that holds it, named by the
folder's card title (its ``README.md`` front matter) when it has one. A task the registry does not
know (a run made elsewhere) falls back to the first group its recorded config names
(results.json's ``configs[task].group``), else to itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mmtasks.config.benchmark_folders import README, read_folder
from mmtasks.config.task_registry import TaskRegistry
from mmtasks.errors import MmtasksError


@dataclass(frozen=True)
class BenchmarkRef:
    key: str
    """The folder's name (or the group's, or the task's)."""
    title: str
    """The card's title, else the key."""


def task_benchmarks(tasks: Sequence[str], configs: Mapping[str, Mapping[str, Any]],
                    include_paths: Sequence[str | Path] = ()) -> dict[str, BenchmarkRef]:
    """Task -> its benchmark (see the module docstring)."""
    try:
        registry: TaskRegistry | None = TaskRegistry.discover(include_paths)
    except MmtasksError:
        registry = None
    known = set(registry.task_names) if registry is not None else set()
    titles: dict[Path, str] = {}
    out: dict[str, BenchmarkRef] = {}
    for task in tasks:
        if registry is not None and task in known:
            folder = _folder(registry, task)
            if folder not in titles:
                titles[folder] = _title(folder)
            out[task] = BenchmarkRef(key=folder.name, title=titles[folder])
            continue
        group = (configs.get(task) or {}).get("group")
        first = group[0] if isinstance(group, list) and group else group
        name = first if isinstance(first, str) and first else task
        out[task] = BenchmarkRef(key=name, title=name)
    return out


def _folder(registry: TaskRegistry, task: str) -> Path:
    """The benchmark folder of ``task``: the task folder's sub-folder that holds its YAML (or the
    task folder itself, for one that is a single benchmark)."""
    path = registry.path_of(task).resolve()
    root = registry.root(task).resolve()
    parts = path.relative_to(root).parts if path.is_relative_to(root) else ()
    return root / parts[0] if len(parts) > 1 else path.parent


def _title(folder: Path) -> str:
    if (folder / README).is_file():
        try:
            return read_folder(folder).card.title
        except (MmtasksError, OSError, UnicodeDecodeError):
            pass
    return folder.name
