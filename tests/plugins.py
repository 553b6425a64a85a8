"""Importing a built-in benchmark's plugin file the way a task loads it (for unit tests of its code)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from mmtasks import registry

TASKS = Path(__file__).resolve().parents[1] / "tasks"


def plugin(bench: str, file: str | None = None) -> tuple[ModuleType, Path]:
    """The module of ``tasks/<bench>/<file>`` (default ``<bench>.py``) and its resolved
    path (pass it as ``plugins=[path]`` to see its registrations)."""
    path = registry.load_plugin_file(TASKS / bench / (file or f"{bench}.py"), roots=[TASKS / bench])
    return registry._PLUGIN_MODULES[path], path
